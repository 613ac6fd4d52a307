package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	maxAnswer   = 1 << 20 // bytes of stdout accepted as an answer
	maxStderr   = 4 << 10 // bytes of stderr kept (the tail) for the warning
	waitDelay   = time.Second
	startTries  = 5
	snippetSize = 80
)

// Call runs the extensions of point in order.
//
// Built-ins get p directly. Scripts get {"point": point, "extension": name, "payload": p.ScriptInput()}
// as JSON on stdin, run with their own directory as working directory, and may print one JSON object
// on stdout; a non-empty one is passed to p.ApplyScript before the next extension runs. Empty stdout
// (or {}) means no change. A failing script (not startable, non-zero exit, garbage on stdout, an
// answer ApplyScript rejects, or a timeout, which kills its whole process group) is reported through
// OnWarning and skipped, and Call goes on. A built-in's error stops Call and is returned as an
// [*ExtensionError]. Cancelling ctx stops Call, kills a running script and returns ctx's error.
//
// Call on a point without extensions costs a map lookup: no allocation, no process. p may be nil for
// points that carry nothing; scripts then get "payload": null and any answer is rejected.
func (s *Set) Call(ctx context.Context, point string, p Payload) error {
	if s == nil {
		return nil
	}
	exts := s.points[point]
	for i := range exts {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := &exts[i]
		if e.fn != nil {
			if err := e.fn(ctx, p); err != nil {
				return &ExtensionError{Point: point, Extension: e.name, Err: err}
			}
			continue
		}
		if err := s.runScript(ctx, point, e, p); err != nil {
			return err
		}
	}
	return nil
}

// scriptInput is the document on a script's stdin.
type scriptInput struct {
	Point     string `json:"point"`
	Extension string `json:"extension"`
	Payload   any    `json:"payload"`
}

// runScript runs one script and applies its answer. Script failures become warnings; the only error
// it returns is ctx's, because only the caller's cancellation may stop the point.
func (s *Set) runScript(ctx context.Context, point string, e *extension, p Payload) error {
	warn := func(err error) {
		s.warn(Warning{Point: point, Extension: e.name, Path: e.path, Err: err})
	}
	var payload any
	if p != nil {
		payload = p.ScriptInput()
	}
	input, err := json.Marshal(scriptInput{Point: point, Extension: e.name, Payload: payload})
	if err != nil {
		// The engine's payload is at fault, not the script, but the point must still go on.
		warn(fmt.Errorf("%w: encode payload: %w", ErrScriptFailed, err))
		return nil
	}

	rctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	stdout := &capBuffer{max: maxAnswer}
	stderr := &tailBuffer{max: maxStderr}
	began := time.Now()
	cmd, err := s.start(rctx, point, e, input, stdout, stderr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		warn(&scriptError{kind: ErrScriptFailed, cause: err})
		return nil
	}
	waitErr := cmd.Wait()
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		// The script exited but something it started still holds its output open; that process
		// belongs to this run, so it goes too.
		_ = killGroup(cmd.Process)
	}
	s.opts.Logger.Debug("hook script ran", "point", point, "extension", e.name,
		"duration", time.Since(began), "stdout_len", stdout.buf.Len(), "stderr_len", stderr.total)

	if err := ctx.Err(); err != nil {
		return err
	}
	errText := stderr.String()
	switch {
	case waitErr != nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		warn(&scriptError{kind: ErrScriptTimeout, detail: "killed after " + s.opts.Timeout.String(), stderr: errText})
		return nil
	case errors.Is(waitErr, exec.ErrWaitDelay):
		warn(&scriptError{kind: ErrScriptFailed, detail: "a background process kept its output open", stderr: errText})
		return nil
	case waitErr != nil:
		warn(&scriptError{kind: ErrScriptFailed, cause: waitErr, stderr: errText})
		return nil
	case stdout.over:
		warn(&scriptError{kind: ErrBadAnswer, detail: fmt.Sprintf("stdout exceeds %d bytes", maxAnswer), stderr: errText})
		return nil
	}
	answer, err := parseAnswer(stdout.buf.Bytes())
	if err != nil {
		warn(&scriptError{kind: ErrBadAnswer, cause: err, detail: "stdout begins " + snippet(stdout.buf.Bytes()), stderr: errText})
		return nil
	}
	if answer == nil {
		return nil
	}
	if p == nil {
		warn(&scriptError{kind: ErrAnswerRejected, detail: "this point takes no answer"})
		return nil
	}
	if err := p.ApplyScript(answer); err != nil {
		warn(&scriptError{kind: ErrAnswerRejected, cause: err})
	}
	return nil
}

