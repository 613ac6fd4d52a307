package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

func TestTwoSessionsDoNotBlockEachOther(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	slow := &fakeModel{replies: []reply{blocking(started)}}
	fast := &fakeModel{replies: []reply{{content: respond("fast answer")}}}
	e := newEnv(t, map[string]*fakeModel{"slow": slow, "fast": fast}, nil)
	a, b := e.create(t, "slow"), e.create(t, "fast")

	done := make(chan RunResult, 1)
	go func() {
		res, err := a.Prompt(testCtx(t), "take your time")
		if err != nil {
			t.Errorf("Prompt(slow): %v", err)
		}
		done <- res
	}()
	<-started
	res, err := b.Prompt(testCtx(t), "quick")
	if err != nil || res.StopReason != loop.StopResponse || res.Response != "fast answer" {
		t.Fatalf("Prompt(fast) = %+v, %v; want the answer while the other session runs", res, err)
	}
	if !a.Running() {
		t.Error("the slow session should still be running")
	}

	a.Cancel()
	got := <-done
	if got.StopReason != loop.StopCancelled || !errors.Is(got.Err, loop.ErrCancelled) || got.Run != 1 {
		t.Errorf("cancelled run = %+v, want stop reason cancelled", got)
	}
	if last, ok := a.Last(); !ok || last.StopReason != loop.StopCancelled {
		t.Errorf("Last() = %+v, %v", last, ok)
	}
	ended := ofType(mustEvents(a, 0), loop.EventRunEnded)
	if len(ended) != 1 || ended[0].StopReason != loop.StopCancelled {
		t.Errorf("run_ended events = %+v", ended)
	}
}

func mustEvents(s *Session, since int64) []Event {
	evs, _ := s.Events(since)
	return evs
}

func TestPromptDuringRunIsAnIntervention(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	model := &fakeModel{replies: []reply{blocking(started), {content: respond("changed course")}}}
	e := newEnv(t, map[string]*fakeModel{"": model}, nil)
	s := e.create(t, "")

	done := make(chan RunResult, 1)
	go func() {
		res, _ := s.Prompt(testCtx(t), "first task")
		done <- res
	}()
	<-started
	res, err := s.Prompt(testCtx(t), "actually, do something else")
	if err != nil {
		t.Fatalf("Prompt during run: %v", err)
	}
	if diff := cmp.Diff(RunResult{Run: 1, StopReason: StopIntervened}, res); diff != "" {
		t.Errorf("Prompt during run (-want +got):\n%s", diff)
	}
	got := <-done
	if got.StopReason != loop.StopResponse || got.Response != "changed course" {
		t.Errorf("run = %+v", got)
	}
	if text := model.requestText(1); !strings.Contains(text, "actually, do something else") {
		t.Errorf("the intervention should reach the model:\n%s", text)
	}

	// Send while idle starts a run in the background; Intervene with no run fails.
	model.mu.Lock()
	model.replies = append(model.replies, reply{content: respond("second")})
	model.mu.Unlock()
	if err := s.Intervene("nobody listens"); !errors.Is(err, loop.ErrNotRunning) {
		t.Errorf("Intervene while idle = %v, want ErrNotRunning", err)
	}
	ctx := testCtx(t)
	_, cursor := s.Events(0)
	run, intervened, err := s.Send("again")
	if err != nil || intervened || run != 2 {
		t.Fatalf("Send = %d, %v, %v", run, intervened, err)
	}
	for {
		evs, next, err := s.Wait(ctx, cursor)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		cursor = next
		if len(ofType(evs, loop.EventRunEnded)) > 0 {
			break
		}
	}
	s.close() // waits for the background run's goroutine to return
	if last, ok := s.Last(); !ok || last.Run != 2 || last.Response != "second" {
		t.Errorf("Last() = %+v, %v", last, ok)
	}
}

func TestEventsAndWait(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{{content: respond("one")}, {content: respond("two")}}}
	e := newEnv(t, map[string]*fakeModel{"": model}, nil)
	s := e.create(t, "")
	if _, err := s.Prompt(testCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	all, head := s.Events(0)
	if len(all) == 0 || head != int64(len(all)) {
		t.Fatalf("Events(0) = %d events, head %d", len(all), head)
	}
	for i, ev := range all {
		if ev.Seq != int64(i+1) || ev.Session != s.ID() {
			t.Fatalf("event %d has seq %d session %q", i, ev.Seq, ev.Session)
		}
	}
	if tail, next := s.Events(head - 2); len(tail) != 2 || next != head || tail[0].Seq != head-1 {
		t.Errorf("Events(head-2) = %d events, next %d", len(tail), next)
	}

	t.Run("ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		evs, next, err := s.Wait(ctx, head)
		if !errors.Is(err, context.DeadlineExceeded) || len(evs) != 0 || next != head {
			t.Errorf("Wait = %d events, %d, %v; want deadline exceeded at %d", len(evs), next, err, head)
		}
	})
	t.Run("new event wakes it", func(t *testing.T) {
		type waited struct {
			evs  []Event
			next int64
			err  error
		}
		ch := make(chan waited, 1)
		go func() {
			evs, next, err := s.Wait(testCtx(t), head)
			ch <- waited{evs, next, err}
		}()
		if _, err := s.Prompt(testCtx(t), "again"); err != nil {
			t.Fatal(err)
		}
		w := <-ch
		// A run begins with its checkpoint, then run_started.
		if w.err != nil || len(w.evs) < 2 || w.evs[0].Seq != head+1 || w.evs[0].Type != EventCheckpoint || w.evs[1].Type != loop.EventRunStarted {
			t.Errorf("Wait = %+v", w)
		}
	})
	t.Run("follow", func(t *testing.T) {
		f := s.Follow(s.Cursor())
		model.mu.Lock()
		model.replies = append(model.replies, reply{content: respond("three")})
		model.mu.Unlock()
		if _, err := s.Prompt(testCtx(t), "third"); err != nil {
			t.Fatal(err)
		}
		got := f.Take().Events
		if len(got) < 3 || got[0].Type != EventCheckpoint || got[1].Type != loop.EventRunStarted || got[len(got)-1].Type != loop.EventRunEnded {
			t.Errorf("follower got %v", got)
		}
	})
}

