package server

import (
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/loop"
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
