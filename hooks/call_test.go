//go:build unix

package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCallScriptGetsPayloadAndAnswersInOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	layer := filepath.Join(dir, "extensions")
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, layer, MessageLoopPromptsAfter, "_20_echo.sh", `
cat > "$OUT/first.json"
pwd > "$OUT/cwd"
printf '%s %s %s' "$ZERO_HOOK_POINT" "$ZERO_HOOK_EXTENSION" "$ZERO_SESSION" > "$OUT/env"
printf '{"seen": ["_20_echo"], "extras": {"b": "2"}}'`)
	writeScript(t, layer, MessageLoopPromptsAfter, "_40_second.sh", `cat > "$OUT/second.json"`)

	reg := NewRegistry()
	reg.Register(MessageLoopPromptsAfter, "_10_first", func(_ context.Context, p Payload) error {
		tp := p.(*testPayload)
		tp.Seen = append(tp.Seen, "_10_first")
		tp.Extras = map[string]string{"a": "1"}
		return nil
	})
	reg.Register(MessageLoopPromptsAfter, "_30_check", func(_ context.Context, p Payload) error {
		tp := p.(*testPayload)
		tp.Seen = append(tp.Seen, "_30_check:b="+tp.Extras["b"]) // proves the answer landed first
		return nil
	})
	var ws warnings
	s := mustResolve(t, reg, []Layer{{Name: "user", Dir: layer}}, Options{
		OnWarning: ws.add,
		Env:       []string{"OUT=" + out, "ZERO_SESSION=s-42"},
	})
	p := &testPayload{}
	if err := s.Call(t.Context(), MessageLoopPromptsAfter, p); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if w := ws.get(); len(w) > 0 {
		t.Fatalf("warnings: %v", w)
	}

	want := &testPayload{Extras: map[string]string{"a": "1", "b": "2"}, Seen: []string{"_10_first", "_20_echo", "_30_check:b=2"}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	stdin := func(name string) any {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("stdin of script is not JSON: %v: %q", err, b)
		}
		return v
	}
	wantFirst := map[string]any{
		"point": "message_loop_prompts_after", "extension": "_20_echo",
		"payload": map[string]any{"extras": map[string]any{"a": "1"}, "seen": []any{"_10_first"}},
	}
	if diff := cmp.Diff(wantFirst, stdin("first.json")); diff != "" {
		t.Errorf("first script's stdin (-want +got):\n%s", diff)
	}
	wantSecond := map[string]any{
		"point": "message_loop_prompts_after", "extension": "_40_second",
		"payload": map[string]any{
			"extras": map[string]any{"a": "1", "b": "2"},
			"seen":   []any{"_10_first", "_20_echo", "_30_check:b=2"},
		},
	}
	if diff := cmp.Diff(wantSecond, stdin("second.json")); diff != "" {
		t.Errorf("second script's stdin (-want +got):\n%s", diff)
	}
	cwd, _ := os.ReadFile(filepath.Join(out, "cwd"))
	wantCwd, _ := filepath.EvalSymlinks(filepath.Join(layer, MessageLoopPromptsAfter))
	gotCwd, _ := filepath.EvalSymlinks(strings.TrimSpace(string(cwd)))
	if gotCwd != wantCwd {
		t.Errorf("script cwd = %q, want %q", gotCwd, wantCwd)
	}
	env, _ := os.ReadFile(filepath.Join(out, "env"))
	if got, want := string(env), "message_loop_prompts_after _20_echo s-42"; got != want {
		t.Errorf("script env = %q, want %q", got, want)
	}
}

func TestCallScriptFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string // body after #!/bin/sh; $PIDFILE is a per-case path
		raw     bool   // script is the whole file
		timeout time.Duration
		want    []error // every sentinel the single warning must match; nil = no warning expected
		inText  []string
		hangs   bool // the script starts a child whose pid is in $PIDFILE and must be gone afterwards
	}{
		{
			name:   "non-zero exit",
			script: "echo boom >&2; echo '{\"seen\":[\"ignored\"]}'; exit 3",
			want:   []error{ErrScriptFailed},
			inText: []string{"exit status 3", "stderr: boom", "_20_bad"},
		},
		{
			name:   "garbage on stdout",
			script: "echo hello world",
			want:   []error{ErrBadAnswer},
			inText: []string{`"hello world"`},
		},
		{
			name:   "two objects",
			script: `echo '{"seen":["x"]}{"seen":["y"]}'`,
			want:   []error{ErrBadAnswer},
		},
		{
			name:   "array",
			script: `echo '["x"]'`,
			want:   []error{ErrBadAnswer},
		},
		{
			name:   "truncated object",
			script: `printf '{"seen":["x"'`,
			want:   []error{ErrBadAnswer},
		},
		{
			name:   "answer field rejected by the payload",
			script: `echo '{"block": true}'`,
			want:   []error{ErrAnswerRejected, ErrFieldNotAllowed},
			inText: []string{`"block"`},
		},
		{
			name:   "wrong field type rejected by the payload",
			script: `echo '{"seen": "not a list"}'`,
			want:   []error{ErrAnswerRejected},
		},
		{
			name:    "hanging script is killed with its children",
			script:  `sleep 600 & echo $! > "$PIDFILE"; wait`,
			timeout: 300 * time.Millisecond,
			want:    []error{ErrScriptTimeout},
			inText:  []string{"300ms"},
			hangs:   true,
		},
		{
			name:   "background child holding stdout is killed",
			script: `sleep 60 & echo $! > "$PIDFILE"; echo '{"seen":["ignored"]}'`,
			want:   []error{ErrScriptFailed},
			inText: []string{"background process"},
			hangs:  true,
		},
		{
			name:   "interpreter missing",
			script: "#!/nonexistent/interpreter\n",
			raw:    true,
			want:   []error{ErrScriptFailed},
		},
		{
			name:   "long stderr is cut to its tail",
			script: `i=0; while [ $i -lt 400 ]; do echo "line $i of noise"; i=$((i+1)); done >&2; echo LAST >&2; exit 1`,
			want:   []error{ErrScriptFailed},
			inText: []string{"stderr: …", "LAST"},
		},
		{name: "empty stdout is no change", script: "echo to stderr only >&2"},
		{name: "empty object is no change", script: "echo '  {}  '"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			layer := filepath.Join(dir, "ext")
			pidfile := filepath.Join(dir, "pid")
			if tt.raw {
				writeFile(t, filepath.Join(layer, ToolExecuteBefore, "_20_bad.sh"), tt.script, 0o755)
			} else {
				writeScript(t, layer, ToolExecuteBefore, "_20_bad.sh", tt.script)
			}
			reg := NewRegistry()
			reg.Register(ToolExecuteBefore, "_10_before", mark("_10_before"))
			reg.Register(ToolExecuteBefore, "_30_after", mark("_30_after"))
			var ws warnings
			s := mustResolve(t, reg, []Layer{{Name: "user", Dir: layer}}, Options{
				Timeout:   tt.timeout,
				OnWarning: ws.add,
				Env:       []string{"PIDFILE=" + pidfile},
			})
			p := &testPayload{}
			if err := s.Call(t.Context(), ToolExecuteBefore, p); err != nil {
				t.Fatalf("Call: %v (a failing script must not fail Call)", err)
			}
			if diff := cmp.Diff(&testPayload{Seen: []string{"_10_before", "_30_after"}}, p); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
			got := ws.get()
			if tt.want == nil {
				if len(got) != 0 {
					t.Errorf("warnings = %v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d warnings, want exactly 1: %v", len(got), got)
			}
			w := got[0]
			if w.Point != ToolExecuteBefore || w.Extension != "_20_bad" || filepath.Base(w.Path) != "_20_bad.sh" {
				t.Errorf("warning names %s/%s (%s), want %s/_20_bad (_20_bad.sh)", w.Point, w.Extension, w.Path, ToolExecuteBefore)
			}
			for _, sentinel := range tt.want {
				if !errors.Is(w.Err, sentinel) || !errors.Is(w, sentinel) {
					t.Errorf("warning %q does not match %v", w, sentinel)
				}
			}
			for _, s := range tt.inText {
				if !strings.Contains(w.Error(), s) {
					t.Errorf("warning %q does not contain %q", w, s)
				}
			}
			if len(w.Error()) > maxStderr+1024 {
				t.Errorf("warning is %d bytes long", len(w.Error()))
			}
			if tt.hangs {
				waitGone(t, readPID(t, pidfile))
			}
		})
	}
}

