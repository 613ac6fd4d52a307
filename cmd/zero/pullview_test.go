package main

import (
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// The terminal faces show the sandbox image's pull as it goes: zero run on
// a terminal keeps one line that it rewrites, then says the image was
// pulled; into a pipe it says when the pull starts and when it ends; the
// chat's status line follows it, and its scrollback says the start and the
// end. The engine is a fake whose pull waits for the test, so the progress
// is seen while the pull goes on.

const (
	pullProgress = "12.0 MB of 48.0 MB"
	pullStarted  = "pulling the sandbox image kalilinux/kali-rolling (once; the next runs reuse it)"
	pullEnded    = "✓ pulled the sandbox image kalilinux/kali-rolling (1 layers, 48.0 MB)"
)

// pullRun is a model that runs one command, then answers.
func pullRun(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply("ls")},
		llmtest.Reply{Content: chatAnswer("no container in this fake")},
	)
}

func pullEnv(srv *llmtest.Server, engine *pullEngine) []string {
	return []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "TERM=xterm-256color",
		"ZERO_SANDBOX=docker", "DOCKER_HOST=" + engine.host}
}

func TestRunShowsPullInPlace(t *testing.T) {
	t.Parallel()
	engine := newPullEngine(t, false).succeeding()
	ws := t.TempDir()
	ct := startTerm(t, ws, pullEnv(pullRun(t), engine), "run", "--workspace", ws, "look")
	ct.waitFor(0, pullProgress)
	close(engine.release)
	ct.waitFor(0, pullEnded)
	ct.waitFor(0, "no container in this fake")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	ct.mu.Lock()
	raw := string(ct.raw)
	ct.mu.Unlock()
	if !strings.Contains(raw, "\r\x1b[K") {
		t.Errorf("the progress is not rewritten in place:\n%q", raw)
	}
	// What is left on the screen: the end of the pull, once; the progress
	// was written over.
	screen := ct.screen()
	if strings.Contains(screen, pullProgress) || strings.Contains(screen, pullStarted) {
		t.Errorf("the pull's progress stayed on the screen:\n%s", screen)
	}
	if n := strings.Count(screen, pullEnded); n != 1 {
		t.Errorf("the screen says %d times that the image was pulled, want once:\n%s", n, screen)
	}
	// The line after the pull's starts at its beginning.
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "pulled the sandbox image") && !strings.HasPrefix(l, "✓") {
			t.Errorf("the pulled line shares its line with another: %q", l)
		}
	}
}

func TestRunIntoAPipeSaysPullStartAndEnd(t *testing.T) {
	t.Parallel()
	engine := newPullEngine(t, false).succeeding()
	close(engine.release) // nobody watches it go: the lines are the same
	ws := t.TempDir()
	cmd := zeroCmd(t, pullEnv(pullRun(t), engine), "run", "--workspace", ws, "look")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr.String())
	}
	got := string(out)
	if strings.ContainsAny(got, "\r\x1b") {
		t.Errorf("a pipe got terminal controls:\n%q", got)
	}
	for _, want := range []string{"… " + pullStarted + "\n", pullEnded + "\n"} {
		if n := strings.Count(got, want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, got)
		}
	}
	if strings.Index(got, pullStarted) > strings.Index(got, pullEnded) {
		t.Errorf("the pull ended before it started:\n%s", got)
	}
	if strings.Contains(stderr.String(), "pull") {
		t.Errorf("the pull is said on stderr too:\n%s", stderr.String())
	}
}

func TestChatStatusFollowsPull(t *testing.T) {
	t.Parallel()
	engine := newPullEngine(t, false).succeeding()
	ws := t.TempDir()
	srv := pullRun(t)
	ct := startTerm(t, ws, append(chatEnv(t, srv), "ZERO_MODEL="+llmtest.ModelName, "ZERO_SANDBOX=docker", "DOCKER_HOST="+engine.host),
		"chat", "--workspace", ws)
	ct.ready()
	from := ct.send("look")
	// The status line under the scrollback shows the bytes as they come.
	ct.waitScreen(pullProgress)
	close(engine.release)
	ct.answered(from, "no container in this fake")
	text := ct.text()[from:]
	for _, want := range []string{pullStarted, pullEnded} {
		if !strings.Contains(text, want) {
			t.Errorf("the scrollback does not say %q:\n%s", want, text)
		}
	}
	if screen := ct.screen(); strings.Contains(screen, pullProgress) {
		t.Errorf("the pull's progress stayed on the screen once it ended:\n%s", screen)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// A message typed while the first command waits for the image is an
// intervention like any other: the pull goes on (it is not dropped and
// pulled again), the model is told the command did not start yet, and the
// command it runs again waits for that same pull.
func TestChatMessageDuringPullKeepsThePull(t *testing.T) {
	t.Parallel()
	engine := newPullEngine(t, false).succeeding()
	ws := t.TempDir()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply("ls")},
		llmtest.Reply{Match: "how long", Content: chatCommandReply("ls")},
		llmtest.Reply{Content: chatAnswer("no container in this fake")},
	)
	ct := startTerm(t, ws, append(chatEnv(t, srv), "ZERO_MODEL="+llmtest.ModelName, "ZERO_SANDBOX=docker", "DOCKER_HOST="+engine.host),
		"chat", "--workspace", ws)
	ct.ready()
	from := ct.send("look")
	ct.waitScreen(pullProgress)
	said := ct.send("how long?")
	// The model hears the message with the command's note, and runs it
	// again: the second command waits for the same pull, and says so.
	heard := ct.waitFor(said, "(sent to the running agent")
	ct.waitFor(ct.waitFor(heard, "● Running it"), "… pulling the sandbox image")
	close(engine.release)
	ct.answered(from, "no container in this fake")
	pulls, _, _ := engine.counts()
	engine.mu.Lock()
	dropped := engine.dropped
	engine.mu.Unlock()
	if pulls != 1 || dropped != 0 {
		t.Errorf("%d pulls, %d dropped by the message; want one pull that went on", pulls, dropped)
	}
	second := string(srv.Requests()[1].Body)
	if !strings.Contains(second, "did not start") || !strings.Contains(second, "how long?") {
		t.Errorf("the model is not told the command did not start, with the message:\n%s", second)
	}
	ct.typeText("\x04")
	ct.wait()
}
