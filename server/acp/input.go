package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// MaxLineSize is the longest message (one line of JSON, newline excluded)
// zero acp reads from the client: 64 MiB, room for an editor's answer to
// fs/read_text_file for a file as big as text_editor handles
// (MaxReadTextFile, 32 MiB) with its JSON escaping. Lines over the 10 MiB
// the ACP library reads reach it with their long strings (file text,
// embedded resources) set aside, so a message that long but made of
// countless short values is refused as if it were over the limit. A longer
// line is read past without being kept and answered with a JSON-RPC error;
// the connection goes on:
//   - a request whose id can be found gets an "Invalid request" (-32600)
//     error for that id;
//   - a response to one of zero's own requests (fs/read_text_file) fails
//     that request with an error naming the limit, so the tool that waited
//     for it reports an error instead of hanging;
//   - anything else gets a "Parse error" (-32700) with a null id.
const MaxLineSize = 64 << 20

// sdkScannerMax is the buffer of the bufio.Scanner acp-go-sdk v0.13.5
// reads its input with: on a longer line it closes the connection.
const sdkScannerMax = 10 << 20

// sdkLineLimit is the longest line, newline included, handed to the SDK as
// it is, clear of the scanner's edge. A longer line (up to MaxLineSize)
// reaches the SDK with its long strings set aside (see stash).
const sdkLineLimit = sdkScannerMax - 64<<10

// maxEnvelopeValue bounds the id or method kept while a line is read past.
const maxEnvelopeValue = 4 << 10

// tooLargeMessage is the message of the error that stands in for a
// response longer than MaxLineSize (fsError recognises it).
const tooLargeMessage = "Message too large"

// inputFilter copies the client's lines to the SDK. It answers the lines
// the SDK would silently drop (text that is not JSON, JSON that is not a
// JSON-RPC message) and the lines it cannot read (too long), and it shrinks
// lines between the SDK's limit and MaxLineSize by setting their long
// strings aside in stash.
type inputFilter struct {
	src   io.Reader
	dst   *io.PipeWriter // the SDK's input
	out   io.Writer      // the client: answers the filter gives itself
	stash *stash
	log   *slog.Logger
	buf   []byte // the line being read, kept between small lines
}

// run filters until src ends. It closes dst when src ends and returns
// src's error (nil at EOF).
func (f *inputFilter) run() error {
	r := bufio.NewReaderSize(f.src, 64<<10)
	for {
		line, over, n, err := f.readLine(r)
		var werr error
		switch {
		case over != nil:
			werr = f.refuse(over.envelope(), n, fmt.Sprintf("the message is more than %d bytes (%d MiB), the most zero accepts on one line", MaxLineSize, MaxLineSize>>20))
		case len(bytes.TrimSpace(line)) > 0:
			werr = f.handle(line)
		}
		if werr != nil {
			if errors.Is(werr, io.ErrClosedPipe) {
				return nil // the SDK stopped reading: Serve is ending
			}
			f.dst.CloseWithError(werr)
			return werr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				f.dst.Close()
				return nil
			}
			f.dst.CloseWithError(err)
			return err
		}
	}
}

