package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// faceEnv is the environment of a face under benchmark: the scripted model
// at url, the local sandbox, no approvals, a private home.
func faceEnv(b *testing.B, url string) []string {
	home := b.TempDir()
	return append(cleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"ZERO_MODEL="+llmtest.ModelName, "OPENAI_BASE_URL="+url, "ZERO_SANDBOX=local", "ZERO_APPROVAL=auto")
}

// percentile of sorted durations, in milliseconds.
func percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	i := min(len(d)-1, int(float64(len(d))*p))
	return float64(d[i]) / float64(time.Millisecond)
}

// BenchmarkInitialize measures each face from process start to the answer
// to `initialize` on stdout: the time an editor waits before it can open
// a session.
func BenchmarkInitialize(b *testing.B) {
	bin := buildZero(b)
	ws := b.TempDir()
	faces := []struct {
		name   string
		wire   framing
		params map[string]any
	}{
		{"acp", lines, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}},
		{"mcp", lines, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}},
		{"lsp", frames, map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}},
	}
	for _, f := range faces {
		b.Run(f.name, func(b *testing.B) {
			env := faceEnv(b, "http://127.0.0.1:9/v1")
			var times []time.Duration
			for b.Loop() {
				cmd := exec.Command(bin, f.name, "--workspace", ws)
				cmd.Env = env
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				rpc(b, in, bufio.NewReader(out), f.wire, 1, "initialize", f.params)
				times = append(times, time.Since(start))
				in.Close()
				cmd.Wait()
			}
			slices.Sort(times)
			b.ReportMetric(percentile(times, 0.5), "p50-ms")
			b.ReportMetric(percentile(times, 0.9), "p90-ms")
		})
	}
}

// acpClient speaks raw ACP lines to a zero acp process.
type acpClient struct {
	in    io.WriteCloser
	mu    sync.Mutex
	id    int
	res   map[int]chan json.RawMessage
	notes []string // session/update notifications, raw
}

func startACP(b *testing.B, bin string, env []string, ws string) (*acpClient, *exec.Cmd) {
	cmd := exec.Command(bin, "acp", "--workspace", ws)
	cmd.Env = env
	return attachACP(b, cmd), cmd
}

// attachACP starts cmd, a zero acp process, and reads its answers.
func attachACP(tb testing.TB, cmd *exec.Cmd) *acpClient {
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &acpClient{in: in, res: map[int]chan json.RawMessage{}}
	go func() { // owned by the process: ends when its stdout closes
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.Method != "" {
				c.mu.Lock()
				c.notes = append(c.notes, sc.Text())
				c.mu.Unlock()
				if m.ID != nil { // a request from the agent: refuse it, so nothing waits
					line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "error": map[string]any{"code": -32601, "message": "not supported by this client"}})
					c.mu.Lock()
					c.in.Write(append(line, '\n'))
					c.mu.Unlock()
				}
				continue
			}
			if m.ID == nil {
				continue
			}
			c.mu.Lock()
			ch := c.res[*m.ID]
			delete(c.res, *m.ID)
			c.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- m.Error
				} else {
					ch <- m.Result
				}
			}
		}
	}()
	return c
}

// updates are the notifications and requests received so far.
func (c *acpClient) updates() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.notes, "\n")
}

func (c *acpClient) call(method string, params any) json.RawMessage {
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan json.RawMessage, 1)
	c.res[id] = ch
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.in.Write(append(line, '\n'))
	c.mu.Unlock()
	return <-ch
}