func TestCloseEndsRuns(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	model := &fakeModel{replies: []reply{blocking(started)}}
	e := newEnv(t, map[string]*fakeModel{"": model}, nil)
	s := e.create(t, "")
	other := e.create(t, "")
	if got := e.m.List(); len(got) != 2 {
		t.Fatalf("List() = %+v", got)
	}
	if _, _, err := s.Send("long job"); err != nil {
		t.Fatal(err)
	}
	<-started
	if info := s.Info(); !info.Running || info.Runs != 1 {
		t.Errorf("Info() = %+v while running", info)
	}
	if err := e.m.Close(s.ID()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if last, ok := s.Last(); !ok || last.StopReason != loop.StopCancelled {
		t.Errorf("after Close, Last() = %+v, %v", last, ok)
	}
	if _, err := e.m.Get(s.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Close = %v, want ErrNotFound", err)
	}
	if err := e.m.Close(s.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Close = %v, want ErrNotFound", err)
	}
	if _, err := s.Prompt(testCtx(t), "more"); !errors.Is(err, ErrClosed) {
		t.Errorf("Prompt after Close = %v, want ErrClosed", err)
	}
	_, head := s.Events(0)
	if _, _, err := s.Wait(testCtx(t), head); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close = %v, want ErrClosed", err)
	}
	if got, err := e.m.Get(other.ID()); err != nil || got != other {
		t.Errorf("the other session should remain: %v", err)
	}
	if got := e.m.List(); len(got) != 1 || got[0].ID != other.ID() {
		t.Errorf("List() = %+v", got)
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]*fakeModel{"": {}}, nil)
	s, err := e.m.Create(t.Context(), SessionSpec{ID: "fixed", Roots: []string{"/a", "/b"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SessionSpec{ID: "fixed", Roots: []string{"/a", "/b"}}, s.Spec()); diff != "" {
		t.Errorf("Spec() (-want +got):\n%s", diff)
	}
	if _, err := e.m.Create(t.Context(), SessionSpec{ID: "fixed"}); !errors.Is(err, ErrSessionID) {
		t.Errorf("duplicate id: %v, want ErrSessionID", err)
	}
	if _, err := e.m.Create(t.Context(), SessionSpec{Profile: "missing"}); err == nil {
		t.Error("a NewSession failure should fail Create")
	}
}

func TestMemLog(t *testing.T) {
	t.Parallel()
	l := NewMemLog(3)
	for range 5 {
		l.Append(Event{Type: loop.EventWarning})
	}
	tests := []struct {
		name     string
		since    int64
		wantSeqs []int64
		wantNext int64
	}{
		{"from the start keeps the last three", 0, []int64{3, 4, 5}, 5},
		{"inside the window", 3, []int64{4, 5}, 5},
		{"up to date", 5, nil, 5},
		{"ahead of the log", 9, nil, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs, next := l.Since(tt.since)
			var seqs []int64
			for _, e := range evs {
				seqs = append(seqs, e.Seq)
			}
			if diff := cmp.Diff(tt.wantSeqs, seqs); diff != "" || next != tt.wantNext {
				t.Errorf("Since(%d) next=%d (-want +got):\n%s", tt.since, next, diff)
			}
		})
	}
}

// A message sent right after a run was started, before the engine is ready
// to take interventions, must still reach the model.
func TestSendThenPromptAtOnce(t *testing.T) {
	t.Parallel()
	for i := range 20 {
		// Answers once it has heard "second", whenever that arrives: before
		// the first model call or during it.
		model := &fakeModel{replies: []reply{{withReq: func(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "second") {
					text := respond("ok")
					_ = fn(llm.Delta{Kind: llm.Content, Text: text})
					return llm.Result{Content: text}, nil
				}
			}
			<-ctx.Done()
			return llm.Result{}, context.Cause(ctx)
		}}}}
		e := newEnv(t, map[string]*fakeModel{"": model}, nil)
		s := e.create(t, "")
		if _, _, err := s.Send("first"); err != nil {
			t.Fatal(err)
		}
		res, err := s.Prompt(testCtx(t), "second")
		if err != nil || res.StopReason != StopIntervened {
			t.Fatalf("try %d: Prompt = %+v, %v; want an intervention", i, res, err)
		}
		waitRunEnded(t, s)
		if last := mustLast(s); last.Response != "ok" {
			t.Fatalf("try %d: the intervention was lost; last = %+v", i, mustLast(s))
		}
	}
}

func waitRunEnded(t *testing.T, s *Session) {
	t.Helper()
	var cursor int64
	for {
		evs, next, err := s.Wait(testCtx(t), cursor)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		cursor = next
		if len(ofType(evs, loop.EventRunEnded)) > 0 {
			return
		}
	}
}

func mustLast(s *Session) RunResult {
	r, _ := s.Last()
	return r
}