// readLine reads one line without its newline. A line longer than
// MaxLineSize is not kept: over has scanned it for its envelope and n is
// its length. err is the reader's (io.EOF after a last line without a
// newline).
func (f *inputFilter) readLine(r *bufio.Reader) (line []byte, over *envelopeScan, n int64, err error) {
	if cap(f.buf) > 1<<20 {
		f.buf = nil // do not keep a big line's buffer for the small ones
	}
	buf := f.buf[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		data := chunk
		if err == nil {
			data = chunk[:len(chunk)-1]
		}
		if over == nil && int64(len(buf))+int64(len(data)) > MaxLineSize {
			over = &envelopeScan{}
			over.feed(buf)
			n = int64(len(buf))
			buf = nil
		}
		if over != nil {
			over.feed(data)
			n += int64(len(data))
		} else {
			buf = append(buf, data...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over == nil {
			f.buf = buf
		}
		return buf, over, n, err
	}
}

// handle passes one line (at most MaxLineSize) on, or answers it.
func (f *inputFilter) handle(line []byte) error {
	if len(line)+1 <= sdkLineLimit {
		if reply := checkLine(line); reply != nil {
			_, err := f.out.Write(reply)
			return err
		}
		return f.pass(line)
	}
	// Longer lines go to the SDK with their long strings set aside; the
	// short line left is checked as a short line is (it is valid JSON
	// exactly when the whole line is, every string set aside having been
	// decoded).
	small, keys, ok := f.stash.shrink(line)
	if !ok || !json.Valid(small) {
		f.stash.drop(keys)
		_, err := f.out.Write(rpcErrorLine(-32700, "Parse error", "the line is not valid JSON"))
		return err
	}
	var scan envelopeScan
	scan.feed(small)
	env := scan.envelope()
	if reply := env.check(); reply != nil {
		f.stash.drop(keys)
		_, err := f.out.Write(reply)
		return err
	}
	if len(small)+1 > sdkLineLimit {
		f.stash.drop(keys)
		return f.refuse(env, int64(len(line)), fmt.Sprintf("the message is %d bytes and, without its long strings, still more than the %d MiB the ACP library reads on one line", len(line), sdkScannerMax>>20))
	}
	f.log.Debug("acp: a long message reaches the SDK with its long strings set aside", "bytes", len(line), "sent", len(small))
	return f.pass(small)
}

// pass writes a line to the SDK.
func (f *inputFilter) pass(line []byte) error {
	if _, err := f.dst.Write(line); err != nil {
		return err
	}
	_, err := f.dst.Write([]byte{'\n'})
	return err
}

// refuse answers a message zero does not read (n bytes long) as
// MaxLineSize's documentation says.
func (f *inputFilter) refuse(env envelope, n int64, why string) error {
	kind := "unidentified"
	var err error
	switch {
	case env.hasMethod && env.id != nil:
		kind = "request"
		_, err = f.out.Write(rpcErrorLineID(env.id, -32600, "Invalid request", why))
	case !env.hasMethod && env.id != nil && env.response:
		// A response to one of zero's requests: that request must fail,
		// not wait for ever. The SDK gets an error response in its place.
		kind = "response"
		err = f.pass(errorResponse(env.id, -32600, tooLargeMessage, why))
	default:
		_, err = f.out.Write(rpcErrorLine(-32700, "Parse error", why))
	}
	method := env.method
	if len(method) > 64 {
		method = method[:64] + "…"
	}
	f.log.Warn("acp: refused a message too long to read", "bytes", n, "kind", kind, "method", method)
	return err
}

// errorResponse is a JSON-RPC error response to id, without a newline.
func errorResponse(id json.RawMessage, code int, message, detail string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message, "data": map[string]any{"error": detail}},
	})
	return b
}

// rpcErrorLineID is a JSON-RPC error response to id, as a line.
func rpcErrorLineID(id json.RawMessage, code int, message, detail string) []byte {
	return append(errorResponse(id, code, message, detail), '\n')
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw json.RawMessage) bool {
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

// envelope is what a JSON-RPC message says of itself at its top level.
type envelope struct {
	object    bool            // the line is one JSON object
	id        json.RawMessage // nil when absent, unusable or too long to keep
	hasID     bool
	hasMethod bool
	method    string // "" when the method is not a string or too long to keep
	methodOK  bool   // the method is a non-empty string
	response  bool   // a result or an error
}

// check returns the error line for an envelope the SDK cannot handle, as
// checkLine does for a whole line; nil when it is a JSON-RPC message.
func (e envelope) check() []byte {
	switch {
	case !e.object:
		return rpcErrorLine(-32600, "Invalid request", "a message must be a JSON object")
	case !e.hasMethod && !e.hasID:
		return rpcErrorLine(-32600, "Invalid request", "a message needs a method or an id")
	case e.hasMethod && !e.methodOK:
		return rpcErrorLine(-32600, "Invalid request", "method must be a non-empty string")
	case e.hasID && e.id == nil:
		return rpcErrorLine(-32600, "Invalid request", "id must be a string, a number or null")
	}
	return nil
}

// envelopeScan reads the top level of a JSON object as it streams past,
// keeping only its id and method (each up to maxEnvelopeValue bytes) and
// whether it has a result or an error: memory stays small however long
// the line. It expects valid JSON and gives up (no object) on what it
// cannot follow.
type envelopeScan struct {
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

func (s *envelopeScan) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case esStart:
			switch {
			case isSpace(c):
			case c == '{':
				s.state = esKey
			default:
				s.state = esBad
			}
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
			switch {
			case isSpace(c):
			case c == ':':
				s.state = esValue
			default:
				s.state = esBad
			}
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
			return
		}
	}
}

func (s *envelopeScan) keep(c byte) {
	if !s.capture {
		return
	}
	if len(s.val) < maxEnvelopeValue {
		s.val = append(s.val, c)
	} else {
		s.valLong = true
	}
}

// finish records the value just read.
func (s *envelopeScan) finish() {
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

// envelope is what the scan found; an incomplete or malformed object is
// not an object.
func (s *envelopeScan) envelope() envelope {
	e := envelope{object: s.state == esEnd}
	if !e.object {
		return e
	}
	e.hasID = s.hasID
	if s.hasID && !s.idLong && validID(s.id) {
		e.id = s.id
	}
	e.hasMethod = s.hasMeth
	if s.hasMeth && s.methodAt == '"' {
		if s.methLong {
			e.methodOK = true
		} else if json.Unmarshal(s.method, &e.method) == nil && e.method != "" {
			e.methodOK = true
		}
	}
	e.response = !s.hasMeth && s.hasRes
	return e
}
