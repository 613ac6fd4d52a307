//go:build !windows

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The whole file system as the workspace (the user named it: zero
// --workspace /): the shell starts under bubblewrap with /dev and /proc of
// its own, the file system is writable (that is what the user asked for),
// yet /tmp, the PIDs and the network stay private and the hidden paths stay
// hidden. Binding / writable over the sandbox's /dev broke /dev/null, and
// bash could not start.
func TestBwrapRootWorkspace(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	// Outside /tmp, which is the sandbox's own: beside the test, or in
	// /var/tmp when the checkout is under /tmp.
	base := "."
	if here, err := filepath.Abs("."); err == nil && (here == "/tmp" || strings.HasPrefix(here, "/tmp/")) {
		base = "/var/tmp"
	}
	out, err := os.MkdirTemp(base, "ws21-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	if out, err = filepath.Abs(out); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(out, "secret")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, s := openBwrap(t, LocalOptions{Dir: "/", Hide: []string{secret}})
	if got := l.IsolationSummary(); !strings.Contains(got, "the whole file system writable") {
		t.Errorf("summary %q: it should say the whole file system is writable", got)
	}
	me := strconv.Itoa(os.Getpid())
	checks := []struct{ command, want string }{
		{"pwd", "/\n"},
		{"echo gone > /dev/null && echo ok", "ok\n"},
		{"head -c 4 /dev/zero | wc -c", "4\n"},
		{"[ -d /proc/" + me + " ] && echo host-pid-visible || echo private", "private\n"},
		{"cat " + secret + " | wc -c", "0\n"},
		{"echo made > " + filepath.Join(out, "made.txt") + " && echo written", "written\n"},
		{"ls /tmp | wc -l", "0\n"},
	}
	for _, c := range checks {
		if _, got := runExit(t, s, c.command); got != c.want {
			t.Errorf("%s: got %q, want %q", c.command, got, c.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("a file written under / is not on the host: %q, %v", b, err)
	}
}

// The argument list binds / writable first and builds /dev and /proc on
// top of it: bwrap mounts in order, and a later --bind / / would cover them
// with the host's.
func TestBwrapRootWorkspaceArgs(t *testing.T) {
	t.Parallel()
	l := &Local{opts: LocalOptions{Dir: "/", Hide: []string{}}}
	args := strings.Join(l.bwrapArgs(), " ")
	if !strings.HasPrefix(args, "--bind / / --dev /dev --proc /proc ") {
		t.Errorf("bwrap args %q: want / bound writable before /dev and /proc", args)
	}
	if strings.Contains(args, "--ro-bind / /") || strings.Count(args, "--bind / /") != 1 {
		t.Errorf("bwrap args %q: / should be bound once, writable", args)
	}
}
