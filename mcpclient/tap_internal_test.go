package mcpclient

import (
	"fmt"
	"strings"
	"testing"
)

// The tap keeps the raw schema of an elicitation request, whatever the
// reads' boundaries (one byte at a time too), as a stdio line or an SSE
// data line; other lines, lines too long, and more than maxSchemas
// unclaimed schemas are not kept.
func TestLineTap(t *testing.T) {
	const schema = `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}}`
	req := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":{"message":"m","requestedSchema":` + schema + `}}`
	}
	stream := req("1") + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"roots/list"}` + "\n" +
		"event: message\r\ndata: " + req(`"s3"`) + "\r\n\r\n" +
		`{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"` + strings.Repeat("x", maxTapped) + `","requestedSchema":{}}}` + "\n" +
		strings.Repeat("y", 1000) + `"elicitation/create"` + "\n" +
		req("5") // no newline yet: not a line
	for _, chunk := range []int{1, 7, 4096, len(stream)} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			sc := &schemas{}
			tap := &lineTap{to: sc}
			for s := stream; s != ""; {
				n := min(chunk, len(s))
				tap.feed([]byte(s[:n]))
				s = s[n:]
			}
			if got := string(sc.take("int64:1")); got != schema {
				t.Errorf("stdio line: %q", got)
			}
			if got := string(sc.take("string:s3")); got != schema {
				t.Errorf("SSE data line: %q", got)
			}
			if sc.take("int64:1") != nil || sc.take("int64:2") != nil || sc.take("int64:4") != nil || sc.take("int64:5") != nil || len(sc.ids) != 0 {
				t.Errorf("kept more: %q", sc.ids)
			}
		})
	}
	sc := &schemas{}
	tap := &lineTap{to: sc}
	for i := range 3 * maxSchemas {
		tap.feed([]byte(req(fmt.Sprint(i)) + "\n"))
	}
	if len(sc.byID) != maxSchemas || sc.take("int64:0") != nil || sc.take(fmt.Sprintf("int64:%d", 3*maxSchemas-1)) == nil {
		t.Errorf("kept %d schemas", len(sc.byID))
	}
}
