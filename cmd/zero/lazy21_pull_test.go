package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/llm/llmtest"
)

// pullEngine is a Docker engine on a unix socket that has no container and
// no image; what it is asked is counted, and a pull streams progress, then
// waits for release and fails, or succeeds when succeed is set (the test
// stops there: nothing after the pull is faked, and creating the container
// fails).
type pullEngine struct {
	host    string // for DOCKER_HOST
	release chan struct{}
	pulled  chan struct{} // closed by the first pull
	// registry answers distribution inspections (sandbox.backend auto):
	// true as if the registry had the image, false as if offline; mute
	// (set before use) never answers, as a registry too slow to say.
	registry bool
	mute     bool

	mu       sync.Mutex
	succeed  bool
	pulls    int
	dropped  int // pulls whose client went away before the end
	creates  int
	inspects int // of the registry
}

func newPullEngine(t *testing.T, registry bool) *pullEngine {
	t.Helper()
	dir, err := os.MkdirTemp("", "zp") // a socket path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &pullEngine{host: "unix://" + sock, release: make(chan struct{}), pulled: make(chan struct{}), registry: registry}
	version := regexp.MustCompile(`^/v[0-9.]+`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := version.ReplaceAllString(r.URL.Path, "")
		w.Header().Set("Content-Type", "application/json")
		notFound := func(what string) {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"No such %s"}`, what)
		}
		switch {
		case path == "/_ping":
			w.Header().Set("Api-Version", "1.43")
			w.Write([]byte("OK"))
		case path == "/containers/json":
			w.Write([]byte("[]"))
		case strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/json"):
			notFound("container")
		case path == "/containers/create":
			f.mu.Lock()
			f.creates++
			f.mu.Unlock()
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"not in this fake"}`))
		case strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/json"):
			notFound("image")
		case strings.HasPrefix(path, "/distribution/"):
			f.mu.Lock()
			f.inspects++
			f.mu.Unlock()
			if f.mute {
				<-r.Context().Done()
				return
			}
			if !f.registry {
				w.WriteHeader(http.StatusInternalServerError)
				w.Write([]byte(`{"message":"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host"}`))
				return
			}
			w.Write([]byte(`{"Descriptor":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1},"Platforms":[]}`))
		case path == "/images/create":
			f.mu.Lock()
			if f.pulls++; f.pulls == 1 {
				close(f.pulled)
			}
			f.mu.Unlock()
			w.WriteHeader(http.StatusOK)
			for _, line := range []string{
				`{"status":"Pulling from kalilinux/kali-rolling","id":"latest"}`,
				`{"status":"Pulling fs layer","progressDetail":{},"id":"l1"}`,
				`{"status":"Downloading","progressDetail":{"current":12000000,"total":48000000},"id":"l1"}`,
			} {
				w.Write([]byte(line + "\n"))
			}
			w.(http.Flusher).Flush()
			select {
			case <-f.release:
			case <-r.Context().Done():
				f.mu.Lock()
				f.dropped++
				f.mu.Unlock()
				return
			}
			f.mu.Lock()
			succeed := f.succeed
			f.mu.Unlock()
			if succeed {
				for _, line := range []string{
					`{"status":"Download complete","progressDetail":{},"id":"l1"}`,
					`{"status":"Extracting","progressDetail":{"current":48000000,"total":48000000},"id":"l1"}`,
					`{"status":"Pull complete","progressDetail":{},"id":"l1"}`,
					`{"status":"Digest: sha256:0000000000000000000000000000000000000000000000000000000000000000"}`,
					`{"status":"Status: Downloaded newer image for kalilinux/kali-rolling:latest"}`,
				} {
					w.Write([]byte(line + "\n"))
				}
				return
			}
			w.Write([]byte(`{"errorDetail":{"message":"net/http: TLS handshake timeout"},"error":"net/http: TLS handshake timeout"}` + "\n"))
		default:
			notFound("endpoint " + path)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

// succeeding makes the pulls succeed once released.
func (f *pullEngine) succeeding() *pullEngine {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.succeed = true
	return f
}

func (f *pullEngine) counts() (pulls, creates, inspects int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pulls, f.creates, f.inspects
}

// acpPeer is an ACP client whose notifications arrive on a channel, so a
// test can wait for one while a request is in flight.
type acpPeer struct {
	t     *testing.T
	mu    sync.Mutex
	in    interface{ Write([]byte) (int, error) }
	id    int
	res   map[int]chan json.RawMessage
	notes chan string
}

func startACPPeer(t *testing.T, cmd *exec.Cmd) *acpPeer {
	t.Helper()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	c := &acpPeer{t: t, in: in, res: map[int]chan json.RawMessage{}, notes: make(chan string, 1000)}
	go func() { // ends with the process's stdout
		defer close(c.notes)
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
				c.notes <- sc.Text()
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
				ch <- append(m.Result, m.Error...)
			}
		}
	}()
	return c
}

// send makes a request and returns the channel of its answer.
func (c *acpPeer) send(method string, params any) chan json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	ch := make(chan json.RawMessage, 1)
	c.res[c.id] = ch
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	c.in.Write(append(line, '\n'))
	return ch
}

