package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server/jsonline"
)

// MaxMessageSize is the longest message zero mcp reads: one line of JSON
// on stdio (newline excluded) or one request body over HTTP. 64 MiB is far
// above any real MCP message (an editor's tool arguments are small); the
// bound is there so that a client cannot make zero hold a message of any
// length. A longer message is never held whole (at most about
// MaxMessageSize of it is) and is answered with a JSON-RPC error saying
// "message too large: N bytes, over the 64 MiB limit":
//   - on stdio it is read past and the connection goes on: a request whose
//     id can be found gets an "Invalid request" (-32600) error for that
//     id; a response to one of zero's own requests (elicitation, roots)
//     fails that request with the error; a notification gets no answer;
//     anything else gets a "Parse error" (-32700) with a null id;
//   - over HTTP the request gets status 413 and the error (-32600) for its
//     id when the id stands in the first part of the body, else for a null
//     id (-32700); the server goes on serving.
const MaxMessageSize = 64 << 20

// methodTooLarge is the reserved method of the request that stands in, on
// stdio, for a request longer than the limit: mcp-go gets it instead and
// requireInitialized refuses it with the too-large error, so the client's
// answer goes out through mcp-go with the request's id. A client that
// sends it itself gets the same error, as it would get one for any method
// zero does not serve.
const methodTooLarge = "zero/message_too_large"

// idPrefix is how much of an HTTP body longer than the limit (by its
// Content-Length) is read to find its id.
const idPrefix = 64 << 10

// tooLargeError is the error for a message of n bytes (0: unknown) over
// the limit max.
func tooLargeError(n, max int64) error {
	limit := fmt.Sprintf("%d bytes", max)
	if max >= 1<<20 && max%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", max>>20)
	}
	if n <= 0 {
		return fmt.Errorf("message too large: over the %s limit", limit)
	}
	return fmt.Errorf("message too large: %d bytes, over the %s limit", n, limit)
}

