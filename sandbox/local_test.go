package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/proctest"
)

// These tests run real bash in a real pseudo-terminal.

// quick are the timeouts of a Wait for a command expected to finish: none.
// The Wait returns when the command completes, however long a loaded
// machine takes; a timeout here would decide the test by the machine's
// speed (a stuck test is a hang that go test's -timeout reports).
var quick = Timeouts{}

func newLocal(t testing.TB, opts LocalOptions) *Local {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	b, err := NewLocal(opts)
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Local.Close: %v", err)
		}
	})
	return b
}

func openShell(t testing.TB, opts LocalOptions) *Shell {
	t.Helper()
	s, err := newLocal(t, opts).OpenShell(t.Context())
	if err != nil {
		t.Fatalf("OpenShell: %v", err)
	}
	return s
}

// run starts command and waits for it to complete.
func run(t testing.TB, s *Shell, command string) Result {
	t.Helper()
	if err := s.Start(command); err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	r, err := s.Wait(t.Context(), quick, nil)
	if err != nil || !r.Done {
		t.Fatalf("Wait for %q = %+v, %v; want Done", command, r, err)
	}
	return r
}

func TestLocalStatePersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A stand-in for venv/bin/activate: sourcing it changes the shell itself.
	activate := "export VIRTUAL_ENV=/opt/venv\nPATH=\"$VIRTUAL_ENV/bin:$PATH\"\ndeactivate() { unset VIRTUAL_ENV; }\n"
	if err := os.WriteFile(filepath.Join(dir, "activate"), []byte(activate), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openShell(t, LocalOptions{Dir: dir})
	steps := []struct{ command, want string }{
		{"pwd", dir + "\n"},
		{"cd sub && export GREETING=hello && LOCALVAR=kept", ""},
		{"pwd; echo $GREETING $LOCALVAR; bash -c 'echo child sees $GREETING'", dir + "/sub\nhello kept\nchild sees hello\n"},
		{"greet() { echo \"hi $1\"; }\nalias ll='echo aliased'", ""},
		{"greet there; ll", "hi there\naliased\n"},
		{"source ../activate", ""},
		{"echo $VIRTUAL_ENV; type -t deactivate; echo ${PATH%%:*}", "/opt/venv\nfunction\n/opt/venv/bin\n"},
		{"false", ""},
		{"echo $?", "1\n"},
	}
	for _, st := range steps {
		if got := run(t, s, st.command).Output; got != st.want {
			t.Errorf("%q output = %q, want %q", st.command, got, st.want)
		}
	}
}

func TestLocalExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		want    int
	}{
		{"true", 0},
		{"false", 1},
		{"(exit 3)", 3},
		{"no-such-command-zero", 127},
		{"echo ok | grep -q nope", 1},
		{"sh -c 'exit 255'", 255},
		{"if true; then\n  (exit 42)\nfi", 42},
		{"for i in 1 2; do", 2}, // syntax error in eval
	}
	s := openShell(t, LocalOptions{})
	for _, tt := range tests {
		// Not parallel: the cases share one shell, which runs one command
		// at a time, and each must see the previous one's state cleared.
		t.Run(tt.command, func(t *testing.T) {
			if got := run(t, s, tt.command).ExitCode; got != tt.want {
				t.Errorf("%q exit code = %d, want %d", tt.command, got, tt.want)
			}
		})
	}
}

func TestLocalMultiLineAndHeredoc(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	tests := []struct {
		name, command, want string
	}{
		{"multi-line", "x=1\nif [ $x = 1 ]; then\n  echo one\nfi\nfor i in a b; do echo $i; done", "one\na\nb\n"},
		{"heredoc", "cat <<'EOF'\n$HOME is not expanded\n  indented 'quotes' \"double\" \\backslash\nEOF", "$HOME is not expanded\n  indented 'quotes' \"double\" \\backslash\n"},
		{"heredoc to file then read", "cat > f.txt <<EOF\nv=$((1+2))\nEOF\ncat f.txt", "v=3\n"},
		{"trailing newline", "echo a\n\n", "a\n"},
		{"empty command", "", ""},
		{"unicode", "echo 'héllo ✓'", "héllo ✓\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { // sequential: one shared shell
			if diff := cmp.Diff(tt.want, run(t, s, tt.command).Output); diff != "" {
				t.Errorf("%q output (-want +got):\n%s", tt.command, diff)
			}
		})
	}
}

