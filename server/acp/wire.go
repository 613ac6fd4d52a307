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
	n, err := lw.w.Write(placeElicitation(p))
	if err == nil {
		n = len(p)
	}
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

// The keys of an elicitation request's _meta that hold its sessionId and
// toolCallId until the wire puts them in its params (placeElicitation).
const (
	metaSessionID  = "zero/sessionId"
	metaToolCallID = "zero/toolCallId"
)

// elicitationMethod is how the SDK writes an elicitation request's method,
// before its params.
var elicitationMethod = []byte(`"method":"elicitation/create"`)

// placeElicitation moves the sessionId and toolCallId of an elicitation
// request out of its _meta into its params, where ACP's schema has them
// (acp-go-sdk v0.13.5's request type has no field for them); any other
// line is as it was.
func placeElicitation(line []byte) []byte {
	if !bytes.Contains(line[:min(len(line), 256)], elicitationMethod) {
		return line
	}
	var msg map[string]json.RawMessage
	var params map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["_meta"], &meta) != nil {
		return line
	}
	for key, field := range map[string]string{metaSessionID: "sessionId", metaToolCallID: "toolCallId"} {
		if v, ok := meta[key]; ok {
			params[field] = v
			delete(meta, key)
		}
	}
	if len(meta) == 0 {
		delete(params, "_meta")
	} else {
		params["_meta"], _ = json.Marshal(meta)
	}
	var err error
	if msg["params"], err = json.Marshal(params); err != nil {
		return line
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(out, '\n')
}
