package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// lineWriter serialises whole lines onto the client's stream: the SDK and
// the input filter (which answers malformed lines itself) both write here.
// It also tells waiters when a line holding a given needle went out, so a
// new session's first notification follows the session/new answer that
// made the session known to the client.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	watches map[string]chan struct{}
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n, err := lw.w.Write(p)
	for needle, ch := range lw.watches {
		if bytes.Contains(p, []byte(needle)) {
			close(ch)
			delete(lw.watches, needle)
		}
	}
	return n, err
}

// watch returns a channel closed once a line containing needle was written.
func (lw *lineWriter) watch(needle string) <-chan struct{} {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.watches == nil {
		lw.watches = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	lw.watches[needle] = ch
	return ch
}

// rpcErrorLine is a JSON-RPC error response with a null id, for input that
// has no usable id.
func rpcErrorLine(code int, message, detail string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message, "data": map[string]any{"error": detail}},
	})
	return append(b, '\n')
}

// checkLine returns the error response for a line the SDK cannot handle,
// or nil when the line is a JSON-RPC message.
func checkLine(line []byte) []byte {
	if !json.Valid(line) {
		return rpcErrorLine(-32700, "Parse error", "the line is not valid JSON")
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return rpcErrorLine(-32600, "Invalid request", "a message must be a JSON object")
	}
	if msg.Method == nil && msg.ID == nil {
		return rpcErrorLine(-32600, "Invalid request", "a message needs a method or an id")
	}
	if msg.Method != nil {
		var m string
		if json.Unmarshal(msg.Method, &m) != nil || m == "" {
			return rpcErrorLine(-32600, "Invalid request", "method must be a non-empty string")
		}
	}
	if msg.ID != nil && !validID(msg.ID) {
		return rpcErrorLine(-32600, "Invalid request", "id must be a string, a number or null")
	}
	return nil
}
