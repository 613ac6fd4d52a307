package server

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/store"
)

// BenchmarkEmit measures the server's share of an engine event's way to a
// face: logging it with its Seq, waking the followers, and one follower
// taking it.
func BenchmarkEmit(b *testing.B) {
	s := newSession(SessionSpec{ID: "bench"}, NewMemLog(0), time.Now())
	f := s.Follow(0)
	e := loop.Event{Type: loop.EventToolCall, Text: "call"}
	b.ReportAllocs()
	for b.Loop() {
		s.sink(e)
		if len(f.Take().Events) != 1 {
			b.Fatal("the event was not handed out")
		}
	}
}

// BenchmarkFiftySessions runs one prompt in each of 50 sessions at once on
// the fake model; one op is the 50 runs.
func BenchmarkFiftySessions(b *testing.B) {
	const n = 50
	models := map[string]*fakeModel{}
	e := newEnv(b, models, nil)
	for b.Loop() {
		b.StopTimer()
		sessions := make([]*Session, n)
		for i := range n {
			m := &fakeModel{replies: []reply{{content: execCall("ls")}, {content: respond("done")}}}
			models[""] = m
			s, err := e.m.Create(b.Context(), SessionSpec{})
			if err != nil {
				b.Fatal(err)
			}
			sessions[i] = s
		}
		b.StartTimer()
		var wg sync.WaitGroup
		for _, s := range sessions {
			wg.Go(func() {
				if res, err := s.Prompt(b.Context(), "go"); err != nil || res.Response != "done" {
					b.Errorf("Prompt = %+v, %v", res, err)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		e.m.CloseAll()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*n*2)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkTurnPersistence is one prompt of two turns (a command, then the
// answer) on the fake model, with the session in memory only and with the
// store on: the difference per turn is what persistence costs the run (the
// store's writes are queued; the run never waits for the disk). The
// sessions are long-lived, as an editor's are: 100 prompts make one.
func BenchmarkTurnPersistence(b *testing.B) {
	for _, persist := range []bool{false, true} {
		name := "memory"
		if persist {
			name = "store"
		}
		b.Run(name, func(b *testing.B) {
			model := &fakeModel{replies: []reply{{withReq: twoTurns()}}}
			m := benchManager(b, model, persist)
			var s *Session
			n := 0
			for b.Loop() {
				if n%100 == 0 {
					var err error
					if s, err = m.Create(b.Context(), SessionSpec{Roots: []string{"/ws"}}); err != nil {
						b.Fatal(err)
					}
				}
				n++
				if res, err := s.Prompt(b.Context(), "go"); err != nil || res.Err != nil {
					b.Fatalf("Prompt: %v %v", err, res.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/turn")
		})
	}
}

// twoTurns answers a command request, then the answer, alternately.
func twoTurns() func(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	var mu sync.Mutex
	i := 0
	return func(_ context.Context, _ llm.Request, fn llm.StreamFunc) (llm.Result, error) {
		mu.Lock()
		i++
		text := execCall("ls")
		if i%2 == 0 {
			text = respond("done")
		}
		mu.Unlock()
		if err := fn(llm.Delta{Kind: llm.Content, Text: text}); err != nil {
			return llm.Result{Content: text, Stopped: true}, nil
		}
		return llm.Result{Content: text}, nil
	}
}

func benchManager(b *testing.B, model *fakeModel, persist bool) *Manager {
	set, err := hooks.Resolve(loop.Builtins(), nil, hooks.Options{})
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{NewSession: func(_ context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
		return loop.NewSession(spec.ID, loop.Config{
			Setup:   loop.Setup{Model: model, Prompts: profiles.New(), Tools: []loop.Tool{responseTool, &execTool{}}, Hooks: set},
			Journal: spec.Journal,
		}, sink), nil
	}}
	if persist {
		st, err := store.Open(filepath.Join(b.TempDir(), "zero.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		opts.Store, opts.Workspace = st, "/ws"
	}
	m := NewManager(opts)
	b.Cleanup(m.CloseAll)
	return m
}

// BenchmarkLoadSession10000Events is what a face waits for when it loads a
// stored session of 10,000 events (a long session: deltas joined): the
// manager reads its row, its events and agent 0's history, decodes them and
// builds the engine session; one op is one load in a fresh manager.
func BenchmarkLoadSession10000Events(b *testing.B) {
	path := filepath.Join(b.TempDir(), "zero.db")
	st, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	if err := st.CreateSession(store.Session{ID: "long", Workspace: "/ws", Roots: []string{"/ws"}, Created: now, Updated: now}); err != nil {
		b.Fatal(err)
	}
	log := newStoreLog(st, "long", 0, nil, 0)
	for i := range 10_000 {
		typ := loop.EventToolOutputDelta
		if i%50 == 0 {
			typ = loop.EventToolCall
		}
		log.Append(Event{Session: "long", Type: typ, Item: "tool-1", Time: now, Text: "some output of a command, one line of it\n"})
	}
	for i := range 200 {
		st.AddMessage("long", 0, store.Message{N: i, Topic: i / 4, AI: i%2 == 1, Content: "a message of the conversation, of a modest size"})
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	model := &fakeModel{}
	set, err := hooks.Resolve(loop.Builtins(), nil, hooks.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		st, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		m := NewManager(Options{Store: st, Workspace: "/ws", NewSession: func(_ context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
			return loop.NewSession(spec.ID, loop.Config{Setup: loop.Setup{Model: model, Prompts: profiles.New(), Hooks: set}, Journal: spec.Journal}, sink), nil
		}})
		s, err := m.Get("long")
		if err != nil {
			b.Fatal(err)
		}
		if evs, _ := s.Events(0); len(evs) != 10_000 {
			b.Fatalf("%d events loaded", len(evs))
		}
		b.StopTimer()
		m.CloseAll()
		st.Close()
		b.StartTimer()
	}
}
