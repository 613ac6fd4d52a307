package sandbox

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/internal/proctest"
)

// requireBwrap is the one bubblewrap gate (dockertest.Bwrap).
func requireBwrap(t *testing.T) { dockertest.Bwrap(t) }

func TestLocalBubblewrap(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	ws := t.TempDir()
	marker := filepath.Join(os.TempDir(), "zero-bwrap-host-marker")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, LocalOptions{Dir: ws, Isolation: IsolationBubblewrap})
	if mode, _ := l.Isolation(); mode != IsolationBubblewrap {
		t.Fatalf("isolation = %q", mode)
	}
	s, err := l.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "echo inside > made.txt && mkdir sub && cd sub && pwd"); r.ExitCode != 0 || strings.TrimSpace(r.Output) != filepath.Join(ws, "sub") {
		t.Errorf("the workspace should be writable and cd persist: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("file written in the sandbox: %q, %v", b, err)
	}
	if r := run(t, s, "touch /usr/zero-escape 2>/dev/null"); r.ExitCode == 0 {
		t.Error("the file system outside the workspace should be read-only")
	}
	if r := run(t, s, "ls /tmp"); strings.Contains(r.Output, "zero-bwrap-host-marker") {
		t.Error("/tmp should be private")
	}
	if r := run(t, s, "pwd"); strings.TrimSpace(r.Output) != filepath.Join(ws, "sub") {
		t.Errorf("state should persist: %+v", r)
	}
	// Interrupt still finds and kills the job, and the shell survives.
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(t.Context(), Timeouts{FirstOutput: 200e6, BetweenOutput: 200e6, Max: 5e9, Dialog: 5e9}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Interrupt(t.Context()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	if r := run(t, s, "echo alive"); strings.TrimSpace(r.Output) != "alive" {
		t.Errorf("the shell should survive Interrupt: %+v", r)
	}
}

func TestLocalIsolationAutoAndErrors(t *testing.T) {
	t.Parallel()
	if _, err := NewLocal(LocalOptions{Dir: t.TempDir(), Isolation: "jail"}); err == nil {
		t.Error("an unknown isolation should be an error")
	}
	l, err := NewLocal(LocalOptions{Dir: t.TempDir(), Isolation: IsolationAuto})
	if err != nil {
		t.Fatal(err)
	}
	mode, why := l.Isolation()
	if _, lookErr := exec.LookPath("bwrap"); lookErr != nil && (mode != IsolationNone || why == "") {
		t.Errorf("auto without bwrap: %q (%q)", mode, why)
	}
	if l, _ := NewLocal(LocalOptions{Dir: t.TempDir()}); l != nil {
		if mode, _ := l.Isolation(); mode != IsolationNone {
			t.Errorf("the default isolation should be none, got %q", mode)
		}
	}
}

// openBwrap opens a shell of a bubblewrapped local backend.
func openBwrap(t *testing.T, opts LocalOptions) (*Local, *Shell) {
	t.Helper()
	requireBwrap(t)
	opts.Isolation = IsolationBubblewrap
	l := newLocal(t, opts)
	s, err := l.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// runExit runs command and returns its exit code and output.
func runExit(t *testing.T, s *Shell, command string) (int, string) {
	t.Helper()
	r := run(t, s, command)
	return r.ExitCode, r.Output
}

// The shells have a PID namespace of their own: host processes, Zero's
// among them, can be neither seen nor signalled, and Zero's environment
// (its API key) cannot be read through /proc.
func TestBwrapHidesHostProcesses(t *testing.T) {
	t.Parallel()
	_, s := openBwrap(t, LocalOptions{})
	me := strconv.Itoa(os.Getpid())
	_, out := runExit(t, s, `ls /proc | grep -E '^[0-9]+$'`)
	pids := strings.Fields(out)
	if slices.Contains(pids, me) || len(pids) > 5 || !slices.Contains(pids, "1") {
		t.Errorf("/proc in the sandbox lists %d processes %q; want only the sandbox's own, not the test's %s", len(pids), pids, me)
	}
	if code, _ := runExit(t, s, "kill -0 "+me+" 2>/dev/null"); code == 0 {
		t.Errorf("kill -0 %s succeeded: the test process can be signalled", me)
	}
	if code, out := runExit(t, s, "cat /proc/"+me+"/environ 2>/dev/null | tr '\\0' '\\n' | head -3"); code == 0 && out != "" {
		t.Errorf("the test process's environment is readable: %q", out)
	}
	if code, _ := runExit(t, s, "kill -0 "+strconv.Itoa(os.Getppid())+" 2>/dev/null"); code == 0 {
		t.Error("the test's parent can be signalled")
	}
}

// Without LocalOptions.Network no connection leaves the sandbox, not even
// to a service on the host's 127.0.0.1; with it, one does.
func TestBwrapNoNetwork(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	connect := fmt.Sprintf("echo hi 2>/dev/null >/dev/tcp/127.0.0.1/%d", ln.Addr().(*net.TCPAddr).Port)
	for _, network := range []bool{false, true} {
		l, s := openBwrap(t, LocalOptions{Network: network})
		before := accepted.Load()
		code, _ := runExit(t, s, connect)
		summary := l.IsolationSummary()
		switch {
		case !network && (code == 0 || accepted.Load() != before):
			t.Errorf("without network, a connection to the host's 127.0.0.1 succeeded (exit %d)", code)
		case !network && !strings.Contains(summary, "no network"):
			t.Errorf("summary %q should say there is no network", summary)
		case network && code != 0:
			t.Errorf("with network, the connection failed (exit %d)", code)
		case network && !strings.Contains(summary, "host network"):
			t.Errorf("summary %q should say the host network is on", summary)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the listener got %d connections, want 1 (the one with network)", n)
	}
}

// Hidden paths are empty (directories) or /dev/null (files, sockets), also
// inside the workspace, which stays writable while the rest is read-only.
func TestBwrapHidesCredentials(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	home := t.TempDir() // the workspace is home: the hidden paths lie in a writable root
	for name, content := range map[string]string{".ssh/id_rsa": "PRIVATE KEY", ".docker/config.json": `{"auths":{}}`, ".netrc": "machine x password y"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".docker", filepath.Join(home, "docker-link")); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(home, "agent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	hide := []string{".ssh", ".docker", "docker-link", ".netrc", "agent.sock", "missing"}
	for i, p := range hide {
		hide[i] = filepath.Join(home, p)
	}
	l, s := openBwrap(t, LocalOptions{Dir: home, Hide: hide})
	if got := l.IsolationSummary(); !strings.Contains(got, "4 sensitive paths hidden") {
		t.Errorf("summary %q: want 4 paths hidden (docker-link is .docker, missing is skipped)", got)
	}
	checks := []struct{ command, want string }{
		{"ls -A .ssh .docker docker-link/", ".docker:\n\n.ssh:\n\ndocker-link/:\n"},
		{"cat .ssh/id_rsa .docker/config.json 2>/dev/null; echo $?", "1\n"},
		{"cat .netrc; wc -c < .netrc", "0\n"},
		{"[ -S agent.sock ] && echo socket; [ -c agent.sock ] && echo null-device", "null-device\n"},
		// The workspace stays writable, the hidden paths and the rest do not.
		{"echo made > new.txt && echo ok", "ok\n"},
		{"touch .ssh/planted 2>/dev/null || echo read-only", "read-only\n"},
		{"echo x > .netrc; wc -c < .netrc", "0\n"}, // /dev/null swallows it
		{"touch /usr/zero-escape 2>/dev/null || echo read-only", "read-only\n"},
		{`touch "$TMPDIR/scratch" && echo $TMPDIR`, "/tmp\n"},
	}
	for _, c := range checks {
		if _, got := runExit(t, s, c.command); got != c.want {
			t.Errorf("%s: got %q, want %q", c.command, got, c.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "new.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("new.txt on the host: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".netrc")); err != nil || string(b) != "machine x password y" {
		t.Errorf(".netrc on the host changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "planted")); err == nil {
		t.Error("a file was planted in the host's .ssh")
	}
}

// A workspace root inside a hidden directory stays visible and writable;
// the rest of that directory stays hidden.
func TestBwrapRootInsideHiddenDir(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	outer := t.TempDir() // a root, so that what is below it is not hidden by the private /tmp
	secret := filepath.Join(outer, "hidden")
	ws := filepath.Join(secret, "project")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "secret.txt"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, s := openBwrap(t, LocalOptions{Dir: ws, Roots: []string{outer}, Hide: []string{secret}})
	checks := []struct{ command, want string }{
		{"ls -A ..", "project\n"},
		{"pwd && echo w > made.txt && cat made.txt", ws + "\nw\n"},
		{"touch ../planted 2>/dev/null || echo read-only", "read-only\n"},
		{"echo o > " + outer + "/outer.txt && echo ok", "ok\n"},
	}
	for _, c := range checks {
		if _, got := runExit(t, s, c.command); got != c.want {
			t.Errorf("%s: got %q, want %q", c.command, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil {
		t.Errorf("made.txt is not on the host: %v", err)
	}
}

// The default list works on this machine (/var/run is usually a link to
// /run): the services' sockets, Docker's first, are out of sight.
func TestBwrapDefaultHidden(t *testing.T) {
	t.Parallel()
	l, s := openBwrap(t, LocalOptions{}) // nil Hide: the defaults
	if got := l.IsolationSummary(); !strings.HasPrefix(got, "bubblewrap: workspace writable, rest read-only, private /tmp and PIDs, no network, ") {
		t.Errorf("summary %q", got)
	}
	if _, got := runExit(t, s, "ls -A /run /var/run/; ls /var/run/docker.sock /run/docker.sock 2>/dev/null; true"); got != "/run:\n\n/var/run/:\n" {
		t.Errorf("/run in the sandbox: %q, want empty", got)
	}
	hide := DefaultHidden("/home/u", "/run/user/1000", "/home/u/.config/zero")
	for _, want := range []string{"/run", "/var/run", "/var/run/docker.sock", "/run/containerd", "/run/user/1000", "/home/u/.ssh", "/home/u/.aws", "/home/u/.config/gh", "/home/u/.netrc", "/home/u/.config/zero"} {
		if !slices.Contains(hide, want) {
			t.Errorf("DefaultHidden lacks %s", want)
		}
	}
	if got := DefaultHidden("", "relative", ""); slices.ContainsFunc(got, func(p string) bool { return !filepath.IsAbs(p) }) {
		t.Errorf("DefaultHidden with empty and relative dirs: %q", got)
	}
	if _, err := NewLocal(LocalOptions{Dir: t.TempDir(), Hide: []string{"relative/.ssh"}}); err == nil {
		t.Error("a relative path to hide should be an error")
	}
}

// The mount plan resolves links, drops what is hidden already, and orders
// the mounts so that the most specific path wins.
func TestBwrapMountPlan(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	for _, d := range []string{"run/media/u/ws", "var", "home/.ssh"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"run/docker.sock", "home/.netrc"} {
		if err := os.WriteFile(filepath.Join(top, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../run", filepath.Join(top, "var/run")); err != nil {
		t.Fatal(err)
	}
	// systemd-resolved's layout: the resolver configuration lives in /run.
	if err := os.WriteFile(filepath.Join(top, "run/stub-resolv.conf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../run/stub-resolv.conf", filepath.Join(top, "var/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	in := func(p string) string { return filepath.Join(top, p) }
	l := &Local{resolvConf: in("var/resolv.conf"), opts: LocalOptions{
		Dir:   in("home"),
		Roots: []string{top, in("run/media/u/ws")},
		Hide:  []string{in("var/run"), in("run"), in("run/docker.sock"), in("home/.ssh"), in("home/.netrc"), in("missing"), in("home")},
	}}
	want := []mount{
		{"/tmp", privateTmp},
		{top, bindRoot},
		{in("home"), bindRoot}, // hidden and a root: the root wins
		{in("run"), hideDir},   // once, though named twice
		{in("home/.netrc"), hideFile},
		{in("home/.ssh"), hideDir},
		{in("run/media/u/ws"), bindRoot},
	}
	if diff := cmp.Diff(want, l.mountPlan(), cmp.AllowUnexported(mount{})); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	// With the network on, names must still resolve.
	l.opts.Network = true
	want = slices.Insert(want, 6, mount{in("run/stub-resolv.conf"), exposeRO})
	if diff := cmp.Diff(want, l.mountPlan(), cmp.AllowUnexported(mount{})); diff != "" {
		t.Errorf("plan with the network on (-want +got):\n%s", diff)
	}
}

// Under bubblewrap, interrupting, exiting and closing work as without it,
// and closing kills also what escaped into a session of its own.
func TestBwrapProcessControl(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	t.Run("interrupt", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			command string
			exit    int
		}{{"sleep 100", 130}, {"trap '' INT; sleep 100", 137}, {"read x", 130}, {"sleep 100 | cat", 130}} {
			_, s := openBwrap(t, LocalOptions{InterruptGrace: 300 * time.Millisecond})
			if err := s.Start(c.command); err != nil {
				t.Fatal(err)
			}
			if r, err := s.Wait(t.Context(), Timeouts{FirstOutput: 100 * time.Millisecond}, nil); err != nil || r.Reason != FirstOutputTimeout {
				t.Fatalf("Wait = %+v, %v", r, err)
			}
			if err := s.Interrupt(t.Context()); err != nil {
				t.Fatalf("%s: Interrupt: %v", c.command, err)
			}
			if r, err := s.Wait(t.Context(), quick, nil); err != nil || !r.Done || r.ExitCode != c.exit {
				t.Errorf("%s: after Interrupt %+v, %v; want exit %d", c.command, r, err, c.exit)
			}
			if code, out := runExit(t, s, "echo alive"); code != 0 || out != "alive\n" {
				t.Errorf("%s: the shell did not survive: %q", c.command, out)
			}
		}
	})
	for _, viaExit := range []bool{false, true} {
		t.Run(fmt.Sprintf("exit=%v", viaExit), func(t *testing.T) {
			t.Parallel()
			_, s := openBwrap(t, LocalOptions{})
			tag := fmt.Sprintf(`%06d`, rand.IntN(1e6)) // unique sleep arguments; a minute at most if the test fails
			run(t, s, "sleep 61."+tag+" >/dev/null 2>&1 & setsid sleep 62."+tag+" >/dev/null 2>&1 < /dev/null &")
			sleeps := `sleep 6[12]\.` + tag
			for deadline := time.Now().Add(5 * time.Second); len(hostProcs(sleeps)) != 2; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d sleeps running, want 2", len(hostProcs(sleeps)))
				}
			}
			endShell(t, s, viaExit)
			deadline := time.Now().Add(5 * time.Second)
			for len(hostProcs(sleeps)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("left running: %v", hostProcs(sleeps))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// hostProcs returns the live host processes whose command line matches
// pattern (a regexp).
func hostProcs(pattern string) []int {
	re := regexp.MustCompile("^" + pattern + "$")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && re.MatchString(strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")) && !proctest.Gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// With the network on, a resolver configuration that lives in a hidden
// directory (systemd-resolved's /run/systemd/resolve/stub-resolv.conf) stays
// readable, alone there.
func TestBwrapResolverKeptWithNetwork(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	top := t.TempDir() // a root, so that what is below it is not hidden by the private /tmp
	runDir := filepath.Join(top, "run")
	if err := os.MkdirAll(filepath.Join(runDir, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "stub-resolv.conf"), []byte("nameserver 127.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run/stub-resolv.conf", filepath.Join(top, "resolv.conf")); err != nil {
		t.Fatal(err)
	}
	for _, network := range []bool{false, true} {
		l := newLocal(t, LocalOptions{Dir: top, Isolation: IsolationBubblewrap, Network: network, Hide: []string{runDir}})
		l.resolvConf = filepath.Join(top, "resolv.conf")
		s, err := l.OpenShell(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := "\n" // /run empty, the configuration unreadable
		if network {
			want = "stub-resolv.conf\nnameserver 127.0.0.53\n\n"
		}
		if r := run(t, s, "ls run; cat resolv.conf 2>/dev/null; echo"); r.Output != want {
			t.Errorf("network %v: %q, want %q", network, r.Output, want)
		}
	}
}

// TestLocalAutoBrokenBwrap: auto isolation's probe goes on in the
// background, and whatever asks how commands are confined, or opens a
// shell, waits for its answer: a bwrap that cannot build the sandbox here
// (user namespaces forbidden) leaves isolation none, with the reason, and
// shells that do not go through it, never a shell started before the
// probe failed.
func TestLocalAutoBrokenBwrap(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	l, s := openAuto(t)
	if r := run(t, s, "echo alive"); strings.TrimSpace(r.Output) != "alive" {
		t.Errorf("the shell: %+v", r)
	}
	mode, why := l.Isolation()
	if mode != IsolationNone || !strings.Contains(why, "No permissions") {
		t.Errorf("auto with a broken bwrap: %q (%q), want none and why", mode, why)
	}
	if sum := l.IsolationSummary(); !strings.HasPrefix(sum, "none:") {
		t.Errorf("summary %q", sum)
	}
}

// TestLocalAutoShellWaitsForProbe: a shell opened at once after NewLocal,
// while auto isolation's probe may still run, is confined all the same
// (bash is PID 1 of bwrap's PID namespace): opening never races the probe
// into an unconfined shell.
func TestLocalAutoShellWaitsForProbe(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	l, s := openAuto(t)
	if r := run(t, s, "echo $$"); strings.TrimSpace(r.Output) != "1" {
		t.Errorf("the first shell of auto isolation runs outside bwrap's PID namespace: $$ = %q", r.Output)
	}
	if mode, _ := l.Isolation(); mode != IsolationBubblewrap {
		t.Errorf("isolation %q", mode)
	}
}

// openAuto opens a shell of an auto-isolated local backend at once after
// making it, while its bwrap probe may still run.
func openAuto(t *testing.T) (*Local, *Shell) {
	t.Helper()
	l, err := NewLocal(LocalOptions{Dir: t.TempDir(), Isolation: IsolationAuto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s, err := l.OpenShell(t.Context())
	if err != nil {
		t.Fatalf("open a shell: %v", err)
	}
	return l, s
}
