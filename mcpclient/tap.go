package mcpclient

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// mcp-go decodes a server's request into a map, which loses the order of
// a form's fields (a person is asked name, then seats, then window, as
// the server wrote them; not in alphabetical order). So the readers of a
// server's messages (lineLimit for stdio, sseLimit for HTTP) show each
// line to a lineTap, which keeps the raw requestedSchema of an
// elicitation request by its id, for the question to be built from.
// Anything unexpected (a line too long, the method written otherwise) only
// loses the order: the question is then built from mcp-go's map.

// elicitMethod is how an elicitation request names its method, found in
// the first tapPrefix bytes of its line (servers write method before
// params).
var elicitMethod = []byte(`"elicitation/create"`)

const (
	tapPrefix = 512
	// maxTapped bounds a line kept whole: the schema (at most
	// ask.MaxSchema is used) and the message around it.
	maxTapped = 256 << 10
	// maxSchemas bounds the schemas kept, unclaimed, per connection.
	maxSchemas = 16
)

// schemas are the raw schemas of a connection's elicitation requests, by
// request id, until the question claims its own.
type schemas struct {
	mu   sync.Mutex
	ids  []string
	byID map[string]json.RawMessage
}

func (s *schemas) keep(id string, schema json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]json.RawMessage{}
	}
	if _, ok := s.byID[id]; !ok {
		s.ids = append(s.ids, id)
	}
	s.byID[id] = schema
	for len(s.ids) > maxSchemas {
		delete(s.byID, s.ids[0])
		s.ids = s.ids[1:]
	}
}

// take is the raw schema of the request id, once (nil if none was kept).
func (s *schemas) take(id string) json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.byID[id]
	if ok {
		delete(s.byID, id)
		i := 0
		for s.ids[i] != id {
			i++
		}
		s.ids = append(s.ids[:i], s.ids[i+1:]...)
	}
	return raw
}

// lineTap watches one stream of a server's messages, a line at a time,
// for elicitation requests. Each stream has its own; they share the
// connection's schemas.
type lineTap struct {
	to    *schemas
	line  []byte
	skip  bool // the current line is not kept
	found bool // the current line names the method
}

func (t *lineTap) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if !t.skip {
			t.line = append(t.line, seg...)
			if !t.found && len(t.line) >= tapPrefix {
				t.found = bytes.Contains(t.line[:tapPrefix], elicitMethod)
				t.skip = !t.found
			}
			if len(t.line) > maxTapped {
				t.skip = true
			}
			if t.skip {
				t.line = t.line[:0]
			}
		}
		if i < 0 {
			return
		}
		if !t.skip && (t.found || bytes.Contains(t.line, elicitMethod)) {
			t.keep(t.line)
		}
		if cap(t.line) > 4<<10 {
			t.line = nil
		}
		t.line, t.skip, t.found = t.line[:0], false, false
		p = p[i+1:]
	}
}

// keep reads a line (a stdio line, or an SSE data line) that may hold an
// elicitation request and keeps its schema.
func (t *lineTap) keep(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		line = bytes.TrimPrefix(rest, []byte(" "))
	}
	var msg struct {
		ID     *mcp.RequestId `json:"id"`
		Method string         `json:"method"`
		Params struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.ID.IsNil() || msg.Method != string(mcp.MethodElicitationCreate) || len(msg.Params.RequestedSchema) == 0 {
		return
	}
	t.to.keep(msg.ID.String(), bytes.Clone(msg.Params.RequestedSchema))
}
