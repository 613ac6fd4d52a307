package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/zeroagent/zero/loop"
)

func TestConfigureSwitchesProfileKeepingHistory(t *testing.T) {
	t.Parallel()
	a := &fakeModel{replies: []reply{{content: respond("from a")}}}
	b := &fakeModel{replies: []reply{{content: respond("from b")}}}
	e := newEnv(t, map[string]*fakeModel{"a": a, "b": b}, nil)
	s := e.create(t, "a")
	if res, _ := s.Prompt(testCtx(t), "remember PINEAPPLE"); res.Response != "from a" {
		t.Fatalf("first run: %+v", res)
	}
	if err := s.Configure(testCtx(t), "b", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Configure(testCtx(t), "nope", ""); err == nil {
		t.Fatal("Configure to an unknown profile succeeded")
	}
	if got := s.Info().Profile; got != "b" {
		t.Fatalf("Info().Profile = %q after Configure", got)
	}
	if res, _ := s.Prompt(testCtx(t), "what was it?"); res.Response != "from b" {
		t.Fatalf("second run: %+v", res)
	}
	if !strings.Contains(b.requestText(0), "PINEAPPLE") {
		t.Fatal("history lost across Configure")
	}
	if got := s.Info().Title; got != "remember PINEAPPLE" {
		t.Fatalf("Title = %q", got)
	}
}

func TestResetAndPause(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	m := &fakeModel{replies: []reply{{content: respond("one")}, blocking(started)}}
	e := newEnv(t, map[string]*fakeModel{"": m}, nil)
	s := e.create(t, "")
	if _, err := s.Prompt(testCtx(t), "remember PINEAPPLE"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	s.Pause()
	if !s.Info().Paused {
		t.Fatal("Info().Paused = false")
	}
	if _, _, err := s.Send("again"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(); !errors.Is(err, loop.ErrBusy) {
		t.Fatalf("Reset during a run = %v", err)
	}
	select {
	case <-started:
		t.Fatal("the model was called while paused")
	default:
	}
	s.Resume()
	<-started
	if strings.Contains(m.requestText(1), "PINEAPPLE") {
		t.Fatal("history survived Reset")
	}
	s.Cancel()
}
