package sandbox

import (
	"strings"
	"testing"
)

// An omission after a head that filled most of the budget still leaves the
// tail its half: output that reaches Wait in drains, one of which already
// dropped some, keeps its last lines (TestWaitCapsOutput failed about once
// in a hundred loaded runs for this).
func TestCapBufOmitKeepsTailBudget(t *testing.T) {
	t.Parallel()
	b := newCapBuf(100)
	for i := range 9 {
		b.write("line 000" + string(rune('0'+i)) + "\n") // 90 bytes, under the budget
	}
	b.omit(5000)
	b.write("line 0997\nline 0998\nline 0999\n")
	got := b.String()
	if !strings.HasSuffix(got, "line 0998\nline 0999\n") {
		t.Errorf("the tail lost its last lines: %q", got)
	}
	head, omitted, tail := b.parts()
	if len(head) != 50 || len(tail) != 30 || omitted != 5000+40 {
		t.Errorf("head %d, tail %d, omitted %d", len(head), len(tail), omitted)
	}
}
