package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// errNotInitialized answers, as an "Invalid request" (-32600) error, every
// request but initialize and ping from a client that has not initialized
// its session (MCP's lifecycle: nothing runs before initialize).
var errNotInitialized = errors.New("server not initialized: send initialize first (only ping is answered before it)")

// markInitialized records that a session completed initialize. The record
// is the face's own: mcp-go's stdio session lives in a package variable
// (initialized once for the whole process) and its HTTP sessions call
// themselves initialized from the start.
func (f *face) markInitialized(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
	if s := mcpserver.ClientSessionFromContext(ctx); s != nil {
		f.initialized.Store(s.SessionID(), true)
	}
}

// forgetSession drops the record of a session that ended (HTTP DELETE).
func (f *face) forgetSession(id string) { f.initialized.Delete(id) }

// requireInitialized is an OnRequestInitialization hook: on the protocol
// versions with a handshake it lets initialize and ping through and
// refuses any other request from a session that has not completed
// initialize, whatever the transport. A request of the stateless
// 2026-07-28 protocol, which has no initialize (its version and
// capabilities travel in each request's _meta), goes through. It also
// refuses the stand-in for a request too long to read (see stdioInput)
// with the too-large error.
func (f *face) requireInitialized(ctx context.Context, _ any, message any) error {
	raw, _ := message.(json.RawMessage)
	var m struct {
		Method mcp.MCPMethod `json:"method"`
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &m)
	if err := f.tooLargeRequest(m.Method, raw); err != nil {
		return err
	}
	if m.Method == mcp.MethodInitialize || m.Method == mcp.MethodPing || mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
		return nil
	}
	if s := mcpserver.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
		if _, ok := f.initialized.Load(s.SessionID()); ok {
			return nil
		}
	}
	return errNotInitialized
}

// requireSession answers, over HTTP, a request that carries no session
// (the client never sent initialize) with a JSON-RPC error instead of
// mcp-go's bare 404: 400 and "server not initialized", as the streamable
// HTTP transport asks of a server that needs sessions. A ping is answered.
// Requests of the stateless 2026-07-28 era go on to mcp-go, which tells
// the client which versions zero serves. It also forgets a session the
// client ended with DELETE. It reads at most the limit of a body (see
// limitBody, before it).
func (f *face) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(mcpserver.HeaderKeySessionID)
		if r.Method == http.MethodDelete && sid != "" {
			next.ServeHTTP(w, r)
			f.forgetSession(sid)
			return
		}
		if r.Method != http.MethodPost || sid != "" || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxMessage))
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			if !f.refuseBodyErr(w, err, body) {
				next.ServeHTTP(w, r)
			}
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method mcp.MCPMethod   `json:"method"`
			Params struct {
				Meta *mcp.Meta `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" ||
			m.Method == mcp.MethodInitialize || mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if m.Method == mcp.MethodPing {
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": mcp.INVALID_REQUEST, "message": errNotInitialized.Error()}})
	})
}

// loopbackOrigin reports whether origin (an Origin header) is a web page
// served from this machine: http or https on localhost, 127.0.0.0/8 or
// ::1, any port, nothing else in it.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Opaque != "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// requireLoopbackOrigin answers 403 to any request whose Origin header is
// not loopback (see loopbackOrigin), before the token is looked at: a web
// page the user visits must not drive zero through the browser, even if it
// could learn the token or rebind its DNS name to 127.0.0.1. Native
// clients send no Origin and pass.
func requireLoopbackOrigin(next http.Handler, log func(origin string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, o := range r.Header.Values("Origin") {
			if !loopbackOrigin(o) {
				log(o)
				http.Error(w, "forbidden: requests from web pages are refused (the Origin is not a loopback address)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