// start starts the script in its own process group so a timeout can kill everything it spawned.
// It retries briefly on ETXTBSY: a script written just before (by the user's editor, or a test)
// can still be open for writing in a child another goroutine is forking.
func (s *Set) start(ctx context.Context, point string, e *extension, input []byte, stdout *capBuffer, stderr *tailBuffer) (*exec.Cmd, error) {
	base := s.opts.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	env := slices.Concat(base, s.opts.Env)
	env = append(env, "ZERO_HOOK_POINT="+point, "ZERO_HOOK_EXTENSION="+e.name)
	for try := 1; ; try++ {
		cmd := exec.CommandContext(ctx, e.path)
		cmd.Dir = filepath.Dir(e.path)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(input)
		cmd.Stdout = stdout
		cmd.Stderr = stderr
		setProcessGroup(cmd)
		cmd.Cancel = func() error { return killGroup(cmd.Process) }
		cmd.WaitDelay = waitDelay
		err := cmd.Start()
		if err == nil || !isTextBusy(err) || try == startTries {
			return cmd, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(try) * 10 * time.Millisecond):
		}
	}
}

// parseAnswer accepts empty output, or exactly one JSON object surrounded by white space. It returns
// nil for "no change" (empty output or an empty object).
func parseAnswer(out []byte) (json.RawMessage, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil
	}
	if out[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	if dec.InputOffset() != int64(len(out)) {
		return nil, errors.New("text after the JSON object")
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return json.RawMessage(out), nil
}

func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > snippetSize {
		b = b[:snippetSize]
		for len(b) > 0 && !utf8.Valid(b) { // don't cut a rune in half
			b = b[:len(b)-1]
		}
		return fmt.Sprintf("%q…", b)
	}
	return fmt.Sprintf("%q", b)
}

// scriptError keeps the script's stderr apart from the failure itself, so the log can record what
// went wrong without the script's output, while the user's warning shows both.
type scriptError struct {
	kind   error  // a sentinel from errors.go
	cause  error  // may be nil
	detail string // may be ""
	stderr string // trimmed tail of the script's stderr; may be ""
}

func (e *scriptError) Error() string {
	var b strings.Builder
	b.WriteString(e.kind.Error())
	if e.detail != "" {
		b.WriteString(": " + e.detail)
	}
	if e.cause != nil {
		b.WriteString(": " + e.cause.Error())
	}
	if e.stderr != "" {
		b.WriteString("; stderr: " + e.stderr)
	}
	return b.String()
}

func (e *scriptError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// warnAttrs describes a warning's error for the log without the script's stderr or stdout.
func warnAttrs(w Warning) []any {
	var se *scriptError
	if errors.As(w.Err, &se) {
		attrs := []any{"err", se.kind.Error(), "stderr_len", len(se.stderr)}
		if se.cause != nil {
			attrs = append(attrs, "cause", se.cause.Error())
		}
		return attrs
	}
	return []any{"err", fmt.Sprint(w.Err)}
}

// capBuffer keeps up to max bytes and remembers whether more came; it never fails a write, so the
// script is not killed by SIGPIPE for talking too much.
type capBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

// tailBuffer keeps the last max bytes written, where a failing script's error message usually is.
type tailBuffer struct {
	buf   []byte
	max   int
	total int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += len(p)
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String returns the kept tail, trimmed and valid UTF-8, marked with "…" when the start was dropped.
func (t *tailBuffer) String() string {
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	cut := t.total > len(b)
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), ""))
	if cut && s != "" {
		s = "…" + s
	}
	return s
}
