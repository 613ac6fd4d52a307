package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// An image without Python's venv (a minimal Debian or Kali image) is
// provisioned all the same: the default script asks
// the package manager for it, which fails here (the network is off), says
// so, and the shells run without a venv instead of not at all. The log
// says what is missing and how to provision again.
func TestDockerProvisionWithoutPython(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	image := imageFrom(t, testImage(), "DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq python3 python3-minimal 'python3.*' 'libpython3*' >/dev/null && apt-get clean && ! command -v python3")
	logged := &lockedWriter{w: &bytes.Buffer{}}
	var d *Docker
	// Registered before newTestDocker's, so it runs after the containers
	// went: an image a container still uses is only untagged, and stays.
	t.Cleanup(func() {
		if d == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if st, err := d.ImageStatus(ctx); err == nil && st.Provisioned != "" && st.Provisioned != image {
			_ = exec.Command("docker", "rmi", st.Provisioned).Run()
		}
	})
	d = newTestDocker(t, DockerOptions{Image: image, Logger: slog.New(slog.NewTextHandler(logged, nil))})
	s := openDockerShell(t, d)
	got := run(t, s, `echo "venv=$VIRTUAL_ENV"; command -v python3 || echo no python; echo ok > made-here; cat made-here`).Output
	if diff := "venv=\nno python\nok\n"; got != diff {
		t.Errorf("a shell of an image without Python = %q, want %q", got, diff)
	}
	log := logged.String()
	for _, want := range []string{"level=WARN", "no Python venv in this image", "docker rmi", "zero-provisioned:", "apt-get could not install python3-venv"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
}

// imageFrom commits, as a new image removed when the test ends, what the
// shell script makes of base (run as root, with no network).
func imageFrom(t *testing.T, base, script string) string {
	t.Helper()
	name := fmt.Sprintf("zero-test-%d", time.Now().UnixNano())
	tag := "zero-test-derived:" + name
	if out, err := exec.Command("docker", "run", "--name", name, "--network", "none", "--user", "root", base, "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("docker run %s: %v\n%s", base, err, out)
	}
	defer exec.Command("docker", "rm", "-f", name).Run()
	if out, err := exec.Command("docker", "commit", name, tag).CombinedOutput(); err != nil {
		t.Fatalf("docker commit: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", tag).Run() }) // after what was made of it (cleanups run last first)
	return tag
}

// lockedWriter is a writer for loggers that other goroutines may use.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
