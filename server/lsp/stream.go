package lsp

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// maxFrame bounds one message body; a larger frame is skipped with a parse
// error instead of being read into memory.
const maxFrame = 64 << 20

// stream is a jsonrpc2.ObjectStream with LSP's Content-Length framing that
// survives bad input. jsonrpc2's own VSCodeObjectCodec decodes straight from
// the connection, so a body that is not JSON both kills the connection and
// leaves the rest of the body unread; here a frame is read whole first, and
// a body that is not a JSON-RPC message gets an error response (id null)
// while the connection goes on with the next frame.
type stream struct {
	in  io.Reader
	r   *bufio.Reader
	out io.Writer
	log *slog.Logger

	wmu    sync.Mutex // one frame per Write, frames never interleave
	closed atomic.Bool

	endOnce sync.Once
	ended   chan struct{} // closed when the read loop got its final error
	endErr  error         // why reading stopped; read after ended is closed
}

func newStream(in io.Reader, out io.Writer, log *slog.Logger) *stream {
	return &stream{in: in, r: bufio.NewReaderSize(in, 64<<10), out: out, log: log, ended: make(chan struct{})}
}

var _ jsonrpc2.ObjectStream = (*stream)(nil)

// frameError is bad framing or a bad body: answered, then skipped.
type frameError struct {
	code int64
	msg  string
	id   json.RawMessage // the request's id when it could be read
}

func (e *frameError) Error() string { return e.msg }

// ReadObject implements jsonrpc2.ObjectStream.
func (s *stream) ReadObject(v any) error {
	for {
		if s.closed.Load() {
			return s.end(jsonrpc2.ErrClosed)
		}
		err := s.readOne(v)
		var fe *frameError
		if errors.As(err, &fe) {
			s.log.Warn("bad message from the client", "err", fe.msg)
			if werr := s.writeError(fe); werr != nil {
				return s.end(werr)
			}
			continue
		}
		if err != nil {
			return s.end(err)
		}
		return nil
	}
}

func (s *stream) end(err error) error {
	s.endOnce.Do(func() {
		s.endErr = err
		close(s.ended)
	})
	return err
}

// readOne reads one frame into v.
func (s *stream) readOne(v any) error {
	body, err := s.readFrame()
	if err != nil {
		return err
	}
	if !json.Valid(body) {
		return &frameError{code: jsonrpc2.CodeParseError, msg: "parse error: the message body is not valid JSON"}
	}
	if err := json.Unmarshal(body, v); err != nil {
		fe := &frameError{code: jsonrpc2.CodeInvalidRequest, msg: "invalid request: " + err.Error()}
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			fe.msg = "invalid request: batches are not supported"
			return fe
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &probe) == nil && len(probe.ID) > 0 && (probe.ID[0] == '"' || probe.ID[0] == '-' || (probe.ID[0] >= '0' && probe.ID[0] <= '9')) {
			fe.id = probe.ID
		}
		return fe
	}
	return nil
}

// readFrame reads headers up to the blank line, then the body.
func (s *stream) readFrame() ([]byte, error) {
	length, sawHeader := -1, false
	var bad string
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && !sawHeader && line == "" {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank lines between frames
			}
			break
		}
		sawHeader = true
		// A header block whose length was missing leaves its body to be
		// read as header lines; picking Content-Length out of the middle of
		// a line finds the next frame again.
		if i := strings.Index(strings.ToLower(line), "content-length:"); i > 0 {
			line = line[i:]
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = "malformed header line"
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				bad = "bad Content-Length header"
				length = -1
				continue
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &frameError{code: jsonrpc2.CodeParseError, msg: "parse error: " + cmp.Or(bad, "no Content-Length header")}
	}
	if length > maxFrame {
		if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, &frameError{code: jsonrpc2.CodeParseError, msg: fmt.Sprintf("parse error: message of %d bytes is over the %d byte limit", length, maxFrame)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// readLine reads one header line without its line ending (\r\n, or a bare
// \n from lenient clients); a line longer than the read buffer is skipped
// and comes back as a malformed header.
func (s *stream) readLine() (string, error) {
	b, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = s.r.ReadSlice('\n')
		}
		if err != nil {
			return "", err
		}
		return "\x00over-long header line", nil // no colon: counted as malformed
	}
	if err != nil {
		return string(b), err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// WriteObject implements jsonrpc2.ObjectStream.
func (s *stream) WriteObject(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) error {
	buf := make([]byte, 0, len(data)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, data...)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return jsonrpc2.ErrClosed
	}
	_, err := s.out.Write(buf)
	return err
}

// writeError answers a message that could not be read. jsonrpc2.Response
// cannot carry a null id, so the frame is written here.
func (s *stream) writeError(fe *frameError) error {
	id := fe.id
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: fe.code, Message: fe.msg}})
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

// Close implements jsonrpc2.ObjectStream: it stops writes and closes the
// input when it can be closed, so the read loop ends.
func (s *stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if c, ok := s.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// waitReader waits up to d for the read loop to end, and says why it did.
func (s *stream) waitReader(d time.Duration) (ended bool, err error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ended:
		return true, s.endErr
	case <-t.C:
		return false, nil
	}
}
