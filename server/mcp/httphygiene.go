package mcp

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"strings"
	"sync"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// sessionHygiene keeps the hygiene rules (see hygiene) on the streamable
// HTTP transport, one hygiene per MCP session. There mcp-go answers a
// request the client cancelled on the request's own stream, and writes a
// session's notifications on whichever of its streams reads them first, so
// a progress can follow its request's answer there too.
type sessionHygiene struct {
	mu       sync.Mutex
	sessions map[string]*hygiene
}

func (sh *sessionHygiene) of(sid string) *hygiene {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h := sh.sessions[sid]
	if h == nil {
		bound(sh.sessions) // session ids are the client's to make up
		h = newHygiene()
		sh.sessions[sid] = h
	}
	return h
}

func (sh *sessionHygiene) forget(sid string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	delete(sh.sessions, sid)
}

// hygienic shows each message a session's client posts to its hygiene and
// writes the answers through it. Requests without a session (initialize,
// the stateless 2026-07-28 era) have no cancellation to keep track of:
// they pass as they are. It reads at most the limit of a body (see
// limitBody, before it).
func (f *face) hygienic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(mcpserver.HeaderKeySessionID)
		if sid == "" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodDelete {
			next.ServeHTTP(w, r)
			f.hygiene.forget(sid)
			return
		}
		h := f.hygiene.of(sid)
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			if err == nil {
				h.in(body)
			}
		}
		hw := &hygieneWriter{ResponseWriter: w, h: h}
		next.ServeHTTP(hw, r)
		hw.sendHeader()
	})
}

// errReader hands on a body's read error after what was read of it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, cmp.Or(e.err, io.EOF) }

// hygieneWriter drops what hygiene says the client must not get: a
// server-sent event (mcp-go writes each with one Write) or a JSON answer,
// which becomes 202 Accepted with no body. It holds the status until
// something is written, to know which.
type hygieneWriter struct {
	http.ResponseWriter
	h      *hygiene
	status int
	sent   bool
}

const sseMessage = "event: message\ndata: "

func (w *hygieneWriter) WriteHeader(code int) {
	if !w.sent && w.status == 0 {
		w.status = code
	}
}

func (w *hygieneWriter) sendHeader() {
	if !w.sent && w.status != 0 {
		w.sent = true
		w.ResponseWriter.WriteHeader(w.status)
	}
}

func (w *hygieneWriter) Write(p []byte) (int, error) {
	if msg, ok := bytes.CutPrefix(p, []byte(sseMessage)); ok {
		if w.h.drop(bytes.TrimSpace(msg)) {
			return len(p), nil
		}
	} else if !w.sent && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && w.h.drop(bytes.TrimSpace(p)) {
		w.Header().Del("Content-Type")
		w.status = http.StatusAccepted
		w.sendHeader()
		return len(p), nil
	}
	if !w.sent {
		w.status = cmp.Or(w.status, http.StatusOK)
		w.sendHeader()
	}
	return w.ResponseWriter.Write(p)
}

func (w *hygieneWriter) Flush() {
	w.sendHeader()
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (mcp-go sets
// write deadlines through it).
func (w *hygieneWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
