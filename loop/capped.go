package loop

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capText keeps the head and the tail of s when it is longer than max
// bytes, with a marker saying how much was left out in between.
func capText(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	half := max / 2
	head, tail := s[:runeFloor(s, half)], s[runeCeil(s, len(s)-half):]
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, len(s)-len(head)-len(tail), tail)
}

func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func runeCeil(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// headTail accumulates text in bounded memory: the first max/2 and the
// last max/2 bytes are kept. The tail is compacted only when it has grown
// to twice its share, so writes cost amortised O(len).
type headTail struct {
	max     int
	head    strings.Builder
	tail    []byte
	dropped int // bytes removed from the front of tail
}

func (h *headTail) WriteString(s string) {
	half := h.max / 2
	if n := half - h.head.Len(); n > 0 && len(h.tail) == 0 {
		n = runeFloor(s, min(n, len(s)))
		h.head.WriteString(s[:n])
		s = s[n:]
	}
	h.tail = append(h.tail, s...)
	if len(h.tail) > 2*half {
		cut := len(h.tail) - half
		h.dropped += cut
		h.tail = append(h.tail[:0], h.tail[cut:]...)
	}
}

func (h *headTail) String() string {
	half := h.max / 2
	tail, dropped := h.tail, h.dropped
	if len(tail) > half {
		dropped += len(tail) - half
		tail = tail[len(tail)-half:]
	}
	if dropped == 0 {
		return h.head.String() + string(tail)
	}
	t := string(tail)
	skip := runeCeil(t, 0)
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", h.head.String(), dropped+skip, t[skip:])
}
