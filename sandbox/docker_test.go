package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/dockertest"
)

// These tests run against a real Docker engine (DOCKER_HOST or the local
// socket) and the image $ZERO_TEST_IMAGE (default zero-test:bookworm, built
// by scripts/ci-docker). Without an engine they skip, unless
// ZERO_REQUIRE_DOCKER=1, which makes them fail.

// testUID owns the shared test workspace, so that "the files belong to the
// workspace owner" means something when the tests run as root.
const testUID = 1000

// requireDocker skips (or fails, under ZERO_REQUIRE_DOCKER=1) when no
// engine answers or the test image is missing.
func requireDocker(t testing.TB) { dockertest.Image(t) }

func testImage() string { return dockertest.ImageName() }

// testWorkspace makes a workspace owned by testUID; its container is
// removed when the test ends.
func testWorkspace(t testing.TB) string {
	t.Helper()
	ws := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chown(ws, testUID, testUID); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// testDockerOptions completes opts as every test backend has them: the
// test image, no network.
func testDockerOptions(opts DockerOptions) DockerOptions {
	if opts.Image == "" {
		opts.Image = testImage()
	}
	opts.Network = "none"
	return opts
}

func newTestDocker(t testing.TB, opts DockerOptions) *Docker {
	t.Helper()
	requireDocker(t)
	if opts.Workspace == "" {
		opts.Workspace = testWorkspace(t)
	}
	d, err := NewDocker(testDockerOptions(opts))
	if err != nil {
		t.Fatalf("NewDocker: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := d.RemoveContainers(ctx, "", false); err != nil {
			t.Errorf("RemoveContainers: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Docker.Close: %v", err)
		}
	})
	return d
}

