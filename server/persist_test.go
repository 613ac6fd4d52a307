package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/store"
)

// stored is one "process": a store opened on a database file and a
// manager over it, with a fake model.
type stored struct {
	st      *store.Store
	m       *Manager
	model   *fakeModel
	deleted []string
	once    sync.Once
}

func openStored(t *testing.T, path, ws string, model *fakeModel, logLimit int) *stored {
	t.Helper()
	return openStoredWith(t, path, ws, model, logLimit, nil)
}

func openStoredWith(t *testing.T, path, ws string, model *fakeModel, logLimit int, broker *Broker) *stored {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	p := &stored{st: st, model: model}
	set, err := hooks.Resolve(loop.Builtins(), nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	setup := func(_ context.Context, spec SessionSpec) (loop.Setup, error) {
		return loop.Setup{Profile: spec.Profile, Model: model, Prompts: profiles.New(),
			Tools: []loop.Tool{responseTool, &execTool{}}, Hooks: set}, nil
	}
	p.m = NewManager(Options{
		Setup:     setup,
		Broker:    broker,
		Store:     st,
		Workspace: ws,
		LogLimit:  logLimit,
		OnDelete:  func(spec SessionSpec) { p.deleted = append(p.deleted, spec.ID) },
		NewSession: func(ctx context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
			s, err := setup(ctx, spec)
			if err != nil {
				return nil, err
			}
			return loop.NewSession(spec.ID, loop.Config{Setup: s, Workspace: spec.Roots[0], Journal: spec.Journal,
				Limits: loop.Limits{CriticalRetryDelay: time.Millisecond}}, sink), nil
		},
	})
	t.Cleanup(p.close)
	return p
}

// close ends the process cleanly.
func (p *stored) close() {
	p.once.Do(func() {
		p.m.CloseAll()
		p.st.Close()
	})
}

func allText(evs []Event, typ loop.EventType) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == typ {
			b.WriteString(e.Text + "\n")
		}
	}
	return b.String()
}

func TestStoredSessionOutlivesTheProcess(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	one := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("noted")}}}, 0)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if res, _ := s.Prompt(testCtx(t), "remember the word pomegranate"); res.Err != nil {
		t.Fatalf("first run: %v", res.Err)
	}
	before, _ := s.Events(0)
	one.close()

	two := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("pomegranate")}}}, 0)
	list := two.m.List()
	if len(list) != 1 || list[0].ID != id || list[0].Runs != 1 || !strings.Contains(list[0].Title, "pomegranate") {
		t.Fatalf("List after a restart = %+v, want the session with its title and run", list)
	}
	s2, err := two.m.Get(id)
	if err != nil {
		t.Fatalf("Get after a restart: %v", err)
	}
	replay, _ := s2.Events(0)
	if len(replay) != len(before) || !strings.Contains(allText(replay, loop.EventResponse), "noted") {
		t.Fatalf("replay has %d events (want %d) and answers %q", len(replay), len(before), allText(replay, loop.EventResponse))
	}
	res, _ := s2.Prompt(testCtx(t), "which word did I ask you to remember?")
	if res.Err != nil || res.Run != 2 {
		t.Fatalf("follow-up: run %d, %v", res.Run, res.Err)
	}
	if got := two.model.requestText(0); !strings.Contains(got, "remember the word pomegranate") || !strings.Contains(got, "noted") {
		t.Fatalf("the follow-up's request lacks the earlier turn:\n%s", got)
	}
	after, _ := s2.Events(0)
	for i, e := range after {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has Seq %d: the log must continue where the earlier process stopped", i, e.Seq)
		}
	}
}

