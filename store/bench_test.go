package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchEvent is a typical event: about 300 bytes of JSON.
var benchEvent = []byte(`{"type":"tool_result","agent":0,"tool":"exec","id":"call_7","text":"` +
	strings.Repeat("output line ", 19) + `","is_error":false}`)

// reportPercentiles reports the p50 and p99 of the per-op durations.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// BenchmarkAppendEvent measures AppendEvent of a ~300-byte event: "queue"
// is what the caller pays (the writer commits meanwhile), "commit" the time
// until the event is committed (AppendEvent then Flush).
func BenchmarkAppendEvent(b *testing.B) {
	b.Logf("event: %d bytes", len(benchEvent))
	for _, mode := range []string{"queue", "commit"} {
		b.Run(mode, func(b *testing.B) {
			s, _ := openTest(b)
			mustCreate(b, s, Session{ID: "s", Workspace: "/w"})
			d := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				s.AppendEvent("s", Event{Seq: int64(i + 1), Type: "tool_result", Data: benchEvent})
				if mode == "commit" {
					if err := s.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				d = append(d, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, d)
			mustFlush(b, s) // not timed: the backlog of "queue"
		})
	}
}

// BenchmarkOpen1000Sessions opens a store holding 1,000 sessions and lists
// them.
func BenchmarkOpen1000Sessions(b *testing.B) {
	path := filepath.Join(b.TempDir(), "zero.db")
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		mustCreate(b, s, Session{ID: fmt.Sprintf("session-%04d", i), Workspace: fmt.Sprint("/home/u/p", i%10),
			Roots: []string{fmt.Sprint("/home/u/p", i%10)}, Title: "a title of some length", Settings: []byte(`{"rules":[]}`)})
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ss, err := s.Sessions(ListOptions{})
		if err != nil || len(ss) != 1000 {
			b.Fatalf("Sessions: %d, %v", len(ss), err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad10000Events reads a 10,000-event session.
func BenchmarkLoad10000Events(b *testing.B) {
	s, _ := openTest(b)
	mustCreate(b, s, Session{ID: "s", Workspace: "/w"})
	for i := range 10000 {
		s.AppendEvent("s", Event{Seq: int64(i + 1), Type: "tool_result", Data: benchEvent})
	}
	mustFlush(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		evs, err := s.Events("s", 0, 0)
		if err != nil || len(evs) != 10000 {
			b.Fatalf("Events: %d, %v", len(evs), err)
		}
	}
}
