package security

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// peakRSS follows a running process's peak resident memory (VmHWM, which
// starts afresh at exec: rusage would count the test process's own memory,
// shared with the child between fork and exec). Call the returned func
// once the process ended: it fails the test when the last peak seen is
// unknown or over limit bytes, for the input named what.
func peakRSS(t *testing.T, pid int) func(limit int64, what string) {
	t.Helper()
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				return
			}
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					if kb*1024 > peak.Load() {
						peak.Store(kb * 1024)
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func(limit int64, what string) {
		t.Helper()
		close(stop)
		<-done
		rss := peak.Load()
		t.Logf("zero's peak memory: %d MiB", rss>>20)
		if rss == 0 || rss > limit {
			t.Errorf("zero's peak memory was %d MiB for %s", rss>>20, what)
		}
	}
}

// A model server that sends headers and then only keep-alive whitespace
// ends the run with the idle deadline's error, instead of hanging forever.
func TestTricklingModel(t *testing.T) {
	t.Parallel()
	trickle := llmtest.Reply{FirstDelay: llmtest.Duration(10 * time.Minute), Trickle: " ", TrickleEvery: llmtest.Duration(50 * time.Millisecond), Content: "{}"}
	b := newBox(t, trickle, trickle, trickle)
	// The header deadline is out of reach (a loaded machine can take seconds
	// to answer at all); the idle one is the subject.
	b.userConfig("models:\n  chat:\n    timeouts: {header: 120, idle: 2, total: 600}\nlimits:\n  critical_retries: 0\n")
	out, stderr, err := b.run(nil, "run", "--json", "--workspace", b.ws, "hi")
	if err == nil {
		t.Fatalf("the run should fail:\n%s", out)
	}
	// The idle deadline ended it, not the header or the total one, which
	// say so in other words.
	if !strings.Contains(out, "no data from the model for 2s") {
		t.Errorf("the error should name the idle deadline:\n%s\n%s", out, stderr)
	}
}

// One output line of hundreds of megabytes, with no newline, keeps zero's
// memory bounded (it took 1.5 GB for 400 MB).
func TestHugeOutputLine(t *testing.T) {
	t.Parallel()
	b := newBox(t, shell("head -c 268435456 /dev/zero | tr '\\0' a; echo; echo line-done"), answer("done"))
	ctx := t.Context() // no deadline: how long it takes on a loaded machine decides nothing (go test -timeout guards a hang)
	c := b.cmd(ctx, []string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "flood")
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t, c.Process.Pid)
	if err := c.Wait(); err != nil {
		t.Fatalf("zero run: %v", err)
	}
	if !strings.Contains(outputs(out.String()), "line-done") {
		t.Fatalf("the command did not finish:\n%.2000s", out.String())
	}
	peak(200<<20, "a 256 MiB line")
}

// A user message far larger than the model's context is refused at once,
// without reaching the model and without gigabytes of tokenizing (50 MB
// took 3.5 GB and 20 s).
func TestHugeUserMessage(t *testing.T) {
	t.Parallel()
	b := newBox(t, answer("never"))
	s := b.acp([]string{"ZERO_APPROVAL=auto"})
	peak := peakRSS(t, s.proc.Process.Pid)
	id := s.newSession(t, b.ws)
	ctx := t.Context() // no deadline: how long it takes on a loaded machine decides nothing (go test -timeout guards a hang)
	msg := strings.Repeat("lorem ipsum ", 50<<20/12)
	res, err := s.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(msg)}})
	if err != nil {
		t.Fatalf("session/prompt: %v\n%s", err, s.stderr)
	}
	if res.StopReason != sdk.StopReasonEndTurn || !strings.Contains(s.client.text(), "too large for the model's context") {
		t.Errorf("stop %q; the editor was shown:\n%.2000s", res.StopReason, s.client.text())
	}
	if n := len(b.model.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
	s.stdin.Close()
	_ = s.proc.Wait()
	peak(1<<30, "a 50 MB message")
}

// An ACP line over the documented 64 MiB is answered with an error, and
// the connection goes on; one of 20 MiB (over the SDK's 10 MiB) is read.
func TestHugeACPFrame(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	ctx := t.Context() // no deadline: how long it takes on a loaded machine decides nothing (go test -timeout guards a hang)
	c := b.cmd(ctx, nil, "acp")
	stdin, _ := c.StdinPipe()
	stdout, _ := c.StdoutPipe()
	stderr := &proctest.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = c.Wait() }()
	replies := make(chan map[string]any, 16)
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(replies)
				return
			}
			var m map[string]any
			if json.Unmarshal(line, &m) == nil {
				replies <- m
			}
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v\n%s", err, stderr)
		}
	}
	want := func(id float64) map[string]any {
		t.Helper()
		for {
			select {
			case m, ok := <-replies:
				if !ok {
					t.Fatalf("zero closed the connection waiting for id %v:\n%s", id, stderr)
				}
				if m["id"] == id {
					return m
				}
			case <-ctx.Done():
				t.Fatalf("no answer to id %v", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	want(1)
	pad := func(n int) string { return strings.Repeat("a", n) }
	send(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"_meta":{"pad":"` + pad(80<<20) + `"}}}`)
	if m := want(2); m["error"] == nil {
		t.Errorf("an 80 MiB line should get an error: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"session/list","params":{"_meta":{"pad":"` + pad(20<<20) + `"}}}`)
	if m := want(3); m["result"] == nil {
		t.Errorf("a 20 MiB line should be read: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"session/list","params":{}}`)
	if m := want(4); m["result"] == nil {
		t.Errorf("the connection should go on: %v", m)
	}
}

// After kill -9 of zero, the commands it started in the workspace's
// container do not run forever: the next zero on that container kills them.
func TestOrphansAfterKill9(t *testing.T) {
	t.Parallel()
	arg := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1e9)
	b := dockerBox(t, shell("sleep "+arg+" >/dev/null 2>&1 & echo started"), answer("left it running"), shell("echo second"), answer("done"))
	first := b.acp([]string{"ZERO_APPROVAL=auto"})
	first.prompt(t, first.newSession(t, b.ws), "start")
	pid, ok := proctest.FindByArg(arg, 20*time.Second)
	if !ok {
		t.Fatalf("the sleep never started:\n%s", first.client.text())
	}
	if err := first.proc.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = first.proc.Wait()
	time.Sleep(500 * time.Millisecond)
	if proctest.Gone(pid) {
		t.Fatal("the sleep died with zero: nothing to test")
	}
	second := b.acp([]string{"ZERO_APPROVAL=auto"})
	second.prompt(t, second.newSession(t, b.ws), "again")
	if !proctest.WaitGone(pid, 20*time.Second) {
		t.Error("the dead zero's command still runs in the container")
	}
}
