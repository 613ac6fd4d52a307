package jsonline

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// The envelope of a line is found while it streams past, whatever the
// order of its members and however it is cut into chunks.
func TestEnvelopeScan(t *testing.T) {
	long := strings.Repeat(`x\"{}[],`, 2000)
	tests := []struct {
		line      string
		object    bool
		id        string
		method    string
		response  bool
		hasMethod bool
		kind      Kind
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"a/b","params":{"t":"` + long + `"}}`, true, "3", "a/b", false, true, Request},
		{`{"params":[{"t":"` + long + `"}],"method":"m","id":"s\"q"}`, true, `"s\"q"`, "m", false, true, Request},
		{` { "id" : 12 , "result" : {"content":"` + long + `"} } `, true, "12", "", true, false, Response},
		{`{"id":null,"error":{"code":1}}`, true, "null", "", true, false, Response},
		{`{"id":{"x":1},"result":1}`, true, "", "", true, false, Response},
		{`{"method":"n","params":"` + long + `"}`, true, "", "n", false, true, Notification},
		{`{"jsonrpc":"2.0"}`, true, "", "", false, false, Invalid},
		{`[1,2]`, false, "", "", false, false, Invalid},
		{`{"id":1,"method":"cut`, false, "", "", false, false, Invalid},
		{`{"id":1,"method":"m"} x`, false, "", "", false, false, Invalid},
	}
	for i, tt := range tests {
		for _, size := range []int{1, 7, len(tt.line)} {
			var s Scanner
			for p := tt.line; p != ""; {
				n := min(size, len(p))
				s.Write([]byte(p[:n]))
				p = p[n:]
			}
			e := s.Envelope()
			if e.Object != tt.object || string(e.ID) != tt.id || e.Method != tt.method || e.Response != tt.response || e.HasMethod != tt.hasMethod || e.Kind() != tt.kind {
				t.Errorf("%d (chunks of %d): envelope %+v (id %s, kind %d), want object %v id %s method %q response %v kind %d", i, size, e, e.ID, e.Kind(), tt.object, tt.id, tt.method, tt.response, tt.kind)
			}
		}
		if e := ScanEnvelope([]byte(tt.line)); e.Object != tt.object || string(e.ID) != tt.id {
			t.Errorf("%d: ScanEnvelope = %+v", i, e)
		}
	}
	// A method or id too long to keep.
	e := ScanEnvelope([]byte(`{"id":"` + strings.Repeat("i", MaxValue) + `","method":"` + strings.Repeat("m", MaxValue) + `"}`))
	if !e.Object || !e.HasID || e.ID != nil || !e.MethodOK || e.Method != "" || e.Kind() != Request {
		t.Errorf("long id and method: %+v", e)
	}
}

// A prefix tells the members it holds whole.
func TestEnvelopeSeen(t *testing.T) {
	var s Scanner
	s.Write([]byte(`{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"arguments":{"message":"aaaa`))
	e := s.Seen()
	if e.Object || string(e.ID) != `"a1"` || e.Method != "tools/call" || e.Kind() != Request {
		t.Errorf("Seen = %+v", e)
	}
	if e := s.Envelope(); e.Object || e.ID != nil || e.HasMethod {
		t.Errorf("Envelope of a prefix = %+v", e)
	}
	s = Scanner{}
	s.Write([]byte(`{"method":"notifications/x","params":{"a":1},"i`))
	if e := s.Seen(); e.Kind() != Notification || e.HasID {
		t.Errorf("Seen = %+v", e)
	}
	s = Scanner{}
	s.Write([]byte(`{"id":1`)) // the id's value may go on
	if e := s.Seen(); e.HasID {
		t.Errorf("Seen of an unfinished id = %+v", e)
	}
}

type readResult struct {
	line string
	over int64 // size of an overlong line
	id   string
	err  error
}

func readAll(t *testing.T, r *Reader) []readResult {
	t.Helper()
	var out []readResult
	for {
		line, over, err := r.ReadLine()
		res := readResult{line: string(line), err: err}
		if over != nil {
			if line != nil {
				t.Errorf("an overlong line came back (%d bytes)", len(line))
			}
			res.over, res.id = over.Size, string(over.Envelope.ID)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("ReadLine: %v", err)
		}
		if errors.Is(err, io.EOF) && res.line == "" && res.over == 0 {
			return out
		}
		out = append(out, res)
		if err != nil {
			return out
		}
	}
}

// Lines up to the maximum come back whole, longer ones are described, and
// the lines after them are read as usual, whatever the reads' sizes.
func TestReader(t *testing.T) {
	const max = 200 << 10
	exact := `{"id":1,"method":"m","params":"` + strings.Repeat("e", max-33) + `"}`
	if len(exact) != max {
		t.Fatalf("exact is %d bytes", len(exact))
	}
	long := `{"jsonrpc":"2.0","params":{"text":"` + strings.Repeat("x", max) + `"},"id":"late","method":"m"}`
	input := "small\n" + exact + "\n" + long + "\n\n" + strings.Repeat("y", max+1) + "\r\n" + "last"
	want := []readResult{
		{line: "small"},
		{line: exact},
		{over: int64(len(long)), id: `"late"`},
		{line: ""},
		{over: max + 2},
		{line: "last", err: io.EOF},
	}
	for _, name := range []string{"whole", "one byte", "half"} {
		var src io.Reader = strings.NewReader(input)
		switch name {
		case "one byte":
			src = iotest.OneByteReader(src)
		case "half":
			src = iotest.HalfReader(src)
		}
		got := readAll(t, NewReader(src, max))
		if len(got) != len(want) {
			t.Errorf("%s: %d lines, want %d", name, len(got), len(want))
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				g, w := got[i], want[i]
				g.line, w.line = clip(g.line), clip(w.line)
				t.Errorf("%s: line %d = %+v, want %+v", name, i, g, w)
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// endless is a line of n bytes (newline included) that is never held in
// memory.
type endless struct{ n, off int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.off >= e.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), e.n-e.off))
	for i := range k {
		switch pos := e.off + int64(i); {
		case pos == 0:
			p[i] = '['
		case pos == e.n-1:
			p[i] = '\n'
		default:
			p[i] = '1'
		}
	}
	e.off += int64(k)
	return k, nil
}

// An overlong line costs at most about the maximum in memory, however
// long it is.
func TestReaderMemory(t *testing.T) {
	const max = 4 << 20
	r := NewReader(io.MultiReader(&endless{n: 64 << 20}, strings.NewReader("ok\n")), max)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	line, over, err := r.ReadLine()
	runtime.ReadMemStats(&after)
	if line != nil || over == nil || over.Size != 64<<20-1 || err != nil {
		t.Fatalf("ReadLine = %d bytes, %+v, %v", len(line), over, err)
	}
	if total := after.TotalAlloc - before.TotalAlloc; total > 2*max {
		t.Errorf("reading past a 64 MiB line allocated %d bytes, want at most %d", total, 2*max)
	}
	if line, _, err := r.ReadLine(); !bytes.Equal(line, []byte("ok")) || err != nil {
		t.Errorf("next line = %q, %v", line, err)
	}
}
