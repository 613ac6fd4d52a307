package mcp

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/server/jsonline"
)

// hygiene keeps two rules of the protocol that mcp-go's stdio transport
// does not: a request the client cancelled (notifications/cancelled) gets
// no response, and no progress notification follows the response to the
// request whose token it carries, or the client's cancelling it (the SDKs report both as errors: "a
// response for an unknown message ID", "a progress notification for an
// unknown token"). mcp-go writes notifications from a goroutine of its own,
// so a progress sent before the answer can reach the wire after it; and it
// answers a cancelled call like any other. hygiene sees each line the
// client sends (in) and each line mcp-go writes (drop).
type hygiene struct {
	mu        sync.Mutex
	cancelled map[string]bool   // request ids the client cancelled, until their response is dropped
	tokens    map[string]string // progress token → the id of the request it belongs to
	answered  map[string]bool   // progress tokens whose request was answered
}

// maxTracked bounds each map: a client that cancels or tokens calls it
// never gets answered for cannot grow memory without end.
const maxTracked = 4096

// scanLimit is the longest client line hygiene parses; requests and
// cancellations are far shorter, and longer lines are tool arguments.
const scanLimit = 64 << 10

func newHygiene() *hygiene {
	return &hygiene{cancelled: map[string]bool{}, tokens: map[string]string{}, answered: map[string]bool{}}
}

// key is a JSON id or token as written, without surrounding space, so a
// number and a string of the same digits stay apart.
func key(raw json.RawMessage) string { return string(bytes.TrimSpace(raw)) }

// in notes what a client line means for later responses.
func (h *hygiene) in(line []byte) {
	if len(line) > scanLimit {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case m.Method == string(mcp.MethodNotificationCancelled) && len(m.Params.RequestID) > 0:
		id := key(m.Params.RequestID)
		bound(h.cancelled)
		h.cancelled[id] = true
		h.answer(id) // the client forgot the request's progress token with it
	case m.Method != "" && len(m.ID) > 0 && len(m.Params.Meta.ProgressToken) > 0:
		bound(h.tokens)
		h.tokens[key(m.Params.Meta.ProgressToken)] = key(m.ID)
	}
}

// drop reports whether a line mcp-go is about to write must not reach the
// client: the response to a cancelled request, or progress for a request
// already answered.
func (h *hygiene) drop(line []byte) bool {
	env := jsonline.ScanEnvelope(line)
	switch env.Kind() {
	case jsonline.Response:
		id := key(env.ID)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.answer(id)
		if h.cancelled[id] {
			delete(h.cancelled, id)
			return true
		}
	case jsonline.Notification:
		if env.Method != string(mcp.MethodNotificationProgress) || len(line) > scanLimit {
			return false
		}
		var m struct {
			Params struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			return false
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.answered[key(m.Params.ProgressToken)]
	}
	return false
}

// answer ends the progress of request id: its tokens go to answered. The
// caller holds mu.
func (h *hygiene) answer(id string) {
	for tok, of := range h.tokens {
		if of == id {
			delete(h.tokens, tok)
			bound(h.answered)
			h.answered[tok] = true
		}
	}
}

// bound empties a map that reached maxTracked: forgetting old entries costs
// at worst a late line the client then ignores.
func bound[V any](m map[string]V) {
	if len(m) >= maxTracked {
		clear(m)
	}
}