// Every byte except NUL reaches bash unchanged: control characters must not
// act on the line discipline (^C, ^U, ^D, DEL) and long lines must not be
// truncated by canonical mode's 4095-byte limit.
func TestLocalCommandTransport(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})

	var payload []byte
	for c := 1; c < 256; c++ {
		if c != '\n' {
			payload = append(payload, byte(c))
		}
	}
	var want strings.Builder
	for _, c := range append(payload, '\n') {
		fmt.Fprintf(&want, "%02x", c)
	}
	want.WriteByte('\n')
	command := "od -An -tx1 -v <<'EOF' | tr -d ' \\n'; echo\n" + string(payload) + "\nEOF"
	if got := run(t, s, command).Output; got != want.String() {
		t.Errorf("bytes seen by bash:\n%s\nwant\n%s", got, want.String())
	}

	long := strings.Repeat("x", 10_000)
	if got := run(t, s, "echo "+long).Output; got != long+"\n" {
		t.Errorf("10000-byte line came back as %d bytes", len(got))
	}
	huge := strings.Repeat("0123456789", 50_000)
	if got := run(t, s, "v='"+huge+"'\necho ${#v}").Output; got != "500000\n" {
		t.Errorf("500 kB command: got %q", got)
	}
	if err := s.Start("echo a\x00b"); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("Start with NUL = %v, want ErrInvalidCommand", err)
	}
}

func TestLocalStreaming(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("for i in 1 2 3; do echo $i; sleep 0.1; done"); err != nil {
		t.Fatal(err)
	}
	var fragments []string
	var first time.Time
	r, err := s.Wait(t.Context(), quick, func(f string) {
		if first.IsZero() {
			first = time.Now()
		}
		fragments = append(fragments, f)
	})
	end := time.Now()
	if err != nil || !r.Done || r.Output != "1\n2\n3\n" {
		t.Fatalf("Wait = %+v, %v", r, err)
	}
	if len(fragments) < 2 {
		t.Errorf("out called %d times (%q), want the lines as they come", len(fragments), fragments)
	}
	if got := strings.Join(fragments, ""); got != r.Output {
		t.Errorf("fragments %q do not add up to the output %q", got, r.Output)
	}
	if lead := end.Sub(first); lead < 150*time.Millisecond {
		t.Errorf("first fragment arrived only %v before the end", lead)
	}
}

