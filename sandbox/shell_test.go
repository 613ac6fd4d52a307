package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeTerm is a scripted terminal: the test plays the shell by sending
// bytes, and sees the command lines (and their nonces) the Shell writes.
// It answers the init script itself.
type fakeTerm struct {
	data     chan []byte
	closed   chan struct{}
	once     sync.Once
	nonces   chan string // nonce of every command line written (not the init)
	onSignal func(pgrp int, sig syscall.Signal)
	// holdStart: the test sends the started mark itself, instead of the
	// fake as soon as a command line is written.
	holdStart bool

	mu      sync.Mutex
	written []string
	fg      int // foreground process group; fakeShellGroup is the shell's
	signals []sent
}

type sent struct {
	Pgrp int
	Sig  syscall.Signal
}

const (
	fakeShellGroup = 100
	fakeJobGroup   = 200
)

var nonceRE = regexp.MustCompile(`__zero_n=([0-9a-f]{16})`)

func newFakeTerm() *fakeTerm {
	return &fakeTerm{data: make(chan []byte, 64), closed: make(chan struct{}), nonces: make(chan string, 16), fg: fakeJobGroup}
}

func (f *fakeTerm) Read(p []byte) (int, error) {
	select {
	case b, ok := <-f.data:
		if !ok {
			return 0, io.EOF // the "shell" exited
		}
		if len(b) > len(p) {
			panic("fakeTerm: chunk larger than the read buffer")
		}
		return copy(p, b), nil
	case <-f.closed:
		return 0, errors.New("fake terminal closed")
	}
}

func (f *fakeTerm) Write(p []byte) (int, error) {
	select {
	case <-f.closed:
		return 0, errors.New("fake terminal closed")
	default:
	}
	f.mu.Lock()
	f.written = append(f.written, string(p))
	f.mu.Unlock()
	if m := nonceRE.FindSubmatch(p); m != nil {
		if strings.Contains(string(p), "__zero_done()") {
			f.data <- []byte("echo of the init script\r\n" + sentinelFor(string(m[1]), 0))
		} else {
			if !f.holdStart {
				f.data <- []byte(startedFor(string(m[1])))
			}
			f.nonces <- string(m[1])
		}
	}
	return len(p), nil
}

func (f *fakeTerm) foreground() (int, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fg, f.fg == fakeShellGroup, nil
}

func (f *fakeTerm) setForeground(pgrp int) {
	f.mu.Lock()
	f.fg = pgrp
	f.mu.Unlock()
}

func (f *fakeTerm) kill(pgrp int, sig syscall.Signal) error {
	if pgrp == fakeShellGroup && sig != syscall.SIGINT {
		return errShellGroup
	}
	f.mu.Lock()
	f.signals = append(f.signals, sent{pgrp, sig})
	f.mu.Unlock()
	if f.onSignal != nil {
		f.onSignal(pgrp, sig)
	}
	return nil
}

func (f *fakeTerm) sent() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.signals...)
}

func (f *fakeTerm) resetModes() error { return nil }

func (f *fakeTerm) close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeTerm) send(s string) { f.data <- []byte(s) }

func sentinelFor(nonce string, status int) string {
	return fmt.Sprintf("\x1b]6973;%s;%d\a", nonce, status)
}

func startedFor(nonce string) string { return "\x1b]6973;" + nonce + ";s\a" }

func newFakeShell(t *testing.T, cfg shellConfig) (*Shell, *fakeTerm) {
	t.Helper()
	ft := newFakeTerm()
	s := newShell(ft, cfg)
	t.Cleanup(func() { s.Close() })
	if err := s.handshake(t.Context()); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return s, ft
}

// startFake starts a command and returns its nonce, as the fake shell saw it.
func startFake(t *testing.T, s *Shell, ft *fakeTerm, command string) string {
	t.Helper()
	if err := s.Start(command); err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	return <-ft.nonces
}

