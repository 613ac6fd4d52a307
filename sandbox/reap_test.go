package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// A lease is alive while its file is locked: a second open file of the
// same process cannot take the lock either, so two backends in one process
// see each other alive. Closing the file without removing it is what a
// crash does.
func TestLeases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := acquireLease(dir, "zero-abc@01", "aaaa")
	if err != nil {
		t.Fatal(err)
	}
	b, err := acquireLease(dir, "zero-abc@01", "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	other, err := acquireLease(dir, "zero-def@01", "cccc")
	if err != nil {
		t.Fatal(err)
	}
	defer other.release(false)
	for _, u := range []string{"1000:1000", "root"} {
		if err := a.addUser(u); err != nil {
			t.Fatal(err)
		}
	}
	if dead := deadLeases(dir, "zero-abc@01"); len(dead) != 0 {
		t.Fatalf("live leases taken for dead: %v", dead)
	}
	a.f.Close() // a crash: the lock goes, the file stays
	dead := deadLeases(dir, "zero-abc@01")
	if len(dead) != 1 || dead[0].instanceOf() != "aaaa" || !slices.Equal(dead[0].users, []string{"1000:1000", "root"}) {
		t.Fatalf("dead leases = %+v, want aaaa's with its two users", dead)
	}
	if again := deadLeases(dir, "zero-abc@01"); len(again) != 0 {
		t.Error("a dead lease being reaped was handed out twice")
	}
	dead[0].release(true)
	b.release(true)
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("left in the lease dir: %v, want only the other container's", left)
	}
}

// TestMain lets the test binary double as the crashing Zero of
// TestDockerReapsDeadInstance: run with ZERO_TEST_CRASH_WORKSPACE set, it
// starts commands in that workspace's container and waits to be killed.
func TestMain(m *testing.M) {
	if ws := os.Getenv("ZERO_TEST_CRASH_WORKSPACE"); ws != "" {
		if err := crashHelper(ws); err != nil {
			fmt.Fprintln(os.Stderr, "crash helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashHelper opens a Docker backend on ws, leaves a background job, one
// that escaped into a session of its own and a foreground command running,
// says READY and waits for the SIGKILL that plays the crash.
func crashHelper(ws string) error {
	ctx := context.Background()
	d, err := NewDocker(testDockerOptions(DockerOptions{Workspace: ws}))
	if err != nil {
		return err
	}
	s, err := d.OpenShell(ctx)
	if err != nil {
		return err
	}
	if err := s.Start("sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 >/dev/null 2>&1 </dev/null &"); err != nil {
		return err
	}
	if r, err := s.Wait(ctx, quick, nil); err != nil || !r.Done {
		return fmt.Errorf("background jobs: %+v, %v", r, err)
	}
	fg, err := d.OpenShell(ctx)
	if err != nil {
		return err
	}
	if err := fg.Start("sleep 1003"); err != nil {
		return err
	}
	fg.Wait(ctx, Timeouts{FirstOutput: 200 * time.Millisecond}, nil)
	fmt.Println("READY")
	time.Sleep(time.Minute) // the parent kills us first
	return nil
}

// After a Zero process dies without closing (kill -9), the next backend
// that attaches to the workspace's container kills the commands it left
// there, and leaves alone those of another Zero that still uses it.
func TestDockerReapsDeadInstance(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	ws := testWorkspace(t)
	live := newTestDocker(t, DockerOptions{Workspace: ws})
	ls := openDockerShell(t, live)
	run(t, ls, "sleep 1004 >/dev/null 2>&1 &")

	helper := exec.Command(os.Args[0]) // TestMain makes it the crash helper
	helper.Env = append(os.Environ(), "ZERO_TEST_CRASH_WORKSPACE="+ws)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "READY" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			helper.Process.Kill()
			helper.Wait()
			t.Fatal("the helper process ended before it was ready")
		}
	case <-time.After(time.Minute):
		helper.Process.Kill()
		helper.Wait()
		t.Fatal("the helper process did not get ready")
	}
	if err := helper.Process.Kill(); err != nil { // SIGKILL: no Close, no clean-up
		t.Fatal(err)
	}
	helper.Wait()

	count := func(s *Shell, pattern string) string {
		return strings.TrimSpace(run(t, s, "pgrep -fc '"+pattern+"'").Output)
	}
	if got := count(ls, "sleep 100[123]"); got != "3" {
		t.Fatalf("%s of the dead process's sleeps run after its crash, want 3", got)
	}
	next := newTestDocker(t, DockerOptions{Workspace: ws})
	ns := openDockerShell(t, next) // attaches to the running container
	if got := count(ns, "sleep 100[123]"); got != "0" {
		t.Errorf("%s of the dead process's sleeps survived the next attach", got)
	}
	if got := count(ns, "sleep 1004"); got != "1" {
		t.Errorf("%s sleeps of the live backend run, want 1", got)
	}
	if got := run(t, ls, "echo alive").Output; got != "alive\n" {
		t.Errorf("the live backend's shell: %q", got)
	}
}

// Docker.Close kills everything the backend started, also what escaped
// into a session of its own, which no shell's sweep finds.
func TestDockerCloseKillsEverything(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	ws := testWorkspace(t)
	d, err := NewDocker(testDockerOptions(DockerOptions{Workspace: ws}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "sleep 1101 >/dev/null 2>&1 & setsid sleep 1102 >/dev/null 2>&1 </dev/null &")
	b, err := d.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start("sleep 1103"); err != nil {
		t.Fatal(err)
	}
	run(t, a, "true") // a closed shell's escaped job must die too
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	check := newTestDocker(t, DockerOptions{Workspace: ws})
	if got := run(t, openDockerShell(t, check), "pgrep -fa 'sleep 110[123]'").Output; got != "" {
		t.Errorf("left running after Close:\n%s", got)
	}
}

// BenchmarkDockerClose50Shells measures Docker.Close of a backend with 50
// open shells, a third of them running a command and a third with a
// background job.
func BenchmarkDockerClose50Shells(b *testing.B) {
	requireDocker(b)
	ws := testWorkspace(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		d, err := NewDocker(testDockerOptions(DockerOptions{Workspace: ws}))
		if err != nil {
			b.Fatal(err)
		}
		for i := range 50 {
			s, err := d.OpenShell(ctx)
			if err != nil {
				b.Fatal(err)
			}
			switch i % 3 {
			case 0:
				err = s.Start("sleep 1000")
			case 1:
				run(b, s, "sleep 1000 >/dev/null 2>&1 &")
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	d := newTestDocker(b, DockerOptions{Workspace: ws}) // removes the container
	if got := run(b, openDockerShell(b, d), "pgrep -fc 'sleep 1000'").Output; got != "0\n" {
		b.Errorf("%s sleeps left after Close", strings.TrimSpace(got))
	}
}
