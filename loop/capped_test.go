package loop

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapText(t *testing.T) {
	t.Parallel()
	if got := capText("short", 10); got != "short" {
		t.Errorf("capText kept %q", got)
	}
	s := strings.Repeat("é", 100) // 200 bytes
	got := capText(s, 40)
	if !utf8.ValidString(got) || !strings.Contains(got, "omitted") || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éé") {
		t.Errorf("capText = %q", got)
	}
}

func TestHeadTail(t *testing.T) {
	t.Parallel()
	var h headTail
	h.max = 20
	h.WriteString("0123456789")
	if got := h.String(); got != "0123456789" {
		t.Errorf("under the cap: %q", got)
	}
	var all strings.Builder
	all.WriteString("0123456789")
	for i := range 1000 {
		line := strings.Repeat(string(rune('a'+i%26)), 7) + "\n"
		h.WriteString(line)
		all.WriteString(line)
	}
	got := h.String()
	full := all.String()
	if !strings.HasPrefix(got, full[:10]) || !strings.HasSuffix(got, full[len(full)-10:]) {
		t.Errorf("head/tail lost: %q", got)
	}
	if len(h.tail) > 2*10 || !strings.Contains(got, "omitted") {
		t.Errorf("memory not bounded (tail %d) or no marker: %q", len(h.tail), got)
	}
}
