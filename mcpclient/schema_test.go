package mcpclient_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpclient"
)

// init makes this test binary, when ZERO_SCHEMA_MCP is set, a stdio MCP
// server whose tools have the input schemas of schemaTools.
func init() {
	if os.Getenv("ZERO_SCHEMA_MCP") != "" {
		serveSchemas(os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// schemaTools are the tools of the schema server, by name: the input
// schema each lists (nil: none), and a part of the reason Zero offers any
// object instead ("": Zero offers it as it is).
var schemaTools = map[string]struct {
	schema json.RawMessage
	why    string
}{
	"fine":     {json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"^(?!tmp)"}},"required":["q"]}`), ""},
	"none":     {nil, `not "object"`},
	"array":    {json.RawMessage(`{"type":"array","items":{}}`), `not "object"`},
	"huge":     {json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"` + strings.Repeat("x", 20<<10) + `"}}}`), "more than 16384"},
	"deep":     {json.RawMessage(strings.Repeat(`{"type":"object","properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40)), "levels deep"},
	"bogus":    {json.RawMessage(`{"type":"object","properties":{"q":5}}`), "not a JSON Schema"},
	"fileref":  {json.RawMessage(`{"type":"object","properties":{"q":{"$ref":"file:///etc/passwd"}}}`), "not a JSON Schema"},
	"typeless": {json.RawMessage(`{"properties":{"q":{"type":"string"}}}`), `not "object"`},
}

func serveSchemas(in io.Reader, out io.Writer) {
	var tools []map[string]any
	for name, tt := range schemaTools {
		tool := map[string]any{"name": name}
		if tt.schema != nil {
			tool["inputSchema"] = tt.schema
		}
		tools = append(tools, tool)
	}
	list, _ := json.Marshal(map[string]any{"tools": tools})
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpc
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // a notification
		}
		if m.Method == "tools/list" {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, list)
			continue
		}
		if answer(out, m, false, false, "\n", "") != nil {
			return
		}
	}
}

// A server's tool is offered with the server's input schema; a schema
// that is missing, too large, nested too deeply or not a JSON Schema of an
// object is offered as any object instead, with the reason recorded, and
// the server's other tools are unharmed.
func TestHostileSchemas(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, errs := mcpclient.NewPool([]mcpclient.Server{{Name: "schemas", Command: exe, Env: map[string]string{"ZERO_SCHEMA_MCP": "1"}}}, mcpclient.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	defer p.Close()
	listed, errs := p.List(ctx(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	problems := map[string]string{}
	for _, tl := range listed {
		problems[tl.Name] = tl.SchemaProblem
	}
	var offered int
	for _, tool := range (mcpclient.Source{Pool: p}).Tools(ctx(t)) {
		name, ok := strings.CutPrefix(tool.Name(), "schemas.")
		if !ok {
			continue // mcp_resources
		}
		offered++
		specs := tool.(loop.Specified).Specs()
		if len(specs) != 1 || specs[0].Method != "" {
			t.Fatalf("%s's specs: %+v", name, specs)
		}
		got, tt := specs[0].Parameters, schemaTools[name]
		if tt.why == "" {
			if diff := cmp.Diff(decode(t, tt.schema), decode(t, got)); diff != "" || problems[name] != "" {
				t.Errorf("%s's schema was not kept (%s) (-listed +offered):\n%s", name, problems[name], diff)
			}
			continue
		}
		if string(got) != `{"type":"object"}` || !strings.Contains(problems[name], tt.why) {
			t.Errorf("%s's schema is offered as %.200s (problem %q), want any object because %q", name, got, problems[name], tt.why)
		}
	}
	if offered != len(schemaTools) {
		t.Errorf("%d of the server's %d tools are offered", offered, len(schemaTools))
	}
}

func decode(t *testing.T, b json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
