package lsp

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/server"
)

// protocolTS is the VS Code extension's copy of the zero/* protocol.
const protocolTS = "../../editors/vscode/src/protocol.ts"

// tsInterfaces reads protocol.ts's exported interfaces: name -> field ->
// its type as written, with "?" first when optional.
func tsInterfaces(t *testing.T, src string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	field := regexp.MustCompile(`^\s+(\w+)(\?)?: ([^;]+);`)
	for _, m := range regexp.MustCompile(`(?s)export interface (\w+) \{\n(.*?)\n\}`).FindAllStringSubmatch(src, -1) {
		fields := map[string]string{}
		for _, line := range strings.Split(m[2], "\n") {
			if f := field.FindStringSubmatch(line); f != nil {
				typ := strings.TrimSpace(strings.SplitN(f[3], "//", 2)[0])
				fields[f[1]] = f[2] + typ
			}
		}
		out[m[1]] = fields
	}
	return out
}

// tsUnion reads the string literals of `export type name = 'a' | 'b';`.
func tsUnion(t *testing.T, src, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)export type ` + name + ` =(.*?);`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("protocol.ts has no type %s", name)
	}
	var out []string
	for _, l := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, l[1])
	}
	return out
}

// goConsts reads the values of the string constants of the Go files of dir
// whose type is typ or, untyped, whose name starts with typ.
func goConsts(t *testing.T, dir, typ string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok || vs.Type != nil && types(vs.Type) != typ || vs.Type == nil && !strings.HasPrefix(vs.Names[0].Name, typ) {
					return true
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						out = append(out, s)
					}
				}
				return true
			})
		}
	}
	slices.Sort(out)
	return out
}

func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	}
	return ""
}

// jsonFields are the fields of struct type t as encoding/json sees them:
// an embedded struct's fields are its own.
func jsonFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

// tsKind is what JSON a TypeScript type stands for.
func tsKind(typ string) string {
	switch {
	case strings.HasSuffix(typ, "[]"):
		return "array"
	case typ == "number":
		return "number"
	case typ == "boolean":
		return "boolean"
	case typ == "unknown", typ == "string | number":
		return "any"
	case typ == "string", strings.HasPrefix(typ, "'"), strings.HasSuffix(typ, "| string"), strings.HasSuffix(typ, "| null"):
		return "string"
	}
	return "object"
}

// goKind is what JSON a Go type is sent as.
func goKind(t reflect.Type) string {
	if t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface {
		return "any"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return goKind(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	}
	return "object"
}

// TestProtocolTS: protocol.ts, which the VS Code extension is built on,
// says what the Go types send. Each of its interfaces has exactly the
// JSON fields of its Go type, of the same kind, optional where Go omits
// them when empty; its event types, stop reasons and statuses are the Go
// constants. A field renamed or added in Go fails here until the
// extension's copy says the same.
func TestProtocolTS(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(protocolTS)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	goTypes := map[string]reflect.Type{
		"ZeroEvent":           reflect.TypeFor[server.Event](),
		"Question":            reflect.TypeFor[ask.Question](),
		"QuestionField":       reflect.TypeFor[ask.Field](),
		"QuestionOption":      reflect.TypeFor[ask.Option](),
		"AnswerParams":        reflect.TypeFor[answerParams](),
		"FileDiff":            reflect.TypeFor[server.FileDiff](),
		"Usage":               reflect.TypeFor[server.Usage](),
		"UsageCount":          reflect.TypeFor[server.UsageCount](),
		"UsageByRole":         reflect.TypeFor[server.UsageByRole](),
		"TokenChange":         reflect.TypeFor[server.TokenChange](),
		"Choice":              reflect.TypeFor[server.Choice](),
		"ZeroCapabilities":    reflect.TypeFor[zeroCapabilities](),
		"NewSessionParams":    reflect.TypeFor[newSessionParams](),
		"NewSessionResult":    reflect.TypeFor[newSessionResult](),
		"PromptParams":        reflect.TypeFor[promptParams](),
		"PromptResult":        reflect.TypeFor[PromptResult](),
		"SessionParams":       reflect.TypeFor[sessionParams](),
		"RenameSessionParams": reflect.TypeFor[renameParams](),
		"ApproveParams":       reflect.TypeFor[approveParams](),
		"SessionsParams":      reflect.TypeFor[sessionsParams](),
		"SessionInfo":         reflect.TypeFor[server.Info](),
		"SessionsResult":      reflect.TypeFor[sessionsResult](),
		"LoadSessionResult":   reflect.TypeFor[loadSessionResult](),
		"TrustParams":         reflect.TypeFor[trustParams](),
		"TrustFile":           reflect.TypeFor[server.TrustFile](),
		"TrustState":          reflect.TypeFor[server.TrustState](),
		"Mode":                reflect.TypeFor[server.Mode](),
		"Plan":                reflect.TypeFor[server.Plan](),
		"PlanItem":            reflect.TypeFor[server.PlanItem](),
		"SetModeParams":       reflect.TypeFor[setModeParams](),
		"Command":             reflect.TypeFor[server.Command](),
		"CommandsResult":      reflect.TypeFor[commandsResult](),
		"ImageRef":            reflect.TypeFor[server.ImageRef](),
		"Attachment":          reflect.TypeFor[attachmentParams](),
		"ImageParams":         reflect.TypeFor[imageParams](),
		"ImageResult":         reflect.TypeFor[imageResult](),
		"CheckpointRef":       reflect.TypeFor[server.CheckpointRef](),
		"RewindReport":        reflect.TypeFor[server.RewindReport](),
		"ForkRef":             reflect.TypeFor[server.ForkRef](),
		"CheckpointInfo":      reflect.TypeFor[checkpointInfo](),
		"CheckpointsResult":   reflect.TypeFor[checkpointsResult](),
		"UndoParams":          reflect.TypeFor[undoParams](),
		"RewindParams":        reflect.TypeFor[rewindParams](),
		"ConflictData":        reflect.TypeFor[conflictData](),
		"ForkParams":          reflect.TypeFor[forkParams](),
		"ForkResult":          reflect.TypeFor[newSessionResult](),
		"CompactParams":       reflect.TypeFor[compactParams](),
	}
	notGo := map[string]string{ // interfaces with no Go type of ours, and why
		"WorkspaceFolder":       "go.lsp.dev/protocol's",
		"InitializationOptions": "read field by field from initialize's initializationOptions",
	}
	ts := tsInterfaces(t, src)
	for name, fields := range ts {
		gt, ok := goTypes[name]
		if !ok {
			if notGo[name] == "" {
				t.Errorf("protocol.ts's %s has no Go type in this test: name the type it mirrors", name)
			}
			continue
		}
		// A client may leave out any field of what it sends (params): only
		// what Zero sends says by omitempty whether a field may be missing.
		in := strings.HasSuffix(name, "Params")
		seen := map[string]bool{}
		for _, f := range jsonFields(gt) {
			tag := f.Tag.Get("json")
			jname, opts, _ := strings.Cut(tag, ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if jname == "" {
				jname = f.Name
			}
			seen[jname] = true
			typ, ok := fields[jname]
			if !ok {
				t.Errorf("%s (%s) sends %q, which protocol.ts's %s lacks", gt, f.Name, jname, name)
				continue
			}
			optional := strings.HasPrefix(typ, "?")
			typ = strings.TrimPrefix(typ, "?")
			omits := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			if optional != omits && !in {
				t.Errorf("%s.%s: optional %v in protocol.ts, but Go omits it when empty: %v", name, jname, optional, omits)
			}
			if tk, gk := tsKind(typ), goKind(f.Type); tk != gk && tk != "any" && gk != "any" {
				t.Errorf("%s.%s: %s (%s) in protocol.ts, %s (%s) in Go", name, jname, typ, tk, f.Type, gk)
			}
		}
		for jname := range fields {
			if !seen[jname] {
				t.Errorf("protocol.ts's %s.%s is sent by no field of %s", name, jname, gt)
			}
		}
	}
	for name := range goTypes {
		if ts[name] == nil {
			t.Errorf("protocol.ts lost interface %s", name)
		}
	}

	for _, c := range []struct{ ts, dir, goType string }{
		{"EventType", "../../loop", "EventType"},
		{"ToolStatus", "../../loop", "Tool"},
		{"StopReason", "../../loop", "Stop"},
	} {
		want := goConsts(t, c.dir, c.goType)
		if c.ts == "EventType" {
			want = append(want, goConsts(t, "..", "loop.EventType")...)
		}
		if c.ts == "StopReason" {
			want = append(want, server.StopIntervened)
		}
		got := tsUnion(t, src, c.ts)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("protocol.ts's %s is %q; the Go constants are %q", c.ts, got, want)
		}
	}
	if got, want := tsUnion(t, src, "PullStatus"), []string{server.PullPulling, server.PullDone, server.PullFailed}; !slices.Equal(got, want) {
		t.Errorf("protocol.ts's PullStatus is %q, want %q", got, want)
	}
	if got, want := tsUnion(t, src, "ApprovalStatus"), []string{server.ApprovalApproved, server.ApprovalDenied, server.ApprovalCancelled}; !slices.Equal(got, want) {
		t.Errorf("protocol.ts's ApprovalStatus is %q, want %q", got, want)
	}
}

// TestProtocolTSMethods: every request protocol.ts's Methods names is one
// the server serves (zero/event is the notification it sends).
func TestProtocolTSMethods(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(protocolTS)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)export const Methods = \{(.*?)\} as const;`).FindSubmatch(b)
	if m == nil {
		t.Fatal("protocol.ts has no Methods")
	}
	names := regexp.MustCompile(`'(zero/\w+)'`).FindAllSubmatch(m[1], -1)
	if len(names) == 0 {
		t.Fatal("protocol.ts's Methods names nothing")
	}
	codes := map[string]int{"invalidParams": -32602, "methodNotFound": -32601, "serverNotInitialized": codeServerNotInitialized,
		"requestFailed": codeRequestFailed, "requestCancelled": codeRequestCancelled, "conflict": codeConflict}
	ec := regexp.MustCompile(`(?s)export const ErrorCodes = \{(.*?)\} as const;`).FindSubmatch(b)
	if ec == nil {
		t.Fatal("protocol.ts has no ErrorCodes")
	}
	for _, c := range regexp.MustCompile(`(\w+): (-?\d+),`).FindAllSubmatch(ec[1], -1) {
		want, ok := codes[string(c[1])]
		if got, _ := strconv.Atoi(string(c[2])); !ok || got != want {
			t.Errorf("protocol.ts's ErrorCodes.%s is %s; the server's is %d (known: %v)", c[1], c[2], want, ok)
		}
	}
	for _, n := range names {
		name := string(n[1])
		if _, ok := methods[name]; !ok && name != "zero/event" {
			t.Errorf("protocol.ts's Methods has %s, which the server does not serve", name)
		}
	}
}
