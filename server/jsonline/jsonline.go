// Package jsonline reads newline-delimited JSON-RPC (one message a line,
// as ACP and MCP send it over stdio) with a bound on the length of a line,
// so a client cannot make the reader hold a line of any length:
//
//   - Reader splits its input into lines of at most a maximum; a longer
//     line streams past without being kept, while a Scanner reads its
//     envelope.
//   - Scanner reads the top level of a JSON object as it streams past and
//     keeps only what a JSON-RPC message says of itself there (Envelope:
//     its id, its method, whether it is a response), in bounded memory, so
//     that a line too long to read can still be answered for its id.
//
// What to answer is the caller's business: the package only reads.
package jsonline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// MaxValue bounds the id and the method a Scanner keeps (in bytes, as
// written): a longer id counts as unusable, a longer method as unknown.
const MaxValue = 4 << 10

// chunkSize is the size of the buffer lines are read through: a line up
// to this long is returned without being copied, a longer one is kept in
// pieces of this size until its end is known.
const chunkSize = 64 << 10

// Reader reads lines of at most a maximum length.
type Reader struct {
	br     *bufio.Reader
	max    int64
	chunks [][]byte // the pieces of the line being read
}

// NewReader returns a Reader of r's lines of at most max bytes (newline
// excluded; max > 0).
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, chunkSize), max: max}
}

// Overlong describes a line longer than the Reader's maximum, which was
// read past without being kept.
type Overlong struct {
	Size     int64    // the line's length in bytes, newline excluded
	Envelope Envelope // the line's envelope, scanned as it went past
}

// ReadLine reads the next line and returns it without its newline. line is
// valid until the next call (it may be the Reader's own buffer). A line
// longer than the maximum is not returned: line is nil and over describes
// it; the memory held meanwhile is bounded by the maximum.
//
// err is nil when the line ended with a newline; otherwise it is the error
// that ended it (io.EOF after a last line without a newline), and the line
// (or over) is still what was read before it. At the end of the input,
// ReadLine returns an empty line and io.EOF.
func (r *Reader) ReadLine() (line []byte, over *Overlong, err error) {
	var (
		n    int64
		scan *Scanner // not nil once the line is over the maximum
	)
	defer func() {
		clear(r.chunks)
		r.chunks = r.chunks[:0]
	}()
	for {
		chunk, err := r.br.ReadSlice('\n')
		data := chunk
		if err == nil {
			data = chunk[:len(chunk)-1]
		}
		if scan == nil && n+int64(len(data)) > r.max {
			scan = &Scanner{}
			for i, c := range r.chunks {
				scan.Write(c)
				r.chunks[i] = nil
			}
		}
		n += int64(len(data))
		full := errors.Is(err, bufio.ErrBufferFull)
		switch {
		case scan != nil:
			scan.Write(data)
			if !full {
				return nil, &Overlong{Size: n, Envelope: scan.Envelope()}, err
			}
		case full:
			r.chunks = append(r.chunks, bytes.Clone(data))
		case len(r.chunks) == 0:
			return data, nil, err // the whole line was in the buffer
		default:
			line = make([]byte, 0, n)
			for _, c := range r.chunks {
				line = append(line, c...)
			}
			return append(line, data...), nil, err
		}
	}
}

// ValidID reports whether raw is a JSON-RPC id: a string, a number or
// null.
func ValidID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !json.Valid(raw) {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return string(raw) == "null"
}

// Envelope is what a JSON-RPC message says of itself at its top level.
type Envelope struct {
	// Object reports that the scan saw one whole JSON object (and nothing
	// after it but space). When it is false the other fields are zero,
	// except in the envelope of a prefix (Scanner.Seen).
	Object bool
	HasID  bool
	// ID is the id as written (a string, a number or null); nil when there
	// is none, when it is of another type or longer than MaxValue.
	ID        json.RawMessage
	HasMethod bool
	// Method is "" when the method is not a string or longer than MaxValue.
	Method   string
	MethodOK bool // the method is a non-empty string (perhaps too long to keep)
	Response bool // no method, and a result or an error
}

// Kind is the sort of JSON-RPC message an Envelope describes.
type Kind int

const (
	Invalid      Kind = iota // not an object, or neither a method nor an id and a result or error
	Request                  // a method and an id
	Notification             // a method and no id
	Response                 // an id and a result or an error, no method
)

// Kind classifies the message by the members it has. It does not judge
// their values: a Request's ID may still be nil (unusable) and its method
// not a string; see ID and MethodOK. Of a prefix's envelope (Seen) it
// tells what the members seen so far make: an id further on would turn a
// Notification into a Request.
func (e Envelope) Kind() Kind {
	switch {
	case e.HasMethod && e.HasID:
		return Request
	case e.HasMethod:
		return Notification
	case e.HasID && e.Response:
		return Response
	}
	return Invalid
}

// ScanEnvelope returns the envelope of a whole line.
func ScanEnvelope(line []byte) Envelope {
	var s Scanner
	s.Write(line)
	return s.Envelope()
}