func TestLocalTimeoutThenInterrupt(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("sleep 600"); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	r, err := s.Wait(t.Context(), Timeouts{FirstOutput: 200 * time.Millisecond, BetweenOutput: time.Second, Max: 10 * time.Second}, nil)
	if err != nil || r.Done || r.Reason != FirstOutputTimeout {
		t.Fatalf("Wait = %+v, %v; want FirstOutputTimeout", r, err)
	}
	if d := time.Since(begin); d < 200*time.Millisecond {
		t.Errorf("the first-output timeout fired early, after %v", d)
	}
	if !s.Running() {
		t.Fatal("a timeout must not stop the command")
	}
	if err := s.Interrupt(t.Context()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	// Done with 130 long before the sleep would end: it was interrupted.
	r, err = s.Wait(t.Context(), OutputTimeouts, nil)
	if err != nil || !r.Done || r.ExitCode != 130 {
		t.Fatalf("Wait after Interrupt = %+v, %v; want Done with 130", r, err)
	}
}

// A second Wait continues the command the first one gave up on.
func TestLocalWaitContinues(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("echo a; sleep 0.5; echo b"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Wait(t.Context(), Timeouts{FirstOutput: 5 * time.Second, BetweenOutput: 100 * time.Millisecond}, nil)
	if diff := cmp.Diff(Result{Output: "a\n", Reason: BetweenOutputTimeout}, r); diff != "" || err != nil {
		t.Fatalf("first Wait err=%v (-want +got):\n%s", err, diff)
	}
	r, err = s.Wait(t.Context(), OutputTimeouts, nil)
	if diff := cmp.Diff(Result{Output: "b\n", Done: true, Reason: Completed}, r); diff != "" || err != nil {
		t.Fatalf("second Wait err=%v (-want +got):\n%s", err, diff)
	}
}

func TestLocalDialogAndInput(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start(`read -p "Continue? [y/N] " x; echo got $x`); err != nil {
		t.Fatal(err)
	}
	r, err := s.Wait(t.Context(), Timeouts{FirstOutput: 5 * time.Second, BetweenOutput: 5 * time.Second, Dialog: 200 * time.Millisecond}, nil)
	if diff := cmp.Diff(Result{Output: "Continue? [y/N] ", Reason: Dialog}, r); diff != "" || err != nil {
		t.Fatalf("Wait err=%v (-want +got):\n%s", err, diff)
	}
	if err := s.Input("y"); err != nil {
		t.Fatalf("Input: %v", err)
	}
	r, err = s.Wait(t.Context(), quick, nil)
	if err != nil || !r.Done || r.ExitCode != 0 || !strings.Contains(r.Output, "got y") {
		t.Fatalf("Wait after Input = %+v, %v; want Done with \"got y\"", r, err)
	}
}

// Input reaches an external program's stdin, several lines in turn.
func TestLocalInputToProgram(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start(`while IFS= read -r line; do [ "$line" = end ] && break; echo "[$line]"; done; head -n 1`); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"one", "two words", "end", "to head"} {
		if err := s.Input(in); err != nil {
			t.Fatalf("Input(%q): %v", in, err)
		}
	}
	r, err := s.Wait(t.Context(), quick, nil)
	if err != nil || !r.Done || r.Output != "[one]\n[two words]\nto head\n" {
		t.Fatalf("Wait = %+v, %v", r, err)
	}
}

func TestLocalInterrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		command  string
		wantExit int
		minTime  time.Duration // SIGKILL comes only after the grace period
	}{
		{"sleep", "sleep 600", 130, 0},
		{"ignores SIGINT", "trap '' INT; sleep 600", 137, 300 * time.Millisecond},
		{"builtin read", "read x", 130, 0},
		{"pipeline", "sleep 600 | cat", 130, 0},
		{"rest of the line is skipped", "sleep 600; echo not reached", 130, 0},
		{"loop of short jobs", "while :; do sleep 0.02; done", 130, 0},
		// Each job outlives no grace period and ignores SIGINT: SIGKILL
		// would never end the loop; the shell gets SIGINT between jobs.
		{"loop of jobs that ignore SIGINT", `while :; do sh -c "trap '' INT; sleep 0.05"; done`, 130, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openShell(t, LocalOptions{InterruptGrace: 300 * time.Millisecond})
			if err := s.Start(tt.command); err != nil {
				t.Fatal(err)
			}
			r, err := s.Wait(t.Context(), Timeouts{FirstOutput: 100 * time.Millisecond}, nil)
			if err != nil || r.Reason != FirstOutputTimeout {
				t.Fatalf("Wait = %+v, %v", r, err)
			}
			// Interrupt comes back within the guard, long before the
			// commands would end by themselves.
			begin := time.Now()
			ictx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if err := s.Interrupt(ictx); err != nil {
				t.Fatalf("Interrupt: %v", err)
			}
			if d := time.Since(begin); d < tt.minTime {
				t.Errorf("Interrupt took %v, less than the grace period before SIGKILL", d)
			}
			if s.Running() {
				t.Error("Running() after Interrupt")
			}
			r, err = s.Wait(t.Context(), quick, nil)
			if err != nil || !r.Done || r.ExitCode != tt.wantExit || strings.Contains(r.Output, "not reached") {
				t.Fatalf("Wait after Interrupt = %+v, %v; want Done with exit %d", r, err, tt.wantExit)
			}
			// The shell is still usable and exit codes are still exact.
			if r := run(t, s, "echo alive; (exit 7)"); r.Output != "alive\n" || r.ExitCode != 7 {
				t.Errorf("next command = %+v, want \"alive\\n\" exit 7", r)
			}
		})
	}
}