func openDockerShell(t testing.TB, d *Docker) *Shell {
	t.Helper()
	s, err := d.OpenShell(t.Context())
	if err != nil {
		t.Fatalf("OpenShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitForOutput waits until the running command has printed want (the
// event a test gates on, where a pause would guess how long a loaded
// machine takes to get there).
func waitForOutput(t *testing.T, s *Shell, want string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got strings.Builder
	r, _ := s.Wait(ctx, Timeouts{}, func(piece string) {
		got.WriteString(piece)
		if strings.Contains(got.String(), want) {
			cancel()
		}
	})
	if !strings.Contains(got.String(), want) {
		t.Fatalf("the command ended before it printed %q: %+v", want, r)
	}
}

func TestDockerShell(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t, DockerOptions{})
	ws := d.Workdir()

	t.Run("cd and env persist", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		run(t, s, "mkdir -p sub && cd sub && export ZERO_X=42")
		got := run(t, s, `echo "$PWD $ZERO_X"`).Output
		if want := ws + "/sub 42\n"; got != want {
			t.Errorf("output = %q, want %q", got, want)
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		for _, tc := range []struct {
			command string
			want    int
		}{
			{"true", 0},
			{"false", 1},
			{"(exit 42)", 42},
			{"sh -c 'exit 7'", 7},
			{"no-such-command-zero", 127},
		} {
			if got := run(t, s, tc.command).ExitCode; got != tc.want {
				t.Errorf("%q: exit code %d, want %d", tc.command, got, tc.want)
			}
		}
	})

	t.Run("files belong to the workspace owner", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		r := run(t, s, `id -u; echo hi > owned.txt && touch "$HOME/writable" && echo home-ok`)
		fi, err := os.Stat(ws + "/owned.txt")
		if err != nil {
			t.Fatal(err)
		}
		want := os.Getuid()
		if os.Geteuid() == 0 {
			want = testUID
		}
		if diff := cmp.Diff(strconv.Itoa(want)+"\nhome-ok\n", r.Output); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
		if got := int(fi.Sys().(*syscall.Stat_t).Uid); got != want {
			t.Errorf("owned.txt belongs to uid %d, want %d", got, want)
		}
	})

	t.Run("hardening", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		got := run(t, s, `grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | tr -s '\t ' ' '; ls /var/run/docker.sock 2>&1 >/dev/null | wc -l`).Output
		want := "CapEff: 0000000000000000\nNoNewPrivs: 1\n1\n"
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("parallel shells do not mix", func(t *testing.T) {
		t.Parallel()
		var wg sync.WaitGroup
		for _, tag := range []string{"A", "B"} {
			s := openDockerShell(t, d)
			wg.Go(func() {
				var want strings.Builder
				for i := 1; i <= 300; i++ {
					fmt.Fprintf(&want, "%s%d\n", tag, i)
				}
				if err := s.Start(fmt.Sprintf("for i in $(seq 1 300); do echo %s$i; done", tag)); err != nil {
					t.Error(err)
					return
				}
				r, err := s.Wait(t.Context(), quick, nil)
				if err != nil || !r.Done {
					t.Errorf("Wait = %+v, %v", r, err)
					return
				}
				if diff := cmp.Diff(want.String(), r.Output); diff != "" {
					t.Errorf("shell %s (-want +got):\n%s", tag, diff)
				}
			})
		}
		wg.Wait()
	})

	t.Run("interrupt kills sleep", func(t *testing.T) {
		t.Parallel()
		// A grace no loaded machine runs out of: SIGINT alone must end it.
		s := openDockerShell(t, newTestDocker(t, DockerOptions{InterruptGrace: 10 * time.Minute}))
		if err := s.Start("echo ready; sleep 60"); err != nil {
			t.Fatal(err)
		}
		waitForOutput(t, s, "ready\n")
		if err := s.Interrupt(t.Context()); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		// 130: SIGINT stopped it, not the SIGKILL (137) that would follow
		// the grace period.
		r, err := s.Wait(t.Context(), quick, nil)
		if err != nil || !r.Done || r.ExitCode != 130 {
			t.Fatalf("Wait after Interrupt = %+v, %v; want Done with 130", r, err)
		}
		if got := run(t, s, "echo still here").Output; got != "still here\n" {
			t.Errorf("after Interrupt: %q", got)
		}
	})

	t.Run("dialog and input", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		if err := s.Start(`python3 -c 'print("got " + input("Continue? [Y/n] "))'`); err != nil {
			t.Fatal(err)
		}
		r, err := s.Wait(t.Context(), Timeouts{Dialog: 300 * time.Millisecond, Max: 20 * time.Second}, nil)
		if err != nil || r.Reason != Dialog || r.Output != "Continue? [Y/n] " {
			t.Fatalf("Wait = %+v, %v; want the prompt as a Dialog", r, err)
		}
		if err := s.Input("yes"); err != nil {
			t.Fatal(err)
		}
		r, err = s.Wait(t.Context(), quick, nil)
		if err != nil || !r.Done || r.Output != "got yes\n" {
			t.Fatalf("Wait after Input = %+v, %v", r, err)
		}
	})

	t.Run("interrupt escalates to SIGKILL", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		// Interrupted only once the trap is set: a SIGINT before it would
		// end the command with 130.
		if err := s.Start(`bash -c "trap '' INT; echo ready; sleep 60"`); err != nil {
			t.Fatal(err)
		}
		waitForOutput(t, s, "ready\n")
		if err := s.Interrupt(t.Context()); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		r, err := s.Wait(t.Context(), quick, nil)
		if err != nil || !r.Done || r.ExitCode != 137 {
			t.Fatalf("Wait after Interrupt = %+v, %v; want Done with 137", r, err)
		}
	})

	t.Run("close kills background jobs", func(t *testing.T) {
		t.Parallel()
		s := openDockerShell(t, d)
		run(t, s, "sleep 1234 >/dev/null 2>&1 &")
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		s2 := openDockerShell(t, d)
		if got := run(t, s2, "pgrep -fc 'sleep 1234'").Output; got != "0\n" {
			t.Errorf("sleep 1234 processes left: %q", got)
		}
	})
}

