package sandbox

import (
	"strconv"
	"unicode/utf8"
)

// capBuf accumulates text up to max bytes. Beyond that it keeps the head and
// the most recent tail and counts what fell in between, because the start of
// a command's output (what ran) and its end (how it finished, the error) are
// what a reader needs.
type capBuf struct {
	max     int
	head    []byte
	tail    []byte // grows to twice its budget before being compacted
	dropped int64  // bytes compacted out of tail
	over    bool   // max was exceeded: head is frozen
}

func newCapBuf(max int) capBuf { return capBuf{max: max} }

func (b *capBuf) write(s string) {
	if s == "" {
		return
	}
	if !b.over {
		if len(b.head)+len(s) <= b.max {
			b.head = append(b.head, s...)
			return
		}
		b.over = true
		switch keep := b.max / 2; {
		case len(b.head) < keep:
			n := min(keep-len(b.head), len(s))
			b.head = append(b.head, s[:n]...)
			s = s[n:]
		case len(b.head) > keep:
			b.tail = append(b.tail, b.head[keep:]...)
			b.head = b.head[:keep]
		}
	}
	b.tail = append(b.tail, s...)
	// Compacting only at twice the budget keeps appends amortised O(1) even
	// when a program prints megabytes in small chunks.
	if budget := b.tailBudget(); len(b.tail) > 2*budget {
		cut := len(b.tail) - budget
		b.dropped += int64(cut)
		b.tail = b.tail[:copy(b.tail, b.tail[cut:])]
	}
}

func (b *capBuf) tailBudget() int { return max(b.max-len(b.head), 0) }

func (b *capBuf) empty() bool { return len(b.head) == 0 && len(b.tail) == 0 }

// omit records that n bytes were dropped at this point: what is written
// later goes after the omission marker. A head past half the budget is cut
// to half first (its rest counted as omitted too), as write does when it
// first overflows: else the tail would keep only what the head left over,
// which could be one line (TestWaitCapsOutput failed that way when the
// output arrived in a drain that had already dropped some).
func (b *capBuf) omit(n int64) {
	if !b.over {
		if keep := b.max / 2; len(b.head) > keep {
			n += int64(len(b.head) - keep)
			b.head = b.head[:keep]
		}
	}
	b.over = true
	b.dropped += n
}

// parts returns what String joins: the kept head, the number of bytes
// omitted after it, and the kept tail. Cuts are moved to UTF-8 character
// boundaries.
func (b *capBuf) parts() (head []byte, omitted int64, tail []byte) {
	if !b.over {
		return b.head, 0, nil
	}
	head, tail, omitted = b.head, b.tail, b.dropped
	if budget := b.tailBudget(); len(tail) > budget {
		omitted += int64(len(tail) - budget)
		tail = tail[len(tail)-budget:]
	}
	for n := 0; n < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); n++ {
		tail = tail[1:]
		omitted++
	}
	if i := lastRuneStart(head); i >= 0 && !utf8.FullRune(head[i:]) {
		omitted += int64(len(head) - i)
		head = head[:i]
	}
	return head, omitted, tail
}

// String returns the text, with a "[... N bytes omitted ...]" marker where
// text was dropped.
func (b *capBuf) String() string {
	head, omitted, tail := b.parts()
	if !b.over {
		return string(head)
	}
	marker := "\n[... " + strconv.FormatInt(omitted, 10) + " bytes omitted ...]\n"
	out := make([]byte, 0, len(head)+len(marker)+len(tail))
	out = append(out, head...)
	out = append(out, marker...)
	out = append(out, tail...)
	return string(out)
}

// appendBuf appends o's text to b, keeping o's omission (if any) as an
// omission rather than as marker text, so the final count stays exact.
func (b *capBuf) appendBuf(o *capBuf) {
	head, omitted, tail := o.parts()
	b.write(string(head))
	if o.over {
		b.omit(omitted)
		b.write(string(tail))
	}
}

// take empties the buffer and returns what it held.
func (b *capBuf) take() capBuf {
	o := *b
	*b = capBuf{max: b.max}
	return o
}

// lastRuneStart returns the index of the last byte that starts a UTF-8
// sequence within the final utf8.UTFMax bytes of p, or -1.
func lastRuneStart(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			return i
		}
	}
	return -1
}