// Cancelling ctx returns at once and leaves the command running.
func TestLocalContextCancel(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("sleep 2; echo survived"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	// Interrupted, not a timeout of DefaultTimeouts (30 s at the least):
	// it returned with the context.
	r, err := s.Wait(ctx, DefaultTimeouts, nil)
	if !errors.Is(err, context.DeadlineExceeded) || r.Reason != Interrupted || r.Done {
		t.Fatalf("Wait = %+v, %v; want Interrupted, DeadlineExceeded", r, err)
	}
	if !s.Running() {
		t.Fatal("cancelling Wait killed the command")
	}
	r, err = s.Wait(t.Context(), quick, nil)
	if err != nil || !r.Done || r.Output != "survived\n" {
		t.Fatalf("Wait = %+v, %v; want the command to finish", r, err)
	}
}

func TestLocalExitIsUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, command string }{
		{"exit", "exit"},
		{"exit with status", "echo bye; exit 3"},
		{"background job left", "sleep 100 & exit"},
		// A detached process keeps the terminal open; reading must end anyway.
		{"detached process holds the terminal", "setsid sleep 600 & exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openShell(t, LocalOptions{})
			if err := s.Start(tt.command); err != nil {
				t.Fatal(err)
			}
			// Within the guard, long before a detached sleep ends: reading
			// did not wait for what holds the terminal.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			r, err := s.Wait(ctx, quick, nil)
			if !errors.Is(err, ErrUnavailable) || r.Reason != ShellEnded || r.Done {
				t.Fatalf("Wait = %+v, %v; want ShellEnded, ErrUnavailable", r, err)
			}
			if s.Running() {
				t.Error("Running() after exit")
			}
			if err := s.Start("echo"); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Start after exit = %v, want ErrUnavailable", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close after exit: %v", err)
			}
		})
	}
}

// Jobs left in the background die with the shell, also on `exit`.
func TestLocalBackgroundJobsKilled(t *testing.T) {
	t.Parallel()
	for _, viaExit := range []bool{false, true} {
		s := openShell(t, LocalOptions{})
		r := run(t, s, "sleep 100 & echo $!")
		f := strings.Fields(r.Output) // "[1] 1234\n1234\n"
		pid, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			t.Fatalf("no pid in %q", r.Output)
		}
		endShell(t, s, viaExit)
		deadline := time.Now().Add(5 * time.Second)
		for !proctest.Gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("background job %d survived (exit=%v)", pid, viaExit)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestLocalCloseDuringWait(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	type waitResult struct {
		r   Result
		err error
	}
	done := make(chan waitResult, 1)
	go func() {
		r, err := s.Wait(context.Background(), DefaultTimeouts, nil)
		done <- waitResult{r, err}
	}()
	time.Sleep(50 * time.Millisecond) // let Wait block (it must return either way)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case w := <-done:
		if !errors.Is(w.err, ErrClosed) || w.r.Reason != ShellEnded {
			t.Errorf("Wait = %+v, %v; want ErrClosed", w.r, w.err)
		}
	case <-time.After(time.Minute): // a guard: DefaultTimeouts would end the Wait after 30 s
		t.Fatal("Wait did not return after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{"Start": s.Start("true"), "Input": s.Input("x"), "Interrupt": s.Interrupt(t.Context())} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	if _, err := s.Wait(t.Context(), quick, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close = %v, want ErrClosed", err)
	}
}

func TestLocalStateErrors(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Input("y"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Input while idle = %v, want ErrNotRunning", err)
	}
	if err := s.Interrupt(t.Context()); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Interrupt while idle = %v, want ErrNotRunning", err)
	}
	run(t, s, "(exit 9)")
	r, err := s.Wait(t.Context(), quick, nil)
	if diff := cmp.Diff(Result{Done: true, ExitCode: 9, Reason: Completed}, r); diff != "" || !errors.Is(err, ErrNotRunning) {
		t.Errorf("Wait while idle err=%v, want ErrNotRunning; (-want +got):\n%s", err, diff)
	}
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	if err := s.Start("echo second"); !errors.Is(err, ErrBusy) {
		t.Errorf("Start while busy = %v, want ErrBusy", err)
	}
	if err := s.Interrupt(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The interrupted command's completion was not collected: its output
	// comes with the next command's.
	if r := run(t, s, "echo next"); strings.TrimLeft(r.Output, "\n") != "next\n" || r.ExitCode != 0 {
		t.Errorf("next command = %+v", r)
	}
}