func TestInterruptedRunIsClosedOnLoad(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	started := make(chan struct{})
	model := &fakeModel{replies: []reply{{content: execCall("sleep 1000")}, blocking(started)}}
	one := openStored(t, path, ws, model, 0)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Send("build the thing"); err != nil {
		t.Fatal(err)
	}
	<-started
	// The process dies here: nothing more is written, and its claim goes
	// with it. (The first store's queue is flushed, as the writer would
	// have done within milliseconds.)
	if err := one.st.Flush(); err != nil {
		t.Fatal(err)
	}
	cut := s.Cursor()
	one.st.Close()

	two := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("starting over")}}}, 0)
	s2, err := two.m.Get(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s2.Events(cut)
	if len(evs) == 0 {
		t.Fatal("no events close the interrupted run")
	}
	end := evs[len(evs)-1]
	if end.Type != loop.EventRunEnded || end.StopReason != loop.StopError || !strings.Contains(end.Error, "interrupted") {
		t.Fatalf("the interrupted run ends with %+v, want run_ended with an interrupted error", end)
	}
	res, _ := s2.Prompt(testCtx(t), "go on")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := two.model.requestText(0); !strings.Contains(got, "build the thing") || !strings.Contains(got, "interrupted") {
		t.Fatalf("the next request should carry the earlier message and the interruption note:\n%s", got)
	}
	// A second load (another restart) does not close it again.
	two.close()
	three := openStored(t, path, ws, &fakeModel{}, 0)
	s3, err := three.m.Get(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := s3.Events(0)
	ends := 0
	for _, e := range all {
		if e.Type == loop.EventRunEnded && strings.Contains(e.Error, "interrupted") {
			ends++
		}
	}
	if ends != 1 {
		t.Fatalf("%d interrupted markers, want 1", ends)
	}
}

func TestStoredLogServesFollowersBeyondMemory(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	one := openStored(t, path, ws, &fakeModel{replies: []reply{
		{content: execCall("one")}, {content: execCall("two")}, {content: respond("done")}}}, 4)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Prompt(testCtx(t), "work"); res.Err != nil {
		t.Fatal(res.Err)
	}
	evs, last := s.Events(0)
	if int64(len(evs)) != last || evs[0].Seq != 1 {
		t.Fatalf("Events(0) returned %d events up to %d, first %d: the store must fill what memory dropped", len(evs), last, evs[0].Seq)
	}
	b, err := s.Follow(0).Next(testCtx(t))
	if err != nil || b.Missed != 0 {
		t.Fatalf("a follower from 0 missed %d events (%v)", b.Missed, err)
	}
}

func TestDeleteAndWorkspaceScope(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	wsA, wsB := t.TempDir(), t.TempDir()
	a := openStored(t, path, wsA, &fakeModel{replies: []reply{{content: respond("a")}}}, 0)
	sa, err := a.m.Create(testCtx(t), SessionSpec{Roots: []string{wsA}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := sa.Prompt(testCtx(t), "in A"); res.Err != nil {
		t.Fatal(res.Err)
	}
	a.close()

	b := openStored(t, path, wsB, &fakeModel{}, 0)
	if l := b.m.List(); len(l) != 0 {
		t.Fatalf("workspace B lists %+v: another workspace's sessions are not listed unless asked", l)
	}
	if l := b.m.ListWith(ListOptions{Workspace: wsA}); len(l) != 1 || l[0].ID != sa.ID() {
		t.Fatalf("ListWith(A) = %+v", l)
	}
	if l := b.m.ListWith(ListOptions{All: true}); len(l) != 1 {
		t.Fatalf("ListWith(All) = %+v", l)
	}
	if err := b.m.Delete(sa.ID()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.deleted, []string{sa.ID()}) {
		t.Fatalf("OnDelete saw %v", b.deleted)
	}
	if _, err := b.m.Get(sa.ID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := b.m.Delete(sa.ID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
}

func TestResetForgetsTheStoredHistory(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	one := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("ok")}}}, 0)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Prompt(testCtx(t), "the secret word is zucchini"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	one.close()
	two := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("no idea")}}}, 0)
	s2, err := two.m.Get(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := s2.Prompt(testCtx(t), "what is the word?"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := two.model.requestText(0); strings.Contains(got, "zucchini") {
		t.Fatalf("a reset session brought its old history back:\n%s", got)
	}
}

// A session open in one process is not taken by another until the first
// closes it.
func TestStoredSessionIsHeldByOneProcess(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	one := openStored(t, path, ws, &fakeModel{}, 0)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	two := openStored(t, path, ws, &fakeModel{}, 0)
	if _, err := two.m.Get(s.ID()); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "open in another zero process") {
		t.Fatalf("Get of a session another process holds: %v, want ErrHeld", err)
	}
	if err := two.m.Delete(s.ID()); !errors.Is(err, ErrHeld) {
		t.Fatalf("Delete of a session another process holds: %v, want ErrHeld", err)
	}
	if err := one.m.Close(s.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := two.m.Get(s.ID()); err != nil {
		t.Fatalf("Get once the other closed it: %v", err)
	}
}

// A session id names files (its spilled output): one that is not a plain
// word is refused.
func TestSessionIDIsAWord(t *testing.T) {
	e := newEnv(t, map[string]*fakeModel{"": {}}, nil)
	for _, id := range []string{"../x", "a/b", ".", "a b", strings.Repeat("x", 65)} {
		if _, err := e.m.Create(t.Context(), SessionSpec{ID: id}); !errors.Is(err, ErrSessionID) {
			t.Errorf("Create(%q) = %v, want ErrSessionID", id, err)
		}
	}
}

// "Allow always" lasts as long as the session: a session loaded by a later
// process does not ask again for what the person allowed always.
func TestAllowAlwaysIsStoredWithTheSession(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	ask := Policy{Default: Auto, Rules: []Rule{{Tool: "code_execution_tool", Decision: Ask}}}
	b1 := NewBroker(ask, BrokerOptions{})
	one := openStoredWith(t, path, ws, &fakeModel{replies: []reply{{content: execCall("make")}, {content: respond("built")}}}, 0, b1)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan RunResult, 1)
	go func() { res, _ := s.Prompt(testCtx(t), "build"); done <- res }()
	req := waitPending(t, b1, s.ID())
	if err := b1.Approve(req.ID, true); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Err != nil {
		t.Fatal(res.Err)
	}
	one.close()

	b2 := NewBroker(ask, BrokerOptions{})
	two := openStoredWith(t, path, ws, &fakeModel{replies: []reply{{content: execCall("make")}, {content: respond("built again")}}}, 0, b2)
	s2, err := two.m.Get(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	res, _ := s2.Prompt(testCtx(t), "build again")
	if res.Err != nil || res.Response != "built again" {
		t.Fatalf("the loaded session asked again or failed: %+v", res)
	}
	// Another session of the same workspace is asked as before.
	other, err := two.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	two.model.mu.Lock()
	two.model.replies = append(two.model.replies, reply{content: execCall("make")})
	two.model.mu.Unlock()
	if _, _, err := other.Send("build"); err != nil {
		t.Fatal(err)
	}
	waitPending(t, b2, other.ID())
	other.Cancel()
}

// waitPending waits for the first approval request of session.
func waitPending(t *testing.T, b *Broker, session string) Request {
	t.Helper()
	ctx := testCtx(t)
	for {
		if p := b.Pending(session); len(p) > 0 {
			return p[0]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no approval request in session %s", session)
		case <-time.After(time.Millisecond):
		}
	}
}

// A stored log with a hole (a write the store failed) still hands out
// every stored event, in order, from any cursor.
func TestStoredLogWithAHole(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(store.Session{ID: "s", Workspace: "/ws", Roots: []string{"/ws"}}); err != nil {
		t.Fatal(err)
	}
	var tail []Event
	for _, seq := range []int64{1, 2, 3, 5, 6} { // 4 was lost
		e := Event{Seq: seq, Type: loop.EventWarning, Text: fmt.Sprint(seq)}
		data, _ := json.Marshal(e)
		st.AppendEvent("s", store.Event{Seq: seq, Type: string(e.Type), Data: data})
		tail = append(tail, e)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	l := newStoreLog(st, "s", 10, tail, 6)
	for since, want := range map[int64][]int64{0: {1, 2, 3, 5, 6}, 2: {3, 5, 6}, 4: {5, 6}, 5: {6}, 6: nil} {
		evs, last := l.Since(since)
		var got []int64
		for _, e := range evs {
			got = append(got, e.Seq)
		}
		if !slices.Equal(got, want) || last != 6 {
			t.Errorf("Since(%d) = %v, %d; want %v, 6", since, got, last, want)
		}
	}
	if e := l.Append(Event{Type: loop.EventWarning}); e.Seq != 7 {
		t.Errorf("the next event has Seq %d, want 7", e.Seq)
	}
}

// A stored history with a hole (a write lost) does not make its session
// unloadable: the messages are kept, numbered again, and the session goes on.
func TestInconsistentHistoryIsRepairedOnLoad(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(store.Session{ID: "s", Workspace: ws, Roots: []string{ws}, Runs: 2}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Message{{N: 0, Content: "first question ALPHA"}, {N: 1, AI: true, Content: "first answer"},
		{N: 4, Topic: 1, Content: "second question BETA"}, {N: 5, Topic: 1, AI: true, Content: "second answer"}} {
		st.AddMessage("s", 0, m)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	p := openStored(t, path, ws, &fakeModel{replies: []reply{{content: respond("ok")}}}, 0)
	s, err := p.m.Get("s")
	if err != nil {
		t.Fatalf("a session with a hole in its history cannot be loaded: %v", err)
	}
	evs, _ := s.Events(0)
	if w := allText(evs, loop.EventWarning); !strings.Contains(w, "inconsistent") {
		t.Errorf("no warning says the history was repaired: %q", w)
	}
	if res, _ := s.Prompt(testCtx(t), "third"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := p.model.requestText(0); !strings.Contains(got, "ALPHA") || !strings.Contains(got, "BETA") {
		t.Fatalf("the repaired history lost messages:\n%s", got)
	}
	// The store holds the repaired history: another load needs no repair.
	p.close()
	q := openStored(t, path, ws, &fakeModel{}, 0)
	s2, err := q.m.Get("s")
	if err != nil {
		t.Fatal(err)
	}
	evs, _ = s2.Events(0)
	if n := strings.Count(allText(evs, loop.EventWarning), "inconsistent"); n != 1 {
		t.Errorf("%d repair warnings after a second load, want the first one only", n)
	}
}

// A subordinate replaced by a new one starts its stored history over,
// instead of colliding with the old one's rows.
func TestJournalStartsAnAgentOver(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(store.Session{ID: "s", Workspace: "/ws", Roots: []string{"/ws"}}); err != nil {
		t.Fatal(err)
	}
	j := journal{st: st, id: "s"}
	j.AddMessage(1, loop.HistoryMessage{N: 0, Content: "old task"})
	j.AddMessage(1, loop.HistoryMessage{N: 1, AI: true, Content: "old answer"})
	j.AddMessage(1, loop.HistoryMessage{N: 0, Content: "new task"})
	if err := st.Flush(); err != nil {
		t.Fatalf("a replaced subordinate's history collided: %v", err)
	}
	h, err := st.History("s", 1)
	if err != nil || len(h.Messages) != 1 || h.Messages[0].Content != "new task" {
		t.Fatalf("agent 1's history = %+v, %v; want the new task only", h.Messages, err)
	}
}

// A loaded session's new steps get item ids of their own: an editor groups
// events by item, and a reused id would merge a new tool call into an old.
func TestLoadedSessionItemsStayUnique(t *testing.T) {
	path, ws := filepath.Join(t.TempDir(), "zero.db"), t.TempDir()
	one := openStored(t, path, ws, &fakeModel{replies: []reply{{content: execCall("one")}, {content: respond("a")}}}, 0)
	s, err := one.m.Create(testCtx(t), SessionSpec{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Prompt(testCtx(t), "first"); res.Err != nil {
		t.Fatal(res.Err)
	}
	one.close()
	two := openStored(t, path, ws, &fakeModel{replies: []reply{{content: execCall("two")}, {content: respond("b")}}}, 0)
	s2, err := two.m.Get(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := s2.Prompt(testCtx(t), "second"); res.Err != nil {
		t.Fatal(res.Err)
	}
	evs, _ := s2.Events(0)
	firstOf := map[string]string{} // item -> the run it first appeared in
	run := ""
	for _, e := range evs {
		if e.Type == loop.EventRunStarted {
			run = e.Text
		}
		if e.Item == "" {
			continue
		}
		if r, ok := firstOf[e.Item]; ok && r != run {
			t.Fatalf("item %s is used by the run of %q and again by the run of %q", e.Item, r, run)
		}
		firstOf[e.Item] = run
	}
}

// Native tool calls and the results answering them are stored with their
// ids and come back as they were; calls the store cannot read come back as
// text, their results too, and nothing else is lost.
func TestJournalKeepsNativeCalls(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(store.Session{ID: "s", Workspace: "/ws", Roots: []string{"/ws"}}); err != nil {
		t.Fatal(err)
	}
	j := journal{st: st, id: "s"}
	msgs := []loop.HistoryMessage{
		{N: 0, Content: "read a"},
		{N: 1, AI: true, Content: "Reading.", Calls: []loop.HistoryCall{{ID: "c1", Name: "text_editor:read", Args: `{"path":"a"}`}}},
		{N: 2, Content: `{"tool_name": "text_editor:read", "tool_result": "alpha"}`, CallID: "c1"},
	}
	for _, m := range msgs {
		j.AddMessage(0, m)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	h, err := st.History("s", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := HistoryState(h).Messages
	if !slices.EqualFunc(got, msgs, func(a, b loop.HistoryMessage) bool {
		return a.Content == b.Content && a.CallID == b.CallID && slices.Equal(a.Calls, b.Calls)
	}) {
		t.Errorf("restored %+v\nwant %+v", got, msgs)
	}

	h.Messages[1].Calls = `[{"id": "c1", "name":` // damaged
	got = HistoryState(h).Messages
	if len(got[1].Calls) != 0 || !strings.Contains(got[1].Content, "Reading.") || !strings.Contains(got[1].Content, "could not be read") {
		t.Errorf("damaged calls: %+v", got[1])
	}
	sess := loop.NewSession("s", loop.Config{Setup: loop.Setup{Model: &fakeModel{}, Prompts: profiles.New()}}, func(loop.Event) {})
	if err := sess.RestoreHistory(0, HistoryState(h)); err != nil {
		t.Errorf("a history with damaged calls is not restored: %v", err)
	}
}
