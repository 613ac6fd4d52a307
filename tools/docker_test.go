package tools_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
)

// dockerHarness runs the tools in a container of the test image.
func dockerHarness(t *testing.T, timeouts tools.Timeouts, replies ...llmtest.Reply) (*harness, *sandbox.Docker) {
	t.Helper()
	image := dockertest.Image(t)
	ws := t.TempDir()
	d, err := sandbox.NewDocker(sandbox.DockerOptions{Workspace: ws, Image: image, Network: "none", User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = d.RemoveContainers(ctx, "", false)
		d.Close()
	})
	return newHarnessOn(t, ws, d, timeouts, replies...), d
}

func TestDockerTimeoutThenReset(t *testing.T) {
	t.Parallel()
	// Long enough for a new shell's first output on a loaded machine; the
	// sleep outlasts it.
	short := sandbox.Timeouts{FirstOutput: 3 * time.Second, BetweenOutput: 3 * time.Second, Max: 30 * time.Second, Dialog: 30 * time.Second}
	h, _ := dockerHarness(t, tools.Timeouts{Terminal: short},
		call("code_execution_tool", `{"runtime": "terminal", "code": "sleep 300"}`),
		call("code_execution_tool", `{"runtime": "reset", "session": 0}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "pgrep -x sleep || echo no-sleep-left"}`),
		answer("ok"),
	)
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "ok" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "SYSTEM") {
		t.Errorf("a command with no output should time out with a note:\n%s", text)
	}
	if text := requestText(h, 3); !strings.Contains(text, "no-sleep-left") {
		t.Errorf("reset should kill the running sleep:\n%s", text)
	}
}

func TestDockerHugeOutputBounded(t *testing.T) {
	t.Parallel()
	h, _ := dockerHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "seq 1 300000"}`),
		answer("ok"),
	)
	if _, err := h.sess.Run(ctx(t), "go"); err != nil {
		t.Fatal(err)
	}
	text := requestText(h, 1)
	if !strings.Contains(text, "omitted") || strings.Contains(text, "\\n150000\\n") || !strings.Contains(text, "300000") {
		t.Errorf("history should keep the head and tail of a huge output (%d bytes of request)", len(text))
	}
}

// The container dies mid-command: the model hears the shell ended, and the
// next command brings the container back.
func TestDockerContainerKilledMidCommand(t *testing.T) {
	t.Parallel()
	h, d := dockerHarness(t, tools.Timeouts{},
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo started; sleep 60"}`),
		call("code_execution_tool", `{"runtime": "terminal", "code": "echo back-again"}`),
		answer("ok"),
	)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for _, e := range h.ofType(loop.EventToolOutputDelta) {
				if strings.Contains(e.Text, "started") {
					_ = exec.Command("docker", "kill", d.ContainerName()).Run()
					return
				}
			}
		}
	}()
	if got, err := h.sess.Run(ctx(t), "go"); err != nil || got != "ok" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if text := requestText(h, 1); !strings.Contains(text, "ended") {
		t.Errorf("the model should hear that the shell ended:\n%s", text)
	}
	if text := requestText(h, 2); !strings.Contains(text, "back-again") {
		t.Errorf("the next command should run in a recovered container:\n%s", text)
	}
}

// The between-output and total timeouts, in the container, each with the
// other out of reach: on a loaded machine a loop that prints every 0.2 s
// can fall silent for a second, which a between-output timeout of half a
// second would take for the end of its output.
func TestDockerBetweenAndMaxTimeouts(t *testing.T) {
	t.Parallel()
	far := 10 * time.Minute
	for _, tt := range []struct {
		name     string
		timeouts sandbox.Timeouts
		code     string
		want     []string
	}{
		{"between", sandbox.Timeouts{FirstOutput: far, BetweenOutput: 500 * time.Millisecond, Max: far, Dialog: far},
			"echo first; sleep 600", []string{"first", "output stopped"}},
		{"max", sandbox.Timeouts{FirstOutput: far, BetweenOutput: far, Max: 2 * time.Second, Dialog: far},
			"while true; do echo tick; sleep 0.2; done", []string{"tick", "the most one call may take"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, _ := dockerHarness(t, tools.Timeouts{Terminal: tt.timeouts},
				call("code_execution_tool", `{"runtime": "terminal", "code": "`+tt.code+`"}`),
				answer("ok"),
			)
			if _, err := h.sess.Run(ctx(t), "go"); err != nil {
				t.Fatal(err)
			}
			text := requestText(h, 1)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the %s timeout should end the wait with %q:\n%s", tt.name, w, text)
				}
			}
		})
	}
}