// Two concurrent Waits on one command are served one after the other: one
// reports the completion, the other finds nothing running.
func TestLocalConcurrentWaits(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if err := s.Start("sleep 0.2; echo done"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { results[i], errs[i] = s.Wait(t.Context(), quick, nil) })
	}
	wg.Wait()
	done := 0
	for i := range 2 {
		if errs[i] == nil && results[i].Output == "done\n" {
			done++
		} else if !errors.Is(errs[i], ErrNotRunning) {
			t.Errorf("Wait %d = %+v, %v", i, results[i], errs[i])
		}
	}
	if done != 1 {
		t.Errorf("%d Waits reported the completion, want 1: %+v %v", done, results, errs)
	}
}

// The sentinel never shows, whatever the command prints around it.
func TestLocalNoSentinelInOutput(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	tests := []struct{ command, want string }{
		{"printf abc", "abc"},
		{"printf 'no newline'; printf ' twice'", "no newline twice"},
		{"echo -n x; sleep 0.05; printf y", "xy"},
		{"printf 'ends with escape\\033['", "ends with escape"},
		{"printf '\\033]6973;'", ""},
		{"printf 'tab\\t'", "tab\t"},
		{"echo line", "line\n"},
		{"exec 3>&1; echo to-fd-3 >&3", "to-fd-3\n"},
		{"exec >/dev/null; echo hidden", ""},
		{"exec >/dev/tty; echo restored", "restored\n"},
		{"set -x; set +x", "++ set +x\n"},
	}
	for _, tt := range tests {
		if err := s.Start(tt.command); err != nil {
			t.Fatal(err)
		}
		var stream strings.Builder
		r, err := s.Wait(t.Context(), quick, func(f string) { stream.WriteString(f) })
		if err != nil || !r.Done {
			t.Fatalf("%q: Wait = %+v, %v", tt.command, r, err)
		}
		if r.Output != tt.want {
			t.Errorf("%q: output %q, want %q", tt.command, r.Output, tt.want)
		}
		for _, text := range []string{r.Output, stream.String()} {
			if strings.ContainsAny(text, "\x1b\a") || strings.Contains(text, "6973") || strings.Contains(text, "__zero") {
				t.Errorf("%q: sentinel or wrapper visible in %q", tt.command, text)
			}
		}
	}
}

// A program that turns echo back on (or leaves the terminal raw) does not
// make the next commands echo.
func TestLocalTerminalModesRestored(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	run(t, s, "stty echo -icanon")
	if got := run(t, s, "echo once").Output; got != "once\n" {
		t.Errorf("output after stty echo = %q, want %q", got, "once\n")
	}
}

func TestLocalBigOutputCapped(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	s := openShell(t, LocalOptions{MaxOutput: max})
	r := run(t, s, "seq 1 200000")
	if !strings.HasPrefix(r.Output, "1\n2\n3\n") || !strings.HasSuffix(r.Output, "\n199999\n200000\n") {
		t.Errorf("head or tail lost: %q ... %q", r.Output[:20], r.Output[len(r.Output)-20:])
	}
	m := regexp.MustCompile(`\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n`).FindStringSubmatch(r.Output)
	if m == nil {
		t.Fatalf("no omission marker in %d bytes", len(r.Output))
	}
	omitted, _ := strconv.Atoi(m[1])
	const total = 1288895 // bytes printed by seq 1 200000
	if kept := len(r.Output) - len(m[0]); kept+omitted != total || kept > max {
		t.Errorf("kept %d + omitted %d, want %d total and at most %d kept", kept, omitted, total, max)
	}
}

func TestLocalEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	b := newLocal(t, LocalOptions{Dir: link, Env: []string{"ZERO_TEST_VAR=42", "PAGER=less"}})
	if b.Name() != "local" || b.Workdir() != link {
		t.Errorf("Name, Workdir = %q, %q", b.Name(), b.Workdir())
	}
	s, err := b.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, s, `echo "$PWD|$TERM|$PAGER|$GIT_PAGER|$ZERO_TEST_VAR|${HISTFILE-unset}|$-"`).Output
	fields := strings.Split(strings.TrimSpace(got), "|")
	if len(fields) != 7 {
		t.Fatalf("got %q", got)
	}
	want := []string{link, "dumb", "less", "cat", "42", "unset"}
	if diff := cmp.Diff(want, fields[:6]); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	if flags := fields[6]; !strings.Contains(flags, "m") || !strings.Contains(flags, "i") || strings.Contains(flags, "H") {
		t.Errorf("shell flags %q: want interactive, job control, no history expansion", flags)
	}
}

func TestNewLocalErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		opts        LocalOptions
		unavailable bool
	}{
		{"no dir", LocalOptions{}, false},
		{"missing dir", LocalOptions{Dir: filepath.Join(t.TempDir(), "missing")}, false},
		{"dir is a file", LocalOptions{Dir: file}, false},
		{"missing shell", LocalOptions{Dir: t.TempDir(), Shell: "/no/such/bash"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := NewLocal(tt.opts)
			if err == nil {
				b.Close()
				t.Fatal("NewLocal succeeded")
			}
			if errors.Is(err, ErrUnavailable) != tt.unavailable {
				t.Errorf("NewLocal = %v; ErrUnavailable want %v", err, tt.unavailable)
			}
		})
	}
}

// A shell that is not bash fails the handshake cleanly.
func TestLocalNotBash(t *testing.T) {
	t.Parallel()
	b := newLocal(t, LocalOptions{Shell: "cat"})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if s, err := b.OpenShell(ctx); err == nil {
		s.Close()
		t.Fatal("OpenShell with cat succeeded")
	}
}

func TestLocalCloseClosesShells(t *testing.T) {
	t.Parallel()
	b, err := NewLocal(LocalOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var shells []*Shell
	for range 2 {
		s, err := b.OpenShell(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		shells = append(shells, s)
	}
	if err := shells[0].Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, s := range shells {
		if err := s.Start("true"); !errors.Is(err, ErrClosed) {
			t.Errorf("shell %d: Start after backend Close = %v, want ErrClosed", i, err)
		}
	}
	if _, err := b.OpenShell(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("OpenShell after Close = %v, want ErrClosed", err)
	}
}

// Not parallel: it counts the package's goroutines, and parallel tests are
// paused until the sequential ones are done.
func TestNoGoroutineLeak(t *testing.T) {
	b, err := NewLocal(LocalOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var shells []*Shell
	for range 3 {
		s, err := b.OpenShell(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shells = append(shells, s)
	}
	run(t, shells[0], "echo hi")
	if err := shells[1].Start("sleep 100"); err != nil { // left running: Close must kill it
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	shells[1].Wait(cctx, DefaultTimeouts, nil)
	cancel()
	if err := shells[2].Start("exit"); err != nil {
		t.Fatal(err)
	}
	shells[2].Wait(ctx, quick, nil)
	shells[0].Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stacks := shellGoroutines()
		if len(stacks) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left:\n%s", len(stacks), strings.Join(stacks, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shellGoroutines returns the stacks of goroutines running the package's
// own background code.
func shellGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "sandbox.(*Shell).readLoop") || strings.Contains(g, "sandbox.(*localTerm)") {
			out = append(out, g)
		}
	}
	return out
}

func BenchmarkShellRoundTrip(b *testing.B) {
	s := openShell(b, LocalOptions{})
	ctx := context.Background()
	for b.Loop() {
		if err := s.Start("true"); err != nil {
			b.Fatal(err)
		}
		r, err := s.Wait(ctx, quick, nil)
		if err != nil || !r.Done {
			b.Fatalf("Wait = %+v, %v", r, err)
		}
	}
}

// endShell ends the shell of s: by the user typing exit (Wait then reports
// the shell gone) or by closing the session.
func endShell(t *testing.T, s *Shell, viaExit bool) {
	t.Helper()
	if !viaExit {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := s.Start("exit"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(t.Context(), quick, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Wait after exit = %v", err)
	}
}
