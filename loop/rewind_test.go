package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zeroagent/zero/loop"
)

// A rewind to the mark taken before a run takes the run out of what the
// model sees next, summaries laid since included; the numbering goes on
// from the mark.
func TestRewindHistoryToAMark(t *testing.T) {
	t.Parallel()
	chat := &fakeModel{replies: []reply{{content: respond("one")}, {content: respond("two")}, {content: respond("three")}}}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 100000})
	if _, err := env.sess.Run(runCtx(t), "first question"); err != nil {
		t.Fatal(err)
	}
	mark := env.sess.Mark()
	if mark.Messages == 0 {
		t.Fatalf("mark after a run = %+v", mark)
	}
	if _, err := env.sess.Run(runCtx(t), "second question"); err != nil {
		t.Fatal(err)
	}
	if err := env.sess.RewindHistory(mark); err != nil {
		t.Fatal(err)
	}
	if got := env.sess.Mark(); got != mark {
		t.Errorf("mark after the rewind = %+v, want %+v", got, mark)
	}
	if _, err := env.sess.Run(runCtx(t), "third question"); err != nil {
		t.Fatal(err)
	}
	text := chat.requestText(2)
	if !strings.Contains(text, "first question") || strings.Contains(text, "second question") || strings.Contains(text, "two") {
		t.Errorf("the request after the rewind:\n%s", text)
	}
	for _, bad := range []loop.HistoryMark{{Messages: 999}, {Messages: -1}, {Summaries: 5}} {
		if err := env.sess.RewindHistory(bad); !errors.Is(err, loop.ErrHistoryState) {
			t.Errorf("RewindHistory(%+v) = %v, want ErrHistoryState", bad, err)
		}
	}
}

// Compact lays one summary over the whole history, asks the utility model
// with the focus in its request, and a rewind to the mark before it takes
// it back.
func TestCompactAndRewindIt(t *testing.T) {
	t.Parallel()
	chat := &fakeModel{replies: []reply{{content: respond(strings.Repeat("a long answer ", 80))}, {content: respond("after")}, {content: respond("again")}}}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 100000})
	if _, err := loopCompactEmpty(env.sess); !errors.Is(err, loop.ErrNothingToCompact) {
		t.Errorf("Compact of an empty history = %v, want ErrNothingToCompact", err)
	}
	if _, err := env.sess.Run(runCtx(t), "first question"); err != nil {
		t.Fatal(err)
	}
	mark := env.sess.Mark()
	ch, err := env.sess.Compact(runCtx(t), "the parser")
	if err != nil {
		t.Fatal(err)
	}
	if ch.After >= ch.Before || ch.After == 0 {
		t.Errorf("Compact = %+v", ch)
	}
	asked := env.util.requests()
	if len(asked) != 1 || !strings.Contains(asked[0].Messages[1].Content, "focus on: the parser") {
		t.Fatalf("the utility model was asked %+v", asked)
	}
	if ev := env.rec.ofType(loop.EventHistoryCompressed); len(ev) != 1 || ev[0].Tokens == nil {
		t.Errorf("history_compressed = %+v", ev)
	}
	if _, err := env.sess.Run(runCtx(t), "next"); err != nil {
		t.Fatal(err)
	}
	if text := chat.requestText(1); !strings.Contains(text, "SUMMARY-1") || strings.Contains(text, "a long answer a long answer") {
		t.Errorf("the request after compacting:\n%s", text)
	}
	if err := env.sess.RewindHistory(mark); err != nil {
		t.Fatal(err)
	}
	if _, err := env.sess.Run(runCtx(t), "next"); err != nil {
		t.Fatal(err)
	}
	if text := chat.requestText(2); strings.Contains(text, "SUMMARY-1") || !strings.Contains(text, "a long answer a long answer") {
		t.Errorf("the request after rewinding the compaction:\n%s", text)
	}
}

func loopCompactEmpty(s *loop.Session) (loop.TokenChange, error) {
	return s.Compact(context.Background(), "")
}