// The timeout rules, in fake time: each case plays a command's output on a
// schedule and checks when and why Wait returns.
func TestWaitTimeoutRules(t *testing.T) {
	t.Parallel()
	type event struct {
		at   time.Duration
		text string // "DONE" sends the sentinel with status 0
	}
	tests := []struct {
		name       string
		timeouts   Timeouts
		script     []event
		ctxTimeout time.Duration
		want       Result
		wantErr    error
		wantAfter  time.Duration
	}{
		{
			name:      "first output timeout",
			timeouts:  DefaultTimeouts,
			want:      Result{Reason: FirstOutputTimeout},
			wantAfter: 30 * time.Second,
		},
		{
			name:      "between output timeout",
			timeouts:  DefaultTimeouts,
			script:    []event{{2 * time.Second, "a\n"}, {4 * time.Second, "b\n"}},
			want:      Result{Output: "a\nb\n", Reason: BetweenOutputTimeout},
			wantAfter: 19 * time.Second,
		},
		{
			name:      "max timeout despite steady output",
			timeouts:  Timeouts{FirstOutput: 30 * time.Second, BetweenOutput: 15 * time.Second, Max: 60 * time.Second},
			script:    []event{{10 * time.Second, "1\n"}, {20 * time.Second, "2\n"}, {30 * time.Second, "3\n"}, {40 * time.Second, "4\n"}, {50 * time.Second, "5\n"}, {70 * time.Second, "late\n"}},
			want:      Result{Output: "1\n2\n3\n4\n5\n", Reason: MaxTimeout},
			wantAfter: 60 * time.Second,
		},
		{
			name:      "dialog after silence",
			timeouts:  DefaultTimeouts,
			script:    []event{{1 * time.Second, "Continue? [y/N] "}},
			want:      Result{Output: "Continue? [y/N] ", Reason: Dialog},
			wantAfter: 6 * time.Second,
		},
		{
			name:      "dialog on the line before",
			timeouts:  DefaultTimeouts,
			script:    []event{{1 * time.Second, "Password:\n"}},
			want:      Result{Output: "Password:\n", Reason: Dialog},
			wantAfter: 6 * time.Second,
		},
		{
			name:      "no dialog for plain output",
			timeouts:  DefaultTimeouts,
			script:    []event{{1 * time.Second, "working\n"}},
			want:      Result{Output: "working\n", Reason: BetweenOutputTimeout},
			wantAfter: 16 * time.Second,
		},
		{
			name:      "new output postpones the dialog",
			timeouts:  DefaultTimeouts,
			script:    []event{{1 * time.Second, "Name: "}, {4 * time.Second, "\nstill working\n"}, {8 * time.Second, "Sure? "}},
			want:      Result{Output: "Name: \nstill working\nSure? ", Reason: Dialog},
			wantAfter: 13 * time.Second,
		},
		{
			name:      "completion wins",
			timeouts:  DefaultTimeouts,
			script:    []event{{29 * time.Second, "DONE"}},
			want:      Result{Done: true, Reason: Completed},
			wantAfter: 29 * time.Second,
		},
		{
			name:      "zero timeouts wait for completion",
			timeouts:  Timeouts{},
			script:    []event{{1 * time.Second, "Continue? "}, {2 * time.Hour, "y\n"}, {2 * time.Hour, "DONE"}},
			want:      Result{Output: "Continue? y\n", Done: true, Reason: Completed},
			wantAfter: 2 * time.Hour,
		},
		{
			name:       "ctx done",
			timeouts:   DefaultTimeouts,
			script:     []event{{1 * time.Second, "partial"}},
			ctxTimeout: 3 * time.Second,
			want:       Result{Output: "partial", Reason: Interrupted},
			wantErr:    context.DeadlineExceeded,
			wantAfter:  3 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s, ft := newFakeShell(t, shellConfig{})
				nonce := startFake(t, s, ft, "cmd")
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					begin := time.Now()
					for _, ev := range tt.script {
						select {
						case <-time.After(begin.Add(ev.at).Sub(time.Now())):
						case <-stop:
							return
						}
						if ev.text == "DONE" {
							ev.text = sentinelFor(nonce, 0)
						}
						ft.send(ev.text)
					}
				})
				ctx := t.Context()
				if tt.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
					defer cancel()
				}
				begin := time.Now()
				got, err := s.Wait(ctx, tt.timeouts, nil)
				elapsed := time.Since(begin)
				close(stop)
				wg.Wait()
				if diff := cmp.Diff(tt.want, got); diff != "" || !errors.Is(err, tt.wantErr) {
					t.Errorf("Wait() err = %v, want %v; result (-want +got):\n%s", err, tt.wantErr, diff)
				}
				if elapsed != tt.wantAfter {
					t.Errorf("Wait returned after %v, want %v", elapsed, tt.wantAfter)
				}
			})
		})
	}
}