// vmHWM is the peak resident memory of a process, in MiB.
func vmHWM(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkConcurrentSessions runs 50 ACP sessions at once in one zero
// acp process against the scripted model, which takes modelDelay before
// each reply as a real one would; each prompt is two turns (a shell
// command, then the answer). If sessions waited for each other, the runs
// would take up to 50 times as long as one alone; the benchmark reports
// how long they took against a session running alone (x-solo), turns per
// second, and the process's peak memory.
func BenchmarkConcurrentSessions(b *testing.B) {
	const sessions, prompts = 50, 2
	const modelDelay = 100 * time.Millisecond
	bin := buildZero(b)
	script := func(tag string, n int) []llmtest.Reply {
		var out []llmtest.Reply
		for range n {
			out = append(out,
				llmtest.Reply{Match: tag, FirstDelay: llmtest.Duration(modelDelay), Content: `{"thoughts":["run it"],"headline":"Echo","tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"echo hi"}}`},
				llmtest.Reply{Match: tag, FirstDelay: llmtest.Duration(modelDelay), Content: `{"thoughts":["done"],"headline":"Answer","tool_name":"response","tool_args":{"text":"done"}}`})
		}
		return out
	}
	for b.Loop() {
		var replies []llmtest.Reply
		for s := range sessions {
			replies = append(replies, script(fmt.Sprintf("[S%02d]", s), prompts)...)
		}
		// One more session, alone first, for the baseline (its second
		// prompt: the first one also starts its shell).
		replies = append(replies, script("[solo]", 2)...)
		srv := llmtest.NewServer(b, replies...)
		ws := b.TempDir()
		c, cmd := startACP(b, bin, faceEnv(b, srv.URL()), ws)
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		newSession := func() string {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			json.Unmarshal(c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &r)
			if r.SessionID == "" {
				b.Fatal("session/new gave no id")
			}
			return r.SessionID
		}
		prompt := func(id, text string) time.Duration {
			start := time.Now()
			res := c.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
			if !strings.Contains(string(res), "end_turn") {
				b.Errorf("prompt %s: %s", text, res)
			}
			return time.Since(start)
		}
		soloID := newSession()
		prompt(soloID, "[solo] echo")
		solo := prompt(soloID, "[solo] echo")
		ids := make([]string, sessions)
		for i := range ids {
			ids[i] = newSession()
		}
		var mu sync.Mutex
		var times, later []time.Duration // all runs; runs after the first (the shell is up)
		var wg sync.WaitGroup
		start := time.Now()
		for i, id := range ids {
			wg.Go(func() {
				for n := range prompts {
					d := prompt(id, fmt.Sprintf("[S%02d] echo", i))
					mu.Lock()
					times = append(times, d)
					if n > 0 {
						later = append(later, d)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		rss := vmHWM(cmd.Process.Pid)
		c.in.Close()
		cmd.Wait()
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(float64(cpu)/float64(time.Millisecond), "zero-cpu-ms")
		slices.Sort(times)
		slices.Sort(later)
		b.ReportMetric(percentile(later, 1), "max-later-run-ms")
		b.ReportMetric(float64(sessions*prompts*2)/elapsed.Seconds(), "turns/s")
		b.ReportMetric(float64(solo)/float64(time.Millisecond), "solo-run-ms")
		b.ReportMetric(percentile(times, 0.5), "p50-run-ms")
		b.ReportMetric(percentile(times, 1), "max-run-ms")
		b.ReportMetric(float64(times[len(times)-1])/float64(solo), "x-solo")
		b.ReportMetric(rss, "peak-RSS-MiB")
	}
}

// BenchmarkShutdown50DockerSessions measures how long zero acp takes to
// exit once the editor closes stdin, with 50 sessions whose shells run in
// the workspace's container (every other one with a background job still
// running): the time an editor waits when it quits. The target is < 2 s.
func BenchmarkShutdown50DockerSessions(b *testing.B) {
	const sessions = 50
	image := dockertest.Image(b)
	bin := buildZero(b)
	for b.Loop() {
		var replies []llmtest.Reply
		for s := range sessions {
			code := "echo hi"
			if s%2 == 0 {
				code = "sleep 1000 >/dev/null 2>&1 & echo hi"
			}
			tag := fmt.Sprintf("[S%02d]", s)
			replies = append(replies,
				llmtest.Reply{Match: tag, Content: `{"thoughts":["run"],"tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"` + code + `"}}`},
				llmtest.Reply{Match: tag, Content: `{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"done"}}`})
		}
		srv := llmtest.NewServer(b, replies...)
		ws, cfg := b.TempDir(), b.TempDir()
		mustWrite(b, filepath.Join(cfg, "zero", "config.yaml"), "sandbox:\n  backend: docker\n  image: "+image+"\n  network: none\n")
		env := append(faceEnv(b, srv.URL()), "XDG_CONFIG_HOME="+cfg, "ZERO_SANDBOX=")
		c, cmd := startACP(b, bin, env, ws)
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		var wg sync.WaitGroup
		for s := range sessions {
			wg.Go(func() {
				var r struct {
					SessionID string `json:"sessionId"`
				}
				json.Unmarshal(c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &r)
				res := c.call("session/prompt", map[string]any{"sessionId": r.SessionID,
					"prompt": []any{map[string]any{"type": "text", "text": fmt.Sprintf("[S%02d] go", s)}}})
				if !strings.Contains(string(res), "end_turn") {
					b.Errorf("prompt: %s", res)
				}
			})
		}
		wg.Wait()
		start := time.Now()
		c.in.Close()
		cmd.Wait()
		b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond), "exit-ms")
		rm := exec.Command(bin, "sandbox", "rm", "--workspace", ws)
		rm.Env = env
		rm.Run()
	}
}
