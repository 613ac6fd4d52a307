package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/zeroagent/zero/loop"
)

// fakeCommands has one saved prompt, /tidy, that allows only the answer.
type fakeCommands struct{ tools []string }

func (f fakeCommands) List([]string) []Command { return []Command{{Name: "tidy"}} }
func (f fakeCommands) Expand(_ []string, name, args string) (Expansion, bool) {
	if name != "tidy" {
		return Expansion{}, false
	}
	return Expansion{Text: "TIDY " + args, Tools: f.tools}, true
}

// A command's allowed-tools narrows its own run only: a call of another
// tool is refused (the policy, which allows everything here, is not
// asked), and the next message may use every tool again.
func TestRunCommandNarrows(t *testing.T) {
	t.Parallel()
	m := &fakeModel{replies: []reply{
		{content: execCall("rm -rf /")}, {content: respond("told no")},
		{content: execCall("echo ok")}, {content: respond("done")},
	}}
	policy := Policy{Default: Auto}
	e := newEnv(t, map[string]*fakeModel{"": m}, &policy)
	e.m.opts.Commands = fakeCommands{tools: []string{"response"}}
	s := e.create(t, "")
	if got := s.Commands(); len(got) != 1 || got[0].Name != "tidy" {
		t.Fatalf("Commands = %v", got)
	}
	res, ok, err := s.RunCommand(testCtx(t), "tidy", "the docs")
	if err != nil || !ok || res.Response != "told no" {
		t.Fatalf("RunCommand = %+v, %v, %v", res, ok, err)
	}
	if !strings.Contains(m.requestText(0), "TIDY the docs") {
		t.Errorf("the model got %q", m.requestText(0))
	}
	if !strings.Contains(m.requestText(1), OnlyRefusal([]string{"response"})) {
		t.Errorf("the refusal did not reach the model: %q", m.requestText(1))
	}
	if _, err := s.Prompt(testCtx(t), "now anything"); err != nil {
		t.Fatal(err)
	}
	if got := e.exec.runs(); len(got) != 1 || got[0] != "echo ok" {
		t.Errorf("runs = %v, want only the second message's", got)
	}
	if _, ok, _ := s.RunCommand(testCtx(t), "nosuch", ""); ok {
		t.Error("an unknown command was found")
	}
}

// A command sent while a run goes on is refused, not delivered to that run
// as an intervention, where its narrowing would not apply.
func TestRunCommandDuringARun(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	m := &fakeModel{replies: []reply{blocking(started)}}
	policy := Policy{Default: Auto}
	e := newEnv(t, map[string]*fakeModel{"": m}, &policy)
	e.m.opts.Commands = fakeCommands{tools: []string{"response"}}
	s := e.create(t, "")
	if _, _, err := s.Send("long task"); err != nil {
		t.Fatal(err)
	}
	<-started
	if _, ok, err := s.RunCommand(testCtx(t), "tidy", ""); !ok || !errors.Is(err, loop.ErrBusy) {
		t.Errorf("RunCommand during a run = %v, %v; want ErrBusy", ok, err)
	}
	s.Cancel()
	if _, err := s.WaitRun(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if m.requests() != 1 || strings.Contains(m.requestText(0), "TIDY") {
		t.Errorf("the command reached the model: %d requests", m.requests())
	}
}

// Without a broker nothing could enforce a narrowing: the command is
// refused rather than run with every tool.
func TestRunCommandNeedsBroker(t *testing.T) {
	t.Parallel()
	m := &fakeModel{}
	e := newEnv(t, map[string]*fakeModel{"": m}, nil)
	e.m.opts.Commands = fakeCommands{tools: []string{"response"}}
	s := e.create(t, "")
	if _, ok, err := s.RunCommand(testCtx(t), "tidy", ""); !ok || !errors.Is(err, ErrUnsupported) {
		t.Errorf("RunCommand = %v, %v; want ErrUnsupported", ok, err)
	}
	if m.requests() != 0 {
		t.Error("the model was asked")
	}
}

func TestCommandCall(t *testing.T) {
	for _, tc := range []struct{ in, name, args string }{
		{"/review main.go  focus", "review", "main.go  focus"},
		{"  /git:commit\nfix the typo", "git:commit", "fix the typo"},
		{"/tidy", "tidy", ""},
	} {
		if name, args, ok := CommandCall(tc.in); !ok || name != tc.name || args != tc.args {
			t.Errorf("CommandCall(%q) = %q, %q, %v", tc.in, name, args, ok)
		}
	}
	for _, in := range []string{"review", "/", "/ x", "a /b"} {
		if _, _, ok := CommandCall(in); ok {
			t.Errorf("CommandCall(%q) took it for a command", in)
		}
	}
}

// A run's limit is its own: the end of an earlier run (its clearOnly late)
// never lifts the limit of the command run that began after it, and a new
// run lifts a limit left from before it.
func TestOnlyIsPerRun(t *testing.T) {
	b := NewBroker(Policy{Default: Auto}, BrokerOptions{})
	b.setOnly("s", 2, []string{"response"})
	b.clearOnly("s", 1) // run 1's late clear
	if _, ok := b.only["s"]; !ok {
		t.Fatal("run 1's end lifted run 2's limit")
	}
	b.clearOnlyBefore("s", 2) // run 2 itself beginning: its limit stays
	if _, ok := b.only["s"]; !ok {
		t.Fatal("run 2's limit was lifted as it began")
	}
	b.clearOnlyBefore("s", 3)
	if _, ok := b.only["s"]; ok {
		t.Fatal("run 3 began under run 2's limit")
	}
}