// A second Wait after a timeout continues the same command; timeouts start
// afresh for it.
func TestWaitContinues(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{})
		nonce := startFake(t, s, ft, "cmd")
		ft.send("a\n")
		r, err := s.Wait(t.Context(), DefaultTimeouts, nil)
		if diff := cmp.Diff(Result{Output: "a\n", Reason: BetweenOutputTimeout}, r); diff != "" || err != nil {
			t.Fatalf("first Wait err=%v (-want +got):\n%s", err, diff)
		}
		if !s.Running() {
			t.Fatal("Running() = false after a timeout")
		}
		go func() {
			time.Sleep(20 * time.Second) // longer than BetweenOutput: counts from the new Wait
			ft.send("b\n" + sentinelFor(nonce, 4))
		}()
		r, err = s.Wait(t.Context(), OutputTimeouts, nil)
		if diff := cmp.Diff(Result{Output: "b\n", Done: true, ExitCode: 4, Reason: Completed}, r); diff != "" || err != nil {
			t.Fatalf("second Wait err=%v (-want +got):\n%s", err, diff)
		}
	})
}

// The sentinel is found wherever the read boundaries fall, never leaks into
// the output or the stream, and output after it belongs to the next Wait.
func TestSentinelSplitAcrossReads(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{})
		for _, tail := range []string{"", "late\n"} {
			n := len("hello\nwor" + sentinelFor("0123456789abcdef", 5) + tail)
			for cut := 0; cut <= n; cut++ {
				nonce := startFake(t, s, ft, "cmd")
				full := "hello\nwor" + sentinelFor(nonce, 5) + tail
				ft.send(full[:cut])
				ft.send(full[cut:])
				var stream []string
				r, err := s.Wait(t.Context(), DefaultTimeouts, func(f string) { stream = append(stream, f) })
				want := Result{Output: "hello\nwor", Done: true, ExitCode: 5, Reason: Completed}
				if diff := cmp.Diff(want, r); diff != "" || err != nil {
					t.Fatalf("cut %d: err=%v (-want +got):\n%s", cut, err, diff)
				}
				if got := strings.Join(stream, ""); got != r.Output {
					t.Errorf("cut %d: stream %q != output %q", cut, got, r.Output)
				}
				for _, f := range stream {
					if strings.ContainsAny(f, "\x1b\a") || strings.Contains(f, nonce) {
						t.Errorf("cut %d: streamed fragment %q contains sentinel bytes", cut, f)
					}
				}
				synctest.Wait() // the "late" text has been read
				r, err = s.Wait(t.Context(), DefaultTimeouts, nil)
				if !errors.Is(err, ErrNotRunning) || r.Output != tail || !r.Done || r.ExitCode != 5 {
					t.Fatalf("cut %d: idle Wait = %+v, %v; want output %q, Done, exit 5, ErrNotRunning", cut, r, err, tail)
				}
			}
		}
	})
}

// A sentinel of an earlier command (e.g. after a failed Interrupt) neither
// completes the current command nor shows in its output.
func TestStaleSentinelIgnored(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{})
		nonce := startFake(t, s, ft, "cmd")
		ft.send("x" + sentinelFor("0123456789abcdef", 1) + "y\n")
		r, err := s.Wait(t.Context(), Timeouts{FirstOutput: time.Second, BetweenOutput: time.Second}, nil)
		if diff := cmp.Diff(Result{Output: "xy\n", Reason: BetweenOutputTimeout}, r); diff != "" || err != nil {
			t.Fatalf("err=%v (-want +got):\n%s", err, diff)
		}
		ft.send(sentinelFor(nonce, 0))
		r, err = s.Wait(t.Context(), Timeouts{}, nil)
		if diff := cmp.Diff(Result{Done: true, Reason: Completed}, r); diff != "" || err != nil {
			t.Fatalf("err=%v (-want +got):\n%s", err, diff)
		}
	})
}

// Interrupt sends SIGINT, then SIGKILL after the grace period, and returns
// once the command's sentinel arrived; the next Wait reports it.
func TestInterruptEscalates(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		nonce := startFake(t, s, ft, "trap '' INT; sleep 100")
		ft.onSignal = func(_ int, sig syscall.Signal) {
			if sig == syscall.SIGKILL {
				ft.send("Killed\n" + sentinelFor(nonce, 137))
			}
		}
		begin := time.Now()
		if err := s.Interrupt(t.Context()); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		if elapsed := time.Since(begin); elapsed != 500*time.Millisecond {
			t.Errorf("Interrupt took %v, want the 500ms grace", elapsed)
		}
		var want []sent
		for range 5 { // at 0, 100, ..., 400 ms
			want = append(want, sent{fakeJobGroup, syscall.SIGINT})
		}
		want = append(want, sent{fakeJobGroup, syscall.SIGKILL})
		if diff := cmp.Diff(want, ft.sent()); diff != "" {
			t.Errorf("signals (-want +got):\n%s", diff)
		}
		r, err := s.Wait(t.Context(), DefaultTimeouts, nil)
		if diff := cmp.Diff(Result{Output: "Killed\n", Done: true, ExitCode: 137, Reason: Completed}, r); diff != "" || err != nil {
			t.Errorf("Wait err=%v (-want +got):\n%s", err, diff)
		}
	})
}

