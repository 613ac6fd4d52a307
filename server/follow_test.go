package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zeroagent/zero/loop"
)

func TestCoalesce(t *testing.T) {
	t.Parallel()
	d := func(seq int64, typ loop.EventType, agent int, item, text string) Event {
		return Event{Seq: seq, Type: typ, Agent: agent, Item: item, Text: text}
	}
	in := []Event{
		d(1, loop.EventReasoningDelta, 0, "t1", "I "),
		d(2, loop.EventReasoningDelta, 0, "t1", "think"),
		d(3, loop.EventThoughtsDelta, 0, "t1", "plan"),
		d(4, loop.EventHeadline, 0, "t1", "Listing"),
		d(5, loop.EventToolOutputDelta, 0, "c1", "a\n"),
		d(6, loop.EventToolOutputDelta, 1, "c1", "sub\n"), // another agent: another stream
		d(7, loop.EventToolOutputDelta, 0, "c1", "b\n"),
		d(8, loop.EventToolOutputDelta, 0, "c1", "c\n"),
		d(9, loop.EventToolOutputDelta, 0, "c2", "d\n"), // another item
		d(10, loop.EventHeadline, 0, "t2", "Again"),
		d(11, loop.EventHeadline, 0, "t2", "Again"), // not a delta: never joined
	}
	got := Coalesce(slices.Clone(in))
	want := []Event{
		d(2, loop.EventReasoningDelta, 0, "t1", "I think"),
		d(3, loop.EventThoughtsDelta, 0, "t1", "plan"),
		d(4, loop.EventHeadline, 0, "t1", "Listing"),
		d(5, loop.EventToolOutputDelta, 0, "c1", "a\n"),
		d(6, loop.EventToolOutputDelta, 1, "c1", "sub\n"),
		d(8, loop.EventToolOutputDelta, 0, "c1", "b\nc\n"),
		d(9, loop.EventToolOutputDelta, 0, "c2", "d\n"),
		d(10, loop.EventHeadline, 0, "t2", "Again"),
		d(11, loop.EventHeadline, 0, "t2", "Again"),
	}
	if !slices.EqualFunc(got, want, func(a, b Event) bool {
		return a.Seq == b.Seq && a.Type == b.Type && a.Agent == b.Agent && a.Item == b.Item && a.Text == b.Text
	}) {
		t.Errorf("Coalesce:\n got %+v\nwant %+v", got, want)
	}
}

// A follower reads the log in order, waits for what comes next, says how
// many events the bounded log dropped before it read them, and ends once
// the session is closed and everything was handed out.
func TestFollow(t *testing.T) {
	t.Parallel()
	s := newSession(SessionSpec{ID: "f"}, NewMemLog(4), time.Now())
	emit := func(typ loop.EventType, text string) { s.emit(Event{Type: typ, Text: text}) }
	emit(loop.EventRunStarted, "hi")
	emit(loop.EventResponseDelta, "a")
	emit(loop.EventResponseDelta, "b")

	f := s.Follow(0)
	select {
	case <-f.Ready():
	default:
		t.Fatal("Ready is not closed with three events logged")
	}
	b, err := f.Next(t.Context())
	if err != nil || len(b.Events) != 2 || b.Events[1].Text != "ab" || b.Events[1].Seq != 3 || b.Missed != 0 || f.Cursor() != 3 {
		t.Fatalf("first batch = %+v, %v; cursor %d", b, err, f.Cursor())
	}
	ready := f.Ready()
	select {
	case <-ready:
		t.Fatal("Ready is closed with nothing new")
	default:
	}

	// Next waits for the next event.
	got := make(chan Batch, 1)
	go func() {
		b, _ := f.Next(t.Context())
		got <- b
	}()
	emit(loop.EventResponse, "ab")
	if b := <-got; len(b.Events) != 1 || b.Events[0].Seq != 4 {
		t.Fatalf("batch after waiting = %+v", b)
	}
	<-ready // the event woke the channel handed out before it

	// Behind by more than the log keeps: the gap is counted.
	late := s.Follow(0)
	for range 3 {
		emit(loop.EventWarning, "w")
	}
	b = late.Take()
	if b.Missed != 3 || len(b.Events) != 4 || b.Events[0].Seq != 4 {
		t.Fatalf("late batch = missed %d, %d events from %d", b.Missed, len(b.Events), b.Events[0].Seq)
	}

	// A context ending stops the wait.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := late.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context = %v", err)
	}

	// Closing: what is left is handed out first, then ErrClosed.
	emit(loop.EventRunEnded, "")
	s.close()
	if b, err := f.Next(t.Context()); err != nil || len(b.Events) != 4 || b.Events[3].Type != loop.EventRunEnded {
		t.Fatalf("last batch = %+v, %v", b, err)
	}
	if _, err := f.Next(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after the end = %v, want ErrClosed", err)
	}
}

// A face's items go among the events where they were placed; one placed
// past the batch (its request raced the read) waits for the next batch,
// so a prompt's marker is always met before its run's first event.
func TestInterleave(t *testing.T) {
	t.Parallel()
	type mark struct {
		name  string
		after int64
	}
	evs := []Event{{Seq: 3}, {Seq: 4}, {Seq: 6}}
	items := []mark{{"a", 2}, {"b", 3}, {"c", 3}, {"d", 6}, {"e", 7}}
	var got []string
	rest := Interleave(evs, items, func(m mark) int64 { return m.after }, 6,
		func(e Event) { got = append(got, fmt.Sprint(e.Seq)) },
		func(m mark) { got = append(got, m.name) })
	if want := []string{"a", "3", "b", "c", "4", "6", "d"}; !slices.Equal(got, want) || len(rest) != 1 || rest[0].name != "e" {
		t.Errorf("order %v, rest %v; want %v and e left", got, rest, want)
	}
	got = nil
	rest = Interleave([]Event{{Seq: 8}}, rest, func(m mark) int64 { return m.after }, 8,
		func(e Event) { got = append(got, fmt.Sprint(e.Seq)) },
		func(m mark) { got = append(got, m.name) })
	if !slices.Equal(got, []string{"e", "8"}) || len(rest) != 0 {
		t.Errorf("next batch: order %v, rest %v", got, rest)
	}
}