// sent are the notifications received and not read yet: after the answer
// to a request, all those sent before it.
func (c *acpPeer) sent() []string {
	var out []string
	for {
		select {
		case n, ok := <-c.notes:
			if !ok {
				return out
			}
			out = append(out, n)
		default:
			return out
		}
	}
}

// until reads notifications until one contains want, returning all read.
func (c *acpPeer) until(want string) []string {
	c.t.Helper()
	var seen []string
	for n := range c.notes {
		seen = append(seen, n)
		if strings.Contains(n, want) {
			return seen
		}
	}
	c.t.Fatalf("zero acp ended before sending %q; it sent:\n%s", want, strings.Join(seen, "\n"))
	return nil
}

// ACP session/new with a Docker engine that lacks the image asks for no
// pull and creates no container: the first command does, and its tool call
// shows the pull's progress; an image that cannot be had fails that
// command with what to do, and the run goes on to the model's answer.
func TestACPSessionPullsNothingUntilTheFirstCommand(t *testing.T) {
	t.Parallel()
	engine := newPullEngine(t, false)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["look"], "headline": "Looking", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "ls"}}`},
		llmtest.Reply{Content: `{"thoughts": ["no sandbox"], "tool_name": "response", "tool_args": {"text": "the sandbox image is missing"}}`},
	)
	ws := t.TempDir()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(),
		"ZERO_SANDBOX=docker", "DOCKER_HOST=" + engine.host}, "acp", "--workspace", ws)
	c := startACPPeer(t, cmd)
	<-c.send("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	var answer json.RawMessage
	select {
	case answer = <-c.send("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}):
	case <-engine.pulled:
		t.Fatal("session/new asked the engine to pull the sandbox image")
	}
	if err := json.Unmarshal(answer, &s); err != nil || s.SessionID == "" {
		t.Fatalf("session/new = %s: %v", answer, err)
	}
	if pulls, creates, _ := engine.counts(); pulls != 0 || creates != 0 {
		t.Fatalf("session/new asked the engine for %d pulls and %d containers, want none before a command", pulls, creates)
	}
	prompt := c.send("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "look"}}})
	// The command's tool call shows the pull while it goes on.
	seen := c.until("12.0 MB of 48.0 MB")
	last := seen[len(seen)-1]
	if !strings.Contains(last, "tool_call_update") || !strings.Contains(last, "pulling the sandbox image kalilinux/kali-rolling: 0 of 1 layers") {
		t.Errorf("the pull's progress should update the waiting tool call:\n%s", last)
	}
	if pulls, _, _ := engine.counts(); pulls != 1 {
		t.Errorf("%d pulls, want 1", pulls)
	}
	close(engine.release)
	res := <-prompt
	rest := strings.Join(c.sent(), "\n")
	if !strings.Contains(string(res), "end_turn") {
		t.Errorf("session/prompt = %s\n%s", res, rest)
	}
	for _, want := range []string{"cannot pull image kalilinux/kali-rolling: net/http: TLS handshake timeout", "docker pull kalilinux/kali-rolling", "--image IMAGE", "--sandbox local"} {
		if !strings.Contains(rest, want) {
			t.Errorf("the failed command does not say %q:\n%s", want, rest)
		}
	}
}

// sandbox.backend auto with an engine that lacks the image asks its
// registry (no pull): Docker when the image can be had, the local backend
// with a warning saying why when it cannot, so the first command does not
// fail for an image that nobody can pull.
func TestAutoSandboxAsksTheRegistryNotForAPull(t *testing.T) {
	for _, registry := range []string{"has it", "offline", "mute"} {
		t.Run("registry "+registry, func(t *testing.T) {
			engine := newPullEngine(t, registry == "has it")
			engine.mute = registry == "mute"
			t.Setenv("DOCKER_HOST", engine.host)
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			a, err := app.NewAppAt(t.TempDir(), nil, map[string]string{"sandbox.backend": "auto"}, slog.New(slog.DiscardHandler), nil)
			if err != nil {
				t.Fatal(err)
			}
			// A registry that never answers: the question ends (the wait is
			// short here; the outcome is the same at any length).
			a.RegistryWait = 50 * time.Millisecond
			b, err := a.ChooseBackend(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			pulls, creates, inspects := engine.counts()
			if pulls != 0 || creates != 0 || inspects != 1 {
				t.Errorf("choosing the backend: %d pulls, %d containers, %d registry questions; want 0, 0, 1", pulls, creates, inspects)
			}
			want := "docker"
			if registry == "offline" {
				want = "local"
			}
			if b.Name() != want {
				t.Errorf("backend %s, want %s", b.Name(), want)
			}
			warned := strings.Join(a.Warn.Early, "\n")
			if registry == "offline" && !strings.Contains(warned, "the Docker engine has no image kalilinux/kali-rolling and cannot pull it") {
				t.Errorf("the fallback is not explained: %q", warned)
			}
			if registry == "mute" && (!strings.Contains(warned, "using Docker: the first command pulls it") || strings.Contains(warned, "no Docker engine answered")) {
				t.Errorf("a slow registry is not said as such: %q", warned)
			}
		})
	}
}