// Interrupt sends nothing until bash has begun to execute the command: a
// signal while bash still reads the line would be lost or cut the line.
func TestInterruptWaitsForStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ft := newFakeTerm()
		ft.holdStart = true
		s := newShell(ft, shellConfig{})
		defer s.Close()
		if err := s.handshake(t.Context()); err != nil {
			t.Fatal(err)
		}
		nonce := startFake(t, s, ft, "sleep 100")
		ft.onSignal = func(int, syscall.Signal) { ft.send(sentinelFor(nonce, 130)) }
		errc := make(chan error, 1)
		go func() { errc <- s.Interrupt(t.Context()) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := ft.sent(); len(got) != 0 {
			t.Fatalf("signals sent before the command started: %v", got)
		}
		ft.send(startedFor(nonce))
		if err := <-errc; err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		if diff := cmp.Diff([]sent{{fakeJobGroup, syscall.SIGINT}}, ft.sent()); diff != "" {
			t.Errorf("signals (-want +got):\n%s", diff)
		}
	})
}

// A SIGINT that reaches the shell while it is still forking the job is lost
// (bash waits for its child instead); the job gets its own SIGINT as soon
// as it is in the foreground, long before SIGKILL would be due.
func TestInterruptReachesLateJob(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		nonce := startFake(t, s, ft, "sleep 100")
		ft.setForeground(fakeShellGroup)
		ft.onSignal = func(pgrp int, sig syscall.Signal) {
			if pgrp == fakeJobGroup {
				ft.send(sentinelFor(nonce, 130))
			}
		}
		go func() {
			time.Sleep(30 * time.Millisecond)
			ft.setForeground(fakeJobGroup)
		}()
		begin := time.Now()
		if err := s.Interrupt(t.Context()); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		if d := time.Since(begin); d > 50*time.Millisecond {
			t.Errorf("Interrupt took %v", d)
		}
		want := []sent{{fakeShellGroup, syscall.SIGINT}, {fakeJobGroup, syscall.SIGINT}}
		if diff := cmp.Diff(want, ft.sent()); diff != "" {
			t.Errorf("signals (-want +got):\n%s", diff)
		}
	})
}

// When the job has died and the shell is back in the foreground finishing
// the command, the shell gets no SIGINT: bash could handle it only after
// reading the next command line, and cut that line apart.
func TestInterruptSparesFinishingShell(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		nonce := startFake(t, s, ft, "sleep 100")
		ft.onSignal = func(pgrp int, sig syscall.Signal) {
			ft.setForeground(fakeShellGroup)
			go func() {
				time.Sleep(200 * time.Millisecond) // a slow PROMPT_COMMAND
				ft.send(sentinelFor(nonce, 130))
			}()
		}
		if err := s.Interrupt(t.Context()); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		if diff := cmp.Diff([]sent{{fakeJobGroup, syscall.SIGINT}}, ft.sent()); diff != "" {
			t.Errorf("signals (-want +got):\n%s", diff)
		}
	})
}

// A builtin that ignores SIGINT keeps the shell in the foreground: it is
// never SIGKILLed, only offered SIGINT again each grace period.
func TestInterruptNeverKillsShell(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		startFake(t, s, ft, "trap '' INT; while :; do :; done")
		ft.setForeground(fakeShellGroup)
		ctx, cancel := context.WithTimeout(t.Context(), 1200*time.Millisecond)
		defer cancel()
		if err := s.Interrupt(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Interrupt = %v, want DeadlineExceeded", err)
		}
		want := []sent{{fakeShellGroup, syscall.SIGINT}, {fakeShellGroup, syscall.SIGINT}, {fakeShellGroup, syscall.SIGINT}}
		if diff := cmp.Diff(want, ft.sent()); diff != "" {
			t.Errorf("signals (-want +got):\n%s", diff)
		}
	})
}

// Interrupt is bounded by ctx when nothing stops the command.
func TestInterruptBoundedByContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		startFake(t, s, ft, "stuck")
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		if err := s.Interrupt(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Interrupt = %v, want DeadlineExceeded", err)
		}
		if !s.Running() {
			t.Error("Running() = false, the command was never reported done")
		}
	})
}