// tooLargeRequest returns the error requireInitialized answers a request
// with: the stand-in for a request over the limit, or nil for any other.
func (f *face) tooLargeRequest(method mcp.MCPMethod, raw json.RawMessage) error {
	if method != methodTooLarge {
		return nil
	}
	var m struct {
		Params struct {
			Bytes int64 `json:"bytes"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &m)
	return tooLargeError(m.Params.Bytes, f.maxMessage)
}

// lockedWriter serialises writes on the client's stream: mcp-go writes a
// whole line per Write, and so does stdioInput when it answers a line
// itself.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	h  *hygiene // drops what must not reach the client; nil drops nothing
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	if lw.h != nil && lw.h.drop(p) {
		return len(p), nil
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// stdioInput is what mcp-go's stdio transport reads instead of the
// client's stream (which mcp-go would read a line of whatever length): the
// same lines, except that a line over the limit is read past and replaced
// by a short one, or answered here (see MaxMessageSize). mcp-go reads it
// from one goroutine at a time.
type stdioInput struct {
	lines *jsonline.Reader
	max   int64
	out   io.Writer // the client, for the answers the filter gives itself
	log   *slog.Logger
	h     *hygiene // told of every line; nil for none
	// ended, when set, is told once why the client's stream ended (io.EOF
	// when the client closed it), before mcp-go reads that it did.
	ended func(error)

	pending []byte // what is left of the current line (without its newline)
	nl      bool   // a newline follows pending
	err     error  // the error that ended the current line, returned after it
}

func newStdioInput(in io.Reader, max int64, out io.Writer, log *slog.Logger) *stdioInput {
	return &stdioInput{lines: jsonline.NewReader(in, max), max: max, out: out, log: log}
}

// Read hands mcp-go the lines read, as they came. The line being served
// may be the line reader's own buffer: the next line is read only once it
// was served.
func (in *stdioInput) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(in.pending) == 0 && !in.nl {
		if in.err != nil {
			if in.ended != nil {
				in.ended(in.err)
				in.ended = nil
			}
			return 0, in.err
		}
		line, over, err := in.lines.ReadLine()
		in.err = err
		in.pending, in.nl = line, err == nil
		if in.h != nil && over == nil {
			in.h.in(line)
		}
		if over != nil {
			in.pending = in.refuse(over)
			in.nl = in.pending != nil
		}
	}
	n := copy(p, in.pending)
	in.pending = in.pending[n:]
	if len(in.pending) == 0 && in.nl && n < len(p) {
		p[n] = '\n'
		n++
		in.nl = false
	}
	return n, nil
}

// refuse deals with a line over the limit (see MaxMessageSize): it
// returns the line mcp-go gets in its place, or nil when mcp-go gets
// nothing.
func (in *stdioInput) refuse(over *jsonline.Overlong) []byte {
	env := over.Envelope
	usable := env.ID != nil && string(env.ID) != "null"
	tooLarge := tooLargeError(over.Size, in.max)
	var line []byte
	kind := "unidentified"
	switch {
	case env.Kind() == jsonline.Request && usable:
		kind = "request"
		line, _ = json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": env.ID,
			"method": methodTooLarge, "params": map[string]any{"bytes": over.Size}})
	case env.Kind() == jsonline.Response && usable:
		// An answer to one of zero's requests: that request must fail, not
		// wait for ever. mcp-go gets an error response in its place.
		kind = "response"
		line, _ = json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": env.ID,
			"error": map[string]any{"code": mcp.INVALID_REQUEST, "message": tooLarge.Error()}})
	case env.Kind() == jsonline.Notification:
		kind = "notification" // no answer
	default:
		b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": nil,
			"error": map[string]any{"code": mcp.PARSE_ERROR, "message": tooLarge.Error()}})
		if _, err := in.out.Write(append(b, '\n')); err != nil {
			in.log.Debug("mcp: answer to a message too long not sent", "err", err)
		}
	}
	in.log.Warn("mcp: refused a message too long to read", "bytes", over.Size, "kind", kind, "method", cut.Clip(env.Method, 64))
	return line
}

// limitBody caps the body of every request at the limit, so nothing
// behind it (requireSession, mcp-go) reads more, and answers a longer one
// itself with 413 and a JSON-RPC error (see MaxMessageSize). A body of
// unknown length (chunked) is read here first, up to the limit, to know.
func (f *face) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > f.maxMessage {
			var scan jsonline.Scanner
			_, _ = io.Copy(&scan, io.LimitReader(r.Body, idPrefix))
			f.refuseBody(w, scan.Seen(), r.ContentLength)
			return
		}
		body := http.MaxBytesReader(w, r.Body, f.maxMessage)
		if r.ContentLength >= 0 {
			r.Body = body // http.Server ends it at Content-Length, under the cap
			next.ServeHTTP(w, r)
			return
		}
		b, err := io.ReadAll(body)
		body.Close()
		if err != nil {
			if refused := f.refuseBodyErr(w, err, b); refused {
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": nil,
				"error": map[string]any{"code": mcp.PARSE_ERROR, "message": "read request body error: " + err.Error()}})
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		next.ServeHTTP(w, r)
	})
}

// refuseBodyErr answers a request whose body reading failed with err
// because it is over the limit, prefix being what was read of it; it
// reports whether it did.
func (f *face) refuseBodyErr(w http.ResponseWriter, err error, prefix []byte) bool {
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		return false
	}
	var scan jsonline.Scanner
	_, _ = scan.Write(prefix)
	f.refuseBody(w, scan.Seen(), 0)
	return true
}

// refuseBody answers a request body of n bytes (0: unknown) over the
// limit: 413 and a JSON-RPC error for the id seen at its start.
func (f *face) refuseBody(w http.ResponseWriter, seen jsonline.Envelope, n int64) {
	var id any
	code := mcp.PARSE_ERROR
	if seen.ID != nil && string(seen.ID) != "null" {
		id, code = seen.ID, mcp.INVALID_REQUEST
	}
	msg := tooLargeError(n, f.maxMessage).Error()
	f.log.Warn("mcp http: refused a request body too large", "bytes", n, "method", cut.Clip(seen.Method, 64))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id,
		"error": map[string]any{"code": code, "message": msg}})
}
