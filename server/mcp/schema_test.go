package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// advertised is each tool's schemas as tools/list sends them.
func advertised(t *testing.T, f *face) map[string]struct{ In, Out map[string]any } {
	t.Helper()
	out := map[string]struct{ In, Out map[string]any }{}
	for name, st := range f.srv.ListTools() {
		b, err := json.Marshal(st.Tool)
		if err != nil {
			t.Fatal(err)
		}
		var tl struct {
			In  map[string]any `json:"inputSchema"`
			Out map[string]any `json:"outputSchema"`
		}
		if err := json.Unmarshal(b, &tl); err != nil {
			t.Fatal(err)
		}
		out[name] = struct{ In, Out map[string]any }{tl.In, tl.Out}
	}
	return out
}

// The schemas come from the argument and result structs: their fields,
// types and descriptions, required when not omitempty. Input schemas
// allow the arguments clients add (no additionalProperties) and have no
// nullable types; the bounds and enums the structs cannot say are there.
func TestSchemasFromStructs(t *testing.T) {
	env := newEnv(t, nil)
	f, err := newFace(Options{Manager: env.Manager, Catalog: env.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	tools := advertised(t, f)
	args := map[string]any{"zero_start": startArgs{}, "zero_run": startArgs{}, "zero_status": statusArgs{}, "zero_reply": replyArgs{},
		"zero_approve": approveArgs{}, "zero_cancel": sessionArgs{}, "zero_sessions": sessionsArgs{}, "zero_trust": trustArgs{},
		"zero_undo": undoArgs{}, "zero_rewind": rewindArgs{}, "zero_fork": forkArgs{}, "zero_compact": compactArgs{}}
	results := map[string]any{"zero_start": startOut{}, "zero_run": runOut{}, "zero_status": statusOut{}, "zero_reply": startOut{},
		"zero_approve": approveOut{}, "zero_cancel": cancelOut{}, "zero_sessions": sessionsOut{}, "zero_trust": trustOut{},
		"zero_undo": rewoundOut{}, "zero_rewind": rewindOut{}, "zero_fork": forkOut{}, "zero_compact": compactOut{}}
	if len(tools) != len(args) {
		t.Fatalf("%d tools, %d argument structs", len(tools), len(args))
	}
	for name, tl := range tools {
		in, _ := json.Marshal(tl.In)
		if strings.Contains(string(in), "additionalProperties") || strings.Contains(string(in), `"null"`) {
			t.Errorf("%s's input schema forbids extra arguments or allows null: %s", name, in)
		}
		props, _ := tl.In["properties"].(map[string]any)
		names, required := jsonFields(reflect.TypeOf(args[name]))
		if diff := cmp.Diff(names, sortedKeys(props)); diff != "" {
			t.Errorf("%s's input properties (-struct +schema):\n%s", name, diff)
		}
		if diff := cmp.Diff(required, anyStrings(tl.In["required"])); diff != "" {
			t.Errorf("%s's required arguments (-struct +schema):\n%s", name, diff)
		}
		for p, s := range props {
			if d, _ := s.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", name, p)
			}
		}
		outProps, _ := tl.Out["properties"].(map[string]any)
		names, required = jsonFields(reflect.TypeOf(results[name]))
		if diff := cmp.Diff(names, sortedKeys(outProps)); diff != "" {
			t.Errorf("%s's output properties (-struct +schema):\n%s", name, diff)
		}
		if diff := cmp.Diff(required, anyStrings(tl.Out["required"])); diff != "" {
			t.Errorf("%s's required results (-struct +schema):\n%s", name, diff)
		}
		compile(t, name, tl.Out)
	}
	status := tools["zero_status"].In["properties"].(map[string]any)
	if w := status["wait"].(map[string]any); w["minimum"] != 0.0 || w["maximum"] != float64(maxWait) || status["since"].(map[string]any)["minimum"] != 0.0 {
		t.Errorf("zero_status bounds: %v", status)
	}
	if ap := tools["zero_approve"].In["properties"].(map[string]any)["approve"].(map[string]any); ap["type"] != "boolean" {
		t.Errorf("approve: %v", ap)
	}
	for _, name := range []string{"zero_undo", "zero_rewind"} {
		if c := tools[name].In["properties"].(map[string]any)["conflicts"].(map[string]any); !slices.Equal(anyStrings(c["enum"]), []string{"keep", "overwrite"}) {
			t.Errorf("%s conflicts: %v", name, c)
		}
	}
	rw := tools["zero_rewind"].In["properties"].(map[string]any)
	if to := rw["to"].(map[string]any); to["type"] != "integer" || to["minimum"] != 1.0 || rw["files"].(map[string]any)["type"] != "boolean" {
		t.Errorf("zero_rewind's arguments: %v", rw)
	}
	stop := tools["zero_run"].Out["properties"].(map[string]any)["stop_reason"].(map[string]any)
	if got := anyStrings(stop["enum"]); !slices.Contains(got, stopApproval) || !slices.Contains(got, "response") {
		t.Errorf("stop_reason enum: %v", got)
	}
}

// jsonFields lists the JSON names of t's fields, sorted, and those
// without omitempty.
func jsonFields(t reflect.Type) (names, required []string) {
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	slices.Sort(names)
	return names, required
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compile compiles a schema as a client would (santhosh-tekuri/jsonschema,
// the validator of mcp-go's own output validation).
func compile(t *testing.T, name string, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	b, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name+".json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name + ".json")
	if err != nil {
		t.Fatalf("%s's output schema does not compile: %v", name, err)
	}
	return s
}

// outputCheck calls tools and checks that each structured result is valid
// against the tool's advertised output schema.
type outputCheck struct {
	t       *testing.T
	c       *client.Client
	schemas map[string]*jsonschema.Schema
	checked map[string]int // tool → results checked
}

func newOutputCheck(t *testing.T, c *client.Client, f *face) *outputCheck {
	o := &outputCheck{t: t, c: c, schemas: map[string]*jsonschema.Schema{}, checked: map[string]int{}}
	for name, tl := range advertised(t, f) {
		o.schemas[name] = compile(t, name, tl.Out)
	}
	return o
}

func (o *outputCheck) call(name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	o.t.Helper()
	out, res := call(o.t, o.c, name, args)
	o.check(name, res)
	return out, res
}

func (o *outputCheck) check(name string, res *mcp.CallToolResult) {
	o.t.Helper()
	if res.StructuredContent == nil {
		o.t.Errorf("%s: no structured result: %s", name, text(res))
		return
	}
	b, _ := json.Marshal(res.StructuredContent)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		o.t.Fatal(err)
	}
	if err := o.schemas[name].Validate(v); err != nil {
		o.t.Errorf("%s's result does not match its output schema: %v\n%s", name, err, b)
	}
	o.checked[name]++
}

// Every tool's real results, in each of their shapes, are valid against
// the output schema the tool advertises.
func TestResultsMatchOutputSchemas(t *testing.T) {
	env := servertest.New(t, servertest.Options{Trust: untrusted(), Policy: askCommands, Replies: []llmtest.Reply{
		{Match: "zq-focus", Content: "SUMMARY: a short one."}, // zero_compact's, first: its request holds the others' messages
		{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
		{Match: "approved-42", Content: answer("ran: approved-42")},
		{Match: "zq-hello", Content: answer("hi there")},
		{Match: "zq-slow", Content: command("sleeping", "sleep 30")},
		{Match: "zq-more", Content: answer("noted"), ChunkSize: 8, HoldAfter: 1}, // the run goes on for zero_reply
	}})
	var f *face
	r := startStdioFace(t, env, clientOpts{}, func(x *face) { f = x })
	o := newOutputCheck(t, r.c, f)

	o.call("zero_sessions", map[string]any{})
	out, res := o.call("zero_run", map[string]any{"message": "risky", "workspace": env.Workspace})
	mustOK(t, res)
	session := out["session"].(string)
	if out["stop_reason"] != stopApproval || out["trust"] == nil {
		t.Fatalf("zero_run = %v", out)
	}
	st, res := o.call("zero_status", map[string]any{"session": session})
	mustOK(t, res)
	if len(st["pending_approvals"].([]any)) == 0 {
		t.Fatalf("zero_status = %v", st)
	}
	id := st["pending_approvals"].([]any)[0].(map[string]any)["id"]
	_, res = o.call("zero_approve", map[string]any{"id": id, "approve": true, "always": true})
	mustOK(t, res)
	last, _ := poll(t, r.c, session, 0, finished)
	o.check("zero_status", mustResult(t, r.c, session))
	if last["result"].(map[string]any)["response"] != "ran: approved-42" {
		t.Fatalf("zero_status = %v", last)
	}
	out, res = o.call("zero_run", map[string]any{"message": "zq-hello", "session": session})
	mustOK(t, res)
	if out["response"] != "hi there" {
		t.Fatalf("zero_run = %v", out)
	}
	out, res = o.call("zero_start", map[string]any{"message": "zq-slow", "session": session})
	mustOK(t, res)
	poll(t, r.c, session, out["cursor"].(float64), func(st map[string]any) bool { // always allowed above: it runs
		return index(toMaps(st["events"]), func(e map[string]any) bool { return e["type"] == "tool_started" }) >= 0
	})
	out, res = o.call("zero_run", map[string]any{"message": "zq-more", "session": session})
	mustOK(t, res)
	if out["intervened"] != true {
		t.Errorf("zero_run on a running session = %v", out)
	}
	out, res = o.call("zero_reply", map[string]any{"message": "and that", "session": session})
	mustOK(t, res)
	if out["intervened"] != true {
		t.Errorf("zero_reply on a running session = %v", out)
	}
	o.call("zero_cancel", map[string]any{"session": session})
	env.Model.Release()
	poll(t, r.c, session, 0, finished)
	o.call("zero_cancel", map[string]any{"session": session})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"zero_rewind", map[string]any{"session": session}},
		{"zero_fork", map[string]any{"session": session}},
		{"zero_compact", map[string]any{"session": session, "focus": "zq-focus"}},
		{"zero_undo", map[string]any{"session": session}},
		{"zero_rewind", map[string]any{"session": session, "to": 1, "conflicts": "keep"}},
	} {
		_, res = o.call(c.tool, c.args)
		mustOK(t, res)
	}
	out, res = o.call("zero_run", map[string]any{"message": "nothing scripted", "workspace": env.Workspace})
	if !res.IsError || out["stop_reason"] != "error" || out["error"] == "" {
		t.Errorf("a failed run = %v", out)
	}
	o.call("zero_trust", map[string]any{"session": session})
	o.call("zero_sessions", map[string]any{})
	for name := range o.schemas {
		if o.checked[name] == 0 {
			t.Errorf("no result of %s was checked", name)
		}
	}
}