// When the terminal ends without Close (the shell exited), every call
// reports ErrUnavailable and Wait returns what was read before.
func TestShellDeathIsUnavailable(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{})
		startFake(t, s, ft, "exit")
		ft.send("exit\r\n")
		close(ft.data)
		r, err := s.Wait(t.Context(), DefaultTimeouts, nil)
		if !errors.Is(err, ErrUnavailable) || r.Reason != ShellEnded || r.Done || r.Output != "exit\n" {
			t.Fatalf("Wait = %+v, %v; want output \"exit\\n\", ShellEnded, ErrUnavailable", r, err)
		}
		for name, err := range map[string]error{
			"Start":     s.Start("echo"),
			"Input":     s.Input("y"),
			"Interrupt": s.Interrupt(t.Context()),
		} {
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%s after death = %v, want ErrUnavailable", name, err)
			}
		}
		if _, err := s.Wait(t.Context(), DefaultTimeouts, nil); !errors.Is(err, ErrUnavailable) {
			t.Errorf("second Wait = %v, want ErrUnavailable", err)
		}
		if s.Running() {
			t.Error("Running() = true after death")
		}
	})
}

// Output capping applies to a single Wait, keeping head and tail.
func TestWaitCapsOutput(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{maxOutput: 100})
		nonce := startFake(t, s, ft, "cmd")
		var stream strings.Builder
		go func() {
			for i := range 1000 {
				ft.send(fmt.Sprintf("line %04d\n", i))
			}
			ft.send(sentinelFor(nonce, 0))
		}()
		r, err := s.Wait(t.Context(), Timeouts{}, func(f string) { stream.WriteString(f) })
		if err != nil || !r.Done {
			t.Fatalf("Wait = %+v, %v", r, err)
		}
		if !strings.HasPrefix(r.Output, "line 0000\nline 0001\n") || !strings.HasSuffix(r.Output, "line 0998\nline 0999\n") {
			t.Errorf("output lost its head or tail: %q", r.Output)
		}
		if !strings.Contains(r.Output, " bytes omitted ...]") || len(r.Output) > 100+40 {
			t.Errorf("output not capped: %d bytes: %q", len(r.Output), r.Output)
		}
		// The stream is complete while Wait keeps up; what piles up between
		// two drains is capped the same way, so only head and tail are sure.
		if got := stream.String(); !strings.HasPrefix(got, "line 0000\n") || !strings.HasSuffix(got, "line 0999\n") || len(got) < len(r.Output) {
			t.Errorf("stream lost its head or tail: %q", got)
		}
	})
}

// A loop of short jobs that SIGINT does not end (each ignores it, or ends
// before a signal reaches it) is ended through the shell: once its jobs
// have had SIGINT for two grace periods, the shell gets one between two
// jobs. SIGKILL, a job's after its own grace, would never end the loop.
func TestInterruptEndsALoopThroughTheShell(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, ft := newFakeShell(t, shellConfig{grace: 500 * time.Millisecond})
		nonce := startFake(t, s, ft, "while :; do sh -c \"trap '' INT; sleep 0.02\"; done")
		ft.onSignal = func(pgrp int, sig syscall.Signal) {
			if pgrp == fakeShellGroup && sig == syscall.SIGINT {
				ft.send(sentinelFor(nonce, 130))
			}
		}
		stop := make(chan struct{})
		loopDone := make(chan struct{})
		go func() { // each job 20 ms in front, then the shell for 10 ms
			defer close(loopDone)
			for pgrp := fakeJobGroup + 1; ; pgrp++ {
				for _, step := range []struct {
					fg int
					d  time.Duration
				}{{pgrp, 20 * time.Millisecond}, {fakeShellGroup, 10 * time.Millisecond}} {
					ft.setForeground(step.fg)
					select {
					case <-stop:
						return
					case <-time.After(step.d):
					}
				}
			}
		}()
		time.Sleep(3 * time.Millisecond) // the looks fall inside the phases, never on their edges
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := s.Interrupt(ctx)
		close(stop)
		<-loopDone
		if err != nil {
			t.Fatalf("Interrupt: %v (signals %v)", err, ft.sent())
		}
		last := ft.sent()[len(ft.sent())-1]
		if last != (sent{fakeShellGroup, syscall.SIGINT}) {
			t.Errorf("last signal %v, want SIGINT to the shell", last)
		}
	})
}