func TestDockerContainerReused(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t)
	d1 := newTestDocker(t, DockerOptions{Workspace: ws})
	run(t, openDockerShell(t, d1), "echo from-first > /tmp/zero-marker")
	d2 := newTestDocker(t, DockerOptions{Workspace: ws})
	if got := run(t, openDockerShell(t, d2), "cat /tmp/zero-marker").Output; got != "from-first\n" {
		t.Errorf("second backend sees %q, want the first one's file", got)
	}
	list, err := d2.ListContainers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, c := range list {
		if c.Workspace == ws {
			mine = append(mine, c.Name+" "+c.State)
		}
	}
	if diff := cmp.Diff([]string{d1.ContainerName() + " running"}, mine); diff != "" {
		t.Errorf("containers of the workspace (-want +got):\n%s", diff)
	}
	removed, err := d2.RemoveContainers(t.Context(), ws, false)
	if err != nil || len(removed) != 1 {
		t.Fatalf("RemoveContainers = %v, %v; want one", removed, err)
	}
}

func TestDockerContainerKilled(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t, DockerOptions{NoProvision: true})
	s := openDockerShell(t, d)
	if err := s.Start("sleep 60"); err != nil {
		t.Fatal(err)
	}
	cl, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ContainerKill(t.Context(), d.ContainerName(), "KILL"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Wait(t.Context(), quick, nil)
	if !errors.Is(err, ErrUnavailable) || r.Reason != ShellEnded {
		t.Fatalf("Wait after the container was killed = %+v, %v; want ShellEnded, ErrUnavailable", r, err)
	}
	if !strings.Contains(err.Error(), d.ContainerName()) {
		t.Errorf("error %q does not name the container", err)
	}
	if err := cl.ContainerRemove(t.Context(), d.ContainerName(), container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	s2 := openDockerShell(t, d)
	if got := run(t, s2, "echo recovered").Output; got != "recovered\n" {
		t.Errorf("after recreation: %q", got)
	}
}

func TestDockerProvisionedVenv(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t, DockerOptions{})
	ws := d.Workdir()
	src := ws + "/zeropkg"
	for name, text := range map[string]string{
		"setup.py":            "from setuptools import setup\nsetup(name='zeropkg', version='1.0', packages=['zeropkg'])\n",
		"zeropkg/__init__.py": "VALUE = 42\n",
	} {
		if err := os.MkdirAll(filepath.Dir(src+"/"+name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src+"/"+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		// The shell runs as the workspace owner and pip builds in the source folder.
		if err := filepath.Walk(src, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chown(p, testUID, testUID)
		}); err != nil {
			t.Fatal(err)
		}
	}
	s := openDockerShell(t, d)
	got := run(t, s, `echo "$VIRTUAL_ENV"; command -v python`).Output
	if diff := cmp.Diff("/opt/venv\n/opt/venv/bin/python\n", got); diff != "" {
		t.Errorf("venv not active (-want +got):\n%s", diff)
	}
	if err := s.Start("pip install --no-index --no-build-isolation -q ./zeropkg >/dev/null 2>&1; echo $?"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Wait(t.Context(), Timeouts{Max: 60 * time.Second}, nil)
	if err != nil || r.Output != "0\n" {
		t.Fatalf("pip install = %+v, %v", r, err)
	}
	got = run(t, s, `cd /; python -c 'import zeropkg; print(zeropkg.__file__)'; /usr/bin/python3 -c 'import zeropkg' 2>/dev/null; echo "system python: $?"`).Output
	if !strings.HasPrefix(got, "/opt/venv/lib/") || !strings.HasSuffix(got, "/zeropkg/__init__.py\nsystem python: 1\n") {
		t.Errorf("after pip install: %q; want the package in /opt/venv only", got)
	}
}

func TestDockerProvisionFailure(t *testing.T) {
	t.Parallel()
	d := newTestDocker(t, DockerOptions{Provision: "echo provisioning-broke >&2; exit 3"})
	_, err := d.OpenShell(t.Context())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("OpenShell = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"exit status 3", "provisioning-broke", testImage()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestDockerPullFailure(t *testing.T) {
	t.Parallel()
	// A registry on a closed loopback port: the pull fails at once and
	// nothing leaves the machine.
	const img = "127.0.0.1:1/zero/missing:latest"
	d := newTestDocker(t, DockerOptions{Image: img})
	var progress int
	d.opts.OnPull = func(PullProgress) { progress++ }
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, err := d.OpenShell(ctx)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("OpenShell = %v, want ErrUnavailable", err)
	}
	t.Log(err)
	for _, want := range []string{"cannot pull image " + img} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// Not parallel: it changes DOCKER_HOST. It needs no engine.
func TestDockerEngineUnreachable(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent")
	d, err := NewDocker(DockerOptions{Workspace: t.TempDir(), Image: testImage()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.OpenShell(t.Context())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("OpenShell = %v, want ErrUnavailable", err)
	}
	t.Log(err)
	for _, want := range []string{"DOCKER_HOST=unix:///nonexistent", "cannot reach the Docker engine", "--sandbox local"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := d.ListContainers(t.Context()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("ListContainers = %v, want ErrUnavailable", err)
	}
}

func TestNewDockerErrors(t *testing.T) {
	t.Parallel()
	file := t.TempDir() + "/f"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts DockerOptions
	}{
		{"no workspace", DockerOptions{}},
		{"missing workspace", DockerOptions{Workspace: "/nonexistent/zero"}},
		{"workspace is a file", DockerOptions{Workspace: file}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d, err := NewDocker(tc.opts); err == nil {
				d.Close()
				t.Errorf("NewDocker(%+v) succeeded", tc.opts)
			}
		})
	}
}

func BenchmarkDockerShellRoundTrip(b *testing.B) {
	d := newTestDocker(b, DockerOptions{})
	s := openDockerShell(b, d)
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

// BenchmarkDockerColdStart measures a new container from the provisioned
// image to the first command's output.
func BenchmarkDockerColdStart(b *testing.B) {
	d := newTestDocker(b, DockerOptions{})
	s := openDockerShell(b, d) // provisions the image once
	s.Close()
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		if _, err := d.RemoveContainers(ctx, "", false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s, err := d.OpenShell(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start("echo ready"); err != nil {
			b.Fatal(err)
		}
		if r, err := s.Wait(ctx, quick, nil); err != nil || r.Output != "ready\n" {
			b.Fatalf("Wait = %+v, %v", r, err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkDockerExecFresh is the alternative the persistent shell
// replaces: one `docker exec true` per command, through the API.
func BenchmarkDockerExecFresh(b *testing.B) {
	d := newTestDocker(b, DockerOptions{})
	s := openDockerShell(b, d) // creates the container
	term := s.term.(*dockerTerm)
	ctx := context.Background()
	for b.Loop() {
		if _, code, err := term.run(ctx, []string{"true"}); err != nil || code != 0 {
			b.Fatalf("exec true = %d, %v", code, err)
		}
	}
}

func TestDockerImageStatus(t *testing.T) {
	t.Parallel()
	missing := newTestDocker(t, DockerOptions{Image: "127.0.0.1:1/zero/missing:latest"})
	st, err := missing.ImageStatus(t.Context())
	if err != nil || st.Present || st.Provisioned != "" {
		t.Errorf("a missing image: %+v, %v", st, err)
	}
	d := newTestDocker(t, DockerOptions{})
	if _, err := d.OpenShell(t.Context()); err != nil { // provisions when needed
		t.Fatal(err)
	}
	st, err = d.ImageStatus(t.Context())
	if err != nil || !st.Present || !strings.HasPrefix(st.Provisioned, ProvisionedRepo+":") {
		t.Errorf("a provisioned image: %+v, %v", st, err)
	}
}