// Scanner reads the top level of a JSON object as it streams past (its
// Write takes the bytes in pieces of any size), keeping only its id and
// method (each up to MaxValue bytes) and whether it has a result or an
// error: its memory stays small however long the object. It expects valid
// JSON and gives up (no object) on what it cannot follow. The zero value
// is ready to use.
type Scanner struct {
	state    int
	depth    int  // of the value being read: objects and arrays opened
	inStr    bool // in a string of the value being read
	esc      bool // after a backslash in a string
	key      []byte
	keyLong  bool
	capture  bool // the value being read is kept (id, method)
	val      []byte
	valLong  bool
	first    byte // the value's first byte
	id       []byte
	idLong   bool
	hasID    bool
	method   []byte
	methodAt byte
	methLong bool
	hasMeth  bool
	hasRes   bool
}

const (
	esStart   = iota // before the object
	esKey            // expecting a key, a comma or the end
	esInKey          // in a key
	esColon          // after a key
	esValue          // expecting a value
	esInValue        // in a value
	esEnd            // after the object
	esBad
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Write scans the next bytes of the object. It never fails.
func (s *Scanner) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case esStart:
			s.expect(c, '{', esKey)
		case esKey:
			switch {
			case isSpace(c), c == ',':
			case c == '"':
				s.state, s.key, s.keyLong, s.esc = esInKey, s.key[:0], false, false
			case c == '}':
				s.state = esEnd
			default:
				s.state = esBad
			}
		case esInKey:
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.state = esColon
				continue
			}
			if len(s.key) < 16 {
				s.key = append(s.key, c)
			} else {
				s.keyLong = true
			}
		case esColon:
			s.expect(c, ':', esValue)
		case esValue:
			if isSpace(c) {
				continue
			}
			k := string(s.key)
			s.state, s.depth, s.inStr, s.esc = esInValue, 0, false, false
			s.capture = !s.keyLong && (k == "id" || k == "method")
			s.val, s.valLong, s.first = s.val[:0], false, c
			i-- // read c as the value's first byte
		case esInValue:
			if !s.capture && !s.esc {
				// Skip to the next byte that matters.
				set := "\"{}[],"
				if s.inStr {
					set = "\"\\"
				}
				j := bytes.IndexAny(p[i:], set)
				if j < 0 {
					i = len(p) - 1
					continue
				}
				i += j
				c = p[i]
			}
			if s.inStr {
				switch {
				case s.esc:
					s.esc = false
				case c == '\\':
					s.esc = true
				case c == '"':
					s.inStr = false
				}
				s.keep(c)
				continue
			}
			switch c {
			case '"':
				s.inStr = true
			case '{', '[':
				s.depth++
			case '}', ']':
				if s.depth == 0 {
					if c == ']' {
						s.state = esBad
						continue
					}
					s.finish()
					s.state = esEnd
					continue
				}
				s.depth--
			case ',':
				if s.depth == 0 {
					s.finish()
					s.state = esKey
					continue
				}
			}
			s.keep(c)
		case esEnd:
			if !isSpace(c) {
				s.state = esBad
			}
		case esBad:
			return len(p), nil
		}
	}
	return len(p), nil
}

// expect steps to next on want, stays on blanks, and gives up on
// anything else.
func (s *Scanner) expect(c, want byte, next int) {
	switch {
	case isSpace(c):
	case c == want:
		s.state = next
	default:
		s.state = esBad
	}
}

func (s *Scanner) keep(c byte) {
	if !s.capture {
		return
	}
	if len(s.val) < MaxValue {
		s.val = append(s.val, c)
	} else {
		s.valLong = true
	}
}

// finish records the value just read.
func (s *Scanner) finish() {
	if s.keyLong {
		return
	}
	switch string(s.key) {
	case "id":
		s.hasID, s.idLong = true, s.valLong
		s.id = bytes.Clone(bytes.TrimSpace(s.val))
	case "method":
		s.hasMeth, s.methLong, s.methodAt = true, s.valLong, s.first
		s.method = bytes.Clone(bytes.TrimSpace(s.val))
	case "result", "error":
		s.hasRes = true
	}
}

// Envelope is what the scan found: the envelope of a whole object, or, for
// an incomplete or malformed one, no object (and no members).
func (s *Scanner) Envelope() Envelope {
	if s.state != esEnd {
		return Envelope{}
	}
	e := s.Seen()
	e.Object = true
	return e
}

// Seen is what the top-level members read whole so far say, for a prefix
// of an object (a message cut short): Object is false, but ID, Method and
// the rest are filled as Envelope fills them for a whole object. A member
// still being read when the prefix ends does not count, and once the scan
// gave up on malformed input nothing more is seen.
func (s *Scanner) Seen() Envelope {
	e := Envelope{HasID: s.hasID}
	if s.hasID && !s.idLong && ValidID(s.id) {
		e.ID = s.id
	}
	e.HasMethod = s.hasMeth
	if s.hasMeth && s.methodAt == '"' {
		if s.methLong {
			e.MethodOK = true
		} else if json.Unmarshal(s.method, &e.Method) == nil && e.Method != "" {
			e.MethodOK = true
		}
	}
	e.Response = !s.hasMeth && s.hasRes
	return e
}