func TestCallBuiltinErrorStops(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	reg := NewRegistry()
	reg.Register(HistAddBefore, "_10_ok", mark("_10_ok"))
	reg.Register(HistAddBefore, "_20_fail", func(context.Context, Payload) error { return errBoom })
	reg.Register(HistAddBefore, "_30_never", mark("_30_never"))
	s := mustResolve(t, reg, nil, Options{})
	p := &testPayload{}
	err := s.Call(t.Context(), HistAddBefore, p)
	if !errors.Is(err, errBoom) {
		t.Fatalf("Call err = %v, want it to wrap errBoom", err)
	}
	var ee *ExtensionError
	if !errors.As(err, &ee) || ee.Point != HistAddBefore || ee.Extension != "_20_fail" {
		t.Errorf("Call err = %#v, want *ExtensionError for %s/_20_fail", err, HistAddBefore)
	}
	if got, want := err.Error(), "hooks: hist_add_before/_20_fail: boom"; got != want {
		t.Errorf("err.Error() = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"_10_ok"}, p.Seen); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}

func TestCallContextCancelKillsScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	layer := filepath.Join(dir, "ext")
	pidfile := filepath.Join(dir, "pid")
	writeScript(t, layer, ToolExecuteAfter, "_10_hang.sh", `sleep 600 & echo $! > "$PIDFILE"; wait`)
	reg := NewRegistry()
	reg.Register(ToolExecuteAfter, "_20_never", mark("_20_never"))
	var ws warnings
	s := mustResolve(t, reg, []Layer{{Name: "user", Dir: layer}}, Options{OnWarning: ws.add, Env: []string{"PIDFILE=" + pidfile}})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pidc := make(chan int, 1)
	done := make(chan struct{})
	go func() { // owned by this test: it waits on done below
		defer close(done)
		pid := readPID(t, pidfile)
		pidc <- pid
		cancel()
	}()
	p := &testPayload{}
	began := time.Now()
	err := s.Call(ctx, ToolExecuteAfter, p)
	<-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Call err = %v, want context.Canceled", err)
	}
	if d := time.Since(began); d > 2*time.Minute { // far from the milliseconds it takes, far below the sleep
		t.Errorf("Call took %v after cancel", d)
	}
	if len(p.Seen) != 0 {
		t.Errorf("extensions after the cancelled script ran: %v", p.Seen)
	}
	if w := ws.get(); len(w) != 0 {
		t.Errorf("cancellation produced warnings: %v", w)
	}
	waitGone(t, <-pidc)

	if err := s.Call(ctx, ToolExecuteAfter, p); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a cancelled ctx = %v, want context.Canceled", err)
	}
}

// TestCallEmptyPoint is not parallel: testing.AllocsPerRun refuses to run in a parallel test.
func TestCallEmptyPoint(t *testing.T) {
	dir := t.TempDir()
	layer := filepath.Join(dir, "ext")
	marker := filepath.Join(dir, "ran")
	writeScript(t, layer, ResponseStream, "_10_touch.sh", `touch "$MARKER"`)
	reg := NewRegistry()
	reg.Register(ResponseStreamEnd, "_10_x", mark("_10_x"))
	s := mustResolve(t, reg, []Layer{{Name: "user", Dir: layer}}, Options{Env: []string{"MARKER=" + marker}})

	ctx := t.Context()
	p := &testPayload{}
	var nilSet *Set
	for _, tc := range []struct {
		name string
		s    *Set
	}{{"resolved set", s}, {"nil set", nilSet}} {
		allocs := testing.AllocsPerRun(1000, func() {
			if err := tc.s.Call(ctx, ResponseStreamChunk, p); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Call on an empty point allocates %v times", tc.name, allocs)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a script ran for an empty point (marker stat: %v)", err)
	}
	if s.Has(ResponseStreamChunk) {
		t.Errorf("Has(%s) = true", ResponseStreamChunk)
	}
	if len(p.Seen) != 0 {
		t.Errorf("extensions ran: %v", p.Seen)
	}
	// The same script does run at its own point, so the marker check above means something.
	if err := s.Call(ctx, ResponseStream, p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("script at %s did not run: %v", ResponseStream, err)
	}
}

func TestNilSet(t *testing.T) {
	t.Parallel()
	var s *Set
	if err := s.Call(t.Context(), AgentInit, &testPayload{}); err != nil {
		t.Errorf("Call = %v", err)
	}
	if s.Has(AgentInit) || s.Names(AgentInit) != nil || s.Extensions(AgentInit) != nil || s.ActivePoints() != nil {
		t.Errorf("nil Set is not empty")
	}
}

func TestCallNilPayload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	layer := filepath.Join(dir, "ext")
	writeScript(t, layer, ProcessChainEnd, "_10_read.sh", `cat > "$OUT"`)
	writeScript(t, layer, ProcessChainEnd, "_20_answer.sh", `echo '{"x":1}'`)
	var ws warnings
	out := filepath.Join(dir, "stdin.json")
	s := mustResolve(t, nil, []Layer{{Name: "user", Dir: layer}}, Options{OnWarning: ws.add, Env: []string{"OUT=" + out}})
	if err := s.Call(t.Context(), ProcessChainEnd, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if got, want := string(b), `{"point":"process_chain_end","extension":"_10_read","payload":null}`; got != want {
		t.Errorf("stdin = %s, want %s", got, want)
	}
	if w := ws.get(); len(w) != 1 || !errors.Is(w[0].Err, ErrAnswerRejected) || w[0].Extension != "_20_answer" {
		t.Errorf("warnings = %v, want one ErrAnswerRejected for _20_answer", w)
	}
}
