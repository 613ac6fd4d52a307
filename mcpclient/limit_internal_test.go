package mcpclient

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLimits: each reader passes on what is within its bound, in any
// chunking, and fails with ErrMessageTooLarge at the first byte past it.
func TestLimits(t *testing.T) {
	line := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name string
		r    func(io.Reader) io.Reader
		in   string
		keep int // bytes passed on before ErrMessageTooLarge; -1 = all, no error
	}{
		{"lines within", lines(10), line(10) + "\n" + line(10) + "\n\n" + line(3), -1},
		{"line over", lines(10), line(10) + "\n" + line(11) + "\n", 22},
		{"last line over", lines(10), "a\n" + line(11), 13},
		{"body within", body(10), line(10), -1},
		{"body over", body(10), line(11), 11},
		{"events within", sse(12, 100), "data:1234\n\ndata:1234\r\n\r\n", -1},
		{"event over", sse(10, 100), "data:1\n\ndata:12345\n", 19},
		{"event over, no newline", sse(10, 100), "data:123456", 11},
		{"event of many lines", sse(100, 20), "a\nb\nc\nd\ne\nf\n", 10},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			in := io.Reader(strings.NewReader(c.in))
			if chunked {
				in = iotest.OneByteReader(in)
			}
			r := c.r(in)
			var got []byte
			buf := make([]byte, 4)
			var err error
			for err == nil {
				var n int
				n, err = r.Read(buf)
				got = append(got, buf[:n]...)
			}
			switch {
			case c.keep < 0 && err != io.EOF:
				t.Errorf("%s (chunked %v): %v after %d bytes", c.name, chunked, err, len(got))
			case c.keep >= 0 && !errors.Is(err, ErrMessageTooLarge):
				t.Errorf("%s (chunked %v): %v, want ErrMessageTooLarge", c.name, chunked, err)
			case c.keep >= 0 && (len(got) < c.keep || len(got) > c.keep+len(buf)):
				t.Errorf("%s (chunked %v): %d bytes passed on, want about %d", c.name, chunked, len(got), c.keep)
			}
			if c.keep >= 0 {
				if n, err := r.Read(buf); n != 0 || !errors.Is(err, ErrMessageTooLarge) {
					t.Errorf("%s: a read after the refusal gave %d, %v", c.name, n, err)
				}
			}
		}
	}
}

func lines(max int) func(io.Reader) io.Reader {
	return func(r io.Reader) io.Reader { return &lineLimit{r: r, max: max} }
}

func body(max int) func(io.Reader) io.Reader {
	return func(r io.Reader) io.Reader { return &bodyLimit{rc: io.NopCloser(r), left: max} }
}

func sse(max, cost int) func(io.Reader) io.Reader {
	return func(r io.Reader) io.Reader { return &sseLimit{rc: io.NopCloser(r), max: max, maxCost: cost} }
}
