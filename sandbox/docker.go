package sandbox

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// DefaultDockerImage is the image of [DockerOptions] when Image is empty:
// Agent Zero's Kali base.
const DefaultDockerImage = "kalilinux/kali-rolling"

// Defaults of [DockerOptions] for the zero value of their fields.
const (
	DefaultDockerNetwork = "bridge"
	DefaultDockerMemory  = 4 << 30
	DefaultDockerPids    = 4096
)

// Labels on every container the Docker backend creates; [Docker.ListContainers]
// and [Docker.RemoveContainers] find them by these.
const (
	LabelManaged   = "zero.managed"
	LabelWorkspace = "zero.workspace"
	// LabelConfig holds a hash of the container's settings: a container
	// whose settings differ from the backend's is replaced.
	LabelConfig = "zero.config"
)

// DefaultProvision makes the Python venv /opt/venv that shells activate,
// so that the agent's pip installs never touch the system Python. The venv
// is writable by every user because the shells run as the workspace
// owner, whose uid is not known when the image is built. An image without
// Python's venv (a minimal Debian or Kali image) gets it from its
// package manager, when the network lets it; failing that the image is
// used without a venv, which the script says, rather than not at all.
const DefaultProvision = `set -e
mkdir -p /etc/zero
: > /etc/zero/profile
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
	log=/tmp/zero-provision.log
	if command -v apt-get >/dev/null 2>&1; then
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 python3-venv; } >$log 2>&1 ||
			{ echo "zero: apt-get could not install python3-venv:"; tail -n 3 $log; } >&2
		rm -rf /var/lib/apt/lists/*
	elif command -v apk >/dev/null 2>&1; then
		apk add --no-cache python3 >$log 2>&1 || { echo "zero: apk could not install python3:"; tail -n 3 $log; } >&2
	elif command -v dnf >/dev/null 2>&1; then
		dnf install -y -q python3 >$log 2>&1 || { echo "zero: dnf could not install python3:"; tail -n 3 $log; } >&2
	fi
	rm -f $log
fi
if python3 -m venv /opt/venv >/dev/null 2>&1; then
	chmod -R a+rwX /opt/venv
	printf '%s\n' 'export VIRTUAL_ENV=/opt/venv' 'export PATH="/opt/venv/bin:$PATH"' > /etc/zero/profile
else
	rm -rf /opt/venv
	echo "zero: no Python venv in this image: commands run without one" >&2
fi
`

// ProvisionedRepo is the repository of derived images.
const ProvisionedRepo = "zero-provisioned"

// dockerHome is HOME for a non-root user, who has no writable home in the
// image; /tmp is writable by everyone in every base image.
const dockerHome = "/tmp/zero-home"

// helperTimeout bounds each helper exec (signalling, sweeping) and the
// inspections made when a shell's stream ends.
const helperTimeout = 10 * time.Second

// DockerOptions configures [NewDocker]. Only Workspace is required.
type DockerOptions struct {
	// Workspace is the host folder the agent works in. It is bind-mounted
	// read-write at the same absolute path in the container, and shells
	// start there. It must exist.
	Workspace string
	// Mounts are further host folders (absolute or relative to the current
	// directory), each bind-mounted read-write at its own absolute path.
	Mounts []string
	// Image is the base image; default [DefaultDockerImage]. It is pulled
	// when missing locally.
	Image string
	// User runs the shells: "" means the workspace owner's uid:gid, so the
	// files the agent creates belong to the host user; "root" (or any
	// user[:group] the image knows) is an explicit choice. HOME is
	// /tmp/zero-home for every user but root.
	User string
	// Network is the container's network mode ("bridge", "none", "host", or
	// a network name); default [DefaultDockerNetwork].
	Network string
	// Memory is the memory limit in bytes; 0 means [DefaultDockerMemory],
	// negative means none.
	Memory int64
	// CPUs limits CPU time in cores (1.5 = one and a half); 0 means none.
	CPUs float64
	// Pids limits the number of processes; 0 means [DefaultDockerPids],
	// negative means none.
	Pids int64
	// CapAdd are the capabilities kept; all others are dropped.
	CapAdd []string
	// Hide lists host paths the container must not see. Only those inside
	// the Workspace or a Mount are reachable at all; each of those is
	// covered in the container by an empty read-only tmpfs (a folder) or
	// /dev/null (a file), so a workspace that is your home folder does not
	// hand the agent your keys or Zero's own configuration.
	Hide []string
	// Env is extra environment for shells, after the shell defaults
	// (TERM=dumb, pagers off), so it can override them.
	Env []string
	// MaxOutput caps Result.Output; default [DefaultMaxOutput].
	MaxOutput int
	// InterruptGrace is how long Interrupt waits after SIGINT before
	// SIGKILL; default [DefaultInterruptGrace].
	InterruptGrace time.Duration
	// Provision is a bash script run once as root in a fresh container of
	// Image; the result is committed as a derived image, named
	// zero-provisioned:<hash of the base image's ID and the script>, that
	// later containers start from. "" means [DefaultProvision]. If the
	// script writes /etc/zero/profile, shells source it when they start.
	Provision string
	// NoProvision starts containers from Image as it is.
	NoProvision bool
	// OnPull, when set, receives the progress of an image pull. It is
	// called on the goroutine that opens the shell.
	OnPull func(PullProgress)
	// Logger receives debug logs (never command text or output); nil is
	// silent.
	Logger *slog.Logger
}

// PullProgress is one progress report of an image pull.
type PullProgress struct {
	// Image is the image being pulled.
	Image string
	// Layer is the layer the report is about; empty for the whole image.
	Layer string
	// Status is the engine's text, e.g. "Downloading" or "Pull complete".
	Status string
	// Current and Total count bytes of Layer; zero when unknown.
	Current, Total int64
}

// ContainerInfo describes a sandbox container.
type ContainerInfo struct {
	ID        string
	Name      string
	Workspace string
	Image     string
	// State is the engine's state, e.g. "running" or "exited".
	State   string
	Created time.Time
}

// dockerAPI is the part of the Docker client the backend uses, so that
// tests could put a fake in its place and the SDK stays behind it.
type dockerAPI interface {
	DaemonHost() string
	Close() error
	ImageInspect(ctx context.Context, imageID string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, options image.PullOptions) (io.ReadCloser, error)
	DistributionInspect(ctx context.Context, imageRef, encodedRegistryAuth string) (registry.DistributionInspect, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig,
		networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
	ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error)
	ContainerExecResize(ctx context.Context, execID string, options container.ResizeOptions) error
	ContainerWait(ctx context.Context, containerID string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerLogs(ctx context.Context, containerID string, options container.LogsOptions) (io.ReadCloser, error)
	ContainerCommit(ctx context.Context, containerID string, options container.CommitOptions) (container.CommitResponse, error)
}

var (
	_ dockerAPI = (*client.Client)(nil)
	_ Backend   = (*Docker)(nil)
)

// Docker is the backend that runs shells in one long-lived container per
// workspace. The container is found again by its name and labels, so it
// is shared by every backend (and every run of zero) for the same
// workspace, and it is created or started lazily by the first
// [Docker.OpenShell]. It is not stopped by Close: installed packages and
// files outside the workspace survive until [Docker.RemoveContainers].
//
// Hardening: all capabilities dropped except [DockerOptions.CapAdd],
// no-new-privileges, memory, CPU and pids limits, the configured network
// mode, and the Docker socket never mounted.
//
// Process control works without access to the container's kernel objects
// (the engine may be remote): each shell announces its pid when it starts;
// the foreground job is read from that pid's /proc/<pid>/stat (tpgid) by a
// short helper exec, and signals are sent by another helper exec running
// bash's kill as the shell's user. Such a helper costs one exec round
// trip (tens of milliseconds), which only Interrupt and Close pay.
//
// Every exec carries ZERO_INSTANCE=<id of this backend> in its
// environment, which the processes it starts inherit. Close kills them all
// with one exec per user, and a backend that attaches to a running
// container kills those of instances that died without closing (see
// [lease]).
type Docker struct {
	opts      DockerOptions // normalised
	api       dockerAPI
	log       *slog.Logger
	name      string // container name, derived from the workspace
	user      string
	home      string
	configSum string
	instance  string // tags every exec: ZERO_INSTANCE=<instance>
	leaseKey  string // the container, on this engine, in lease file names

	startMu   sync.Mutex // one container check/creation at a time
	leaseDir  string     // "" when leases cannot be kept; guarded by startMu
	leaseOnce bool       // the lease was tried; guarded by startMu
	// life ends with Close, and with it a start under way (see
	// ensureContainer).
	life     context.Context
	endLife  context.CancelFunc
	starting *startCall // the start under way, guarded by mu

	mu     sync.Mutex
	shells map[*Shell]struct{}
	closed bool
	// waiters are the shells being opened whose ctx carries a pull
	// listener (WithPullListener); pulling is the pull under way, if any.
	waiters map[*pullWaiter]struct{}
	pulling *PullStatus
	pullSeq uint64   // numbers the reports, so a waiter hears them in order
	lease   *lease   // nil until the first exec, or when leaseDir is unusable
	users   []string // users execs ran as: the reaper runs as each
}

// NewDocker checks opts and connects a client to the engine named by
// DOCKER_HOST (default the local socket), negotiating the API version. It
// does not contact the engine: that happens on the first OpenShell.
func NewDocker(opts DockerOptions) (*Docker, error) {
	cl, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker sandbox: %w: client: %v", ErrUnavailable, err)
	}
	d, err := newDocker(opts, cl)
	if err != nil {
		cl.Close()
		return nil, err
	}
	return d, nil
}

func newDocker(opts DockerOptions, api dockerAPI) (*Docker, error) {
	if opts.Workspace == "" {
		return nil, errors.New("docker sandbox: DockerOptions.Workspace is required")
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("docker sandbox: workspace %q: %w", opts.Workspace, err)
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return nil, fmt.Errorf("docker sandbox: workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("docker sandbox: workspace %q is not a directory", ws)
	}
	opts.Workspace = ws
	mounts := make([]string, 0, len(opts.Mounts))
	for _, m := range opts.Mounts {
		abs, err := filepath.Abs(m)
		if err != nil {
			return nil, fmt.Errorf("docker sandbox: mount %q: %w", m, err)
		}
		if abs != ws && !slices.Contains(mounts, abs) {
			mounts = append(mounts, abs)
		}
	}
	opts.Mounts = mounts
	opts.Image = cmp.Or(opts.Image, DefaultDockerImage)
	opts.Network = cmp.Or(opts.Network, DefaultDockerNetwork)
	if opts.Memory == 0 {
		opts.Memory = DefaultDockerMemory
	}
	if opts.Pids == 0 {
		opts.Pids = DefaultDockerPids
	}
	if opts.NoProvision {
		opts.Provision = ""
	} else {
		opts.Provision = cmp.Or(opts.Provision, DefaultProvision)
	}
	opts.CapAdd = slices.Clone(opts.CapAdd)
	opts.Env = slices.Clone(opts.Env)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	user := opts.User
	if user == "" {
		uid, gid, ok := fileOwner(fi)
		switch {
		case ok:
			user = fmt.Sprintf("%d:%d", uid, gid)
		case runtime.GOOS != "windows":
			return nil, fmt.Errorf("docker sandbox: cannot read the owner of %q", ws)
		}
		// On Windows files have no uid: the image's own user runs, as
		// Docker Desktop maps the workspace for it.
	}
	home := homeFor(user)
	sum := sha256.Sum256([]byte(ws))
	engine := sha256.Sum256([]byte(api.DaemonHost()))
	d := &Docker{
		opts:     opts,
		api:      api,
		log:      logger,
		name:     "zero-" + hex.EncodeToString(sum[:6]),
		user:     user,
		home:     home,
		instance: newNonce(),
		shells:   make(map[*Shell]struct{}),
	}
	d.life, d.endLife = context.WithCancel(context.Background())
	d.leaseKey = d.name + "@" + hex.EncodeToString(engine[:4])
	d.configSum = d.configHash()
	return d, nil
}

// configHash covers every setting that is fixed when the container is
// created.
// hiddenInMounts returns the hidden paths that exist inside the workspace
// or a mount: folders and files, sorted. Paths elsewhere are not in the
// container in the first place.
func (d *Docker) hiddenInMounts() (dirs, files []string) {
	roots := append([]string{d.opts.Workspace}, d.opts.Mounts...)
	for _, p := range d.opts.Hide {
		p = filepath.Clean(p)
		inside := false
		for _, r := range roots {
			if rel, err := filepath.Rel(r, p); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
				inside = true
			}
		}
		fi, err := os.Lstat(p)
		if !inside || err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // a link leads outside the mounts, or to a path hidden itself
		}
		if fi.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	slices.Sort(dirs)
	slices.Sort(files)
	return slices.Compact(dirs), slices.Compact(files)
}

func (d *Docker) configHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "image=%s\nuser=%s\nnet=%s\nmem=%d\ncpus=%g\npids=%d\n",
		d.opts.Image, d.user, d.opts.Network, d.opts.Memory, d.opts.CPUs, d.opts.Pids)
	fmt.Fprintf(h, "provision=%q\n", d.opts.Provision)
	for _, m := range d.opts.Mounts {
		fmt.Fprintf(h, "mount=%s\n", m)
	}
	for _, c := range d.opts.CapAdd {
		fmt.Fprintf(h, "cap=%s\n", c)
	}
	dirs, files := d.hiddenInMounts()
	for _, p := range slices.Concat(dirs, files) {
		fmt.Fprintf(h, "hide=%s\n", p)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Name returns "docker".
func (d *Docker) Name() string { return "docker" }

// Workdir returns the workspace, which is the same path in the container.
func (d *Docker) Workdir() string { return d.opts.Workspace }

// ContainerName is the name of the workspace's container.
func (d *Docker) ContainerName() string { return d.name }

// OpenShell makes sure the workspace's container runs (pulling the image
// and creating the container if needed), starts bash in it over a PTY
// exec, and waits until the shell is ready. ctx bounds the wait: a pull or
// provisioning that other shells wait for too goes on when it ends (see
// ensureContainer).
func (d *Docker) OpenShell(ctx context.Context) (*Shell, error) {
	return d.OpenShellAs(ctx, "")
}

// OpenShellAs opens a shell that runs as user ("" = the backend's user), for
// profiles that need another one (sandbox.user: root).
func (d *Docker) OpenShellAs(ctx context.Context, user string) (*Shell, error) {
	if user == "" {
		user = d.user
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("open docker shell: %w", ErrClosed)
	}
	if fn := pullListener(ctx); fn != nil {
		defer d.wait(fn)()
	}
	id, err := d.ensureContainer(ctx)
	if err != nil {
		return nil, fmt.Errorf("open docker shell: %w", err)
	}
	d.noteUser(user)
	term, err := d.startTerminal(ctx, id, user)
	if err != nil {
		return nil, fmt.Errorf("open docker shell: %w", err)
	}
	log := d.log.With("backend", "docker", "container", d.name, "shell_pid", term.pid)
	s := newShell(term, shellConfig{maxOutput: d.opts.MaxOutput, grace: d.opts.InterruptGrace, logger: log})
	if err := s.handshake(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open docker shell: %w", err)
	}
	s.onClose = d.forget
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		_ = s.Close()
		return nil, fmt.Errorf("open docker shell: %w", ErrClosed)
	}
	d.shells[s] = struct{}{}
	d.mu.Unlock()
	log.Debug("shell opened")
	return s, nil
}

// Close closes every shell the backend opened, kills every process it
// started (also those that escaped into a session of their own, and those
// of shells closed before), and closes the engine client. The container
// keeps running for the next run.
//
// Its cost does not grow with the number of shells: their streams close
// in parallel without each shell's own sweep exec, then one exec per user
// kills everything carrying this backend's tag. When that fails (the
// engine is gone), the lease stays behind, unlocked, for the next backend
// that attaches to the container to finish the job.
func (d *Docker) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.endLife() // a start under way stops
	shells := make([]*Shell, 0, len(d.shells))
	for s := range d.shells {
		shells = append(shells, s)
		s.term.(*dockerTerm).noSweep.Store(true)
	}
	users, l := slices.Clone(d.users), d.lease
	d.mu.Unlock()
	err := closeAll(shells)
	killed := true
	if len(users) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
		if rerr := d.reap(ctx, d.instance, users); rerr != nil {
			killed = false
			d.log.Warn("could not kill the sandbox commands; the next run will", "container", d.name, "err", rerr)
		}
		cancel()
	}
	if l != nil {
		l.release(killed)
	}
	return errors.Join(err, d.api.Close())
}

// noteUser records, before an exec runs as user, that the reaper must run
// as user too.
func (d *Docker) noteUser(user string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.Contains(d.users, user) {
		return
	}
	d.users = append(d.users, user)
	if d.lease != nil {
		if err := d.lease.addUser(user); err != nil {
			d.log.Warn("sandbox lease", "err", err)
		}
	}
}

// takeLease takes this instance's lease, once; without a usable lease
// directory the backend works on, only without the crash clean-up.
// Called with startMu held.
func (d *Docker) takeLease() {
	if d.leaseOnce {
		return
	}
	d.leaseOnce = true
	dir, err := leaseDir()
	if err == nil {
		var l *lease
		if l, err = acquireLease(dir, d.leaseKey, d.instance); err == nil {
			d.leaseDir = dir
			d.mu.Lock()
			d.lease = l
			for _, u := range d.users {
				_ = l.addUser(u)
			}
			d.mu.Unlock()
			return
		}
	}
	d.log.Warn("no sandbox lease: commands left by a crash will not be killed", "err", err)
}

// reapDead kills what instances that died without closing left in the
// container, and forgets their leases. Only a container that was running
// when this backend found it can hold such processes; one it created or
// started has none. A lease whose reaping fails is kept for the next try.
// Called with startMu held.
func (d *Docker) reapDead(ctx context.Context, attached bool) {
	if d.leaseDir == "" {
		return
	}
	for _, l := range deadLeases(d.leaseDir, d.leaseKey) {
		var err error
		if attached && len(l.users) > 0 {
			if err = d.reap(ctx, l.instanceOf(), l.users); err == nil {
				d.log.Info("killed the sandbox commands of a zero that ended without closing", "container", d.name, "instance", l.instanceOf())
			} else {
				d.log.Warn("could not kill the sandbox commands of a zero that ended without closing", "container", d.name, "err", err)
			}
		}
		l.release(err == nil)
	}
}

// reapScript SIGKILLs every process whose environment holds
// ZERO_INSTANCE=$0, and every member of a session such a process leads
// (one that cleared its environment, e.g. with env -i, is still in its
// shell's session); again while it finds some, for processes forked
// meanwhile. It runs as one user, and can only see the environment of,
// and kill, that user's processes. grep reads the environments fast; a
// loop of bash builtins does it, slowly, in an image without grep.
const reapScript = `t="ZERO_INSTANCE=$0"
tagged() {
	if command -v grep >/dev/null; then
		grep -lzxF "$t" /proc/[0-9]*/environ
	else
		for f in /proc/[0-9]*/environ; do
			while IFS= read -r -d "" v; do [ "$v" = "$t" ] && { echo "$f"; break; }; done < "$f"
		done
	fi
}
for _ in 1 2 3; do
	s=" "
	for f in $(tagged); do p=${f#/proc/}; p=${p%/environ}; [ "$p" != "$$" ] && s="$s$p "; done
	[ "$s" = " " ] && break
	kill -9 $s
	for f in /proc/[0-9]*/stat; do
		read -r l < "$f" || continue
		set -- $l; p=$1; l=${l##*) }; set -- $l
		case "$s" in *" $4 "*) kill -9 "$p";; esac
	done
done 2>/dev/null
echo ` + reapDone

// reapDone is what reapScript prints when it is done. reap returns then,
// without waiting for the end of the exec: the engine can take seconds to
// end it while it processes the exits of the processes just killed.
const reapDone = "zero-reaped"

// reap runs reapScript for instance as each of users.
func (d *Docker) reap(ctx context.Context, instance string, users []string) error {
	ctx, cancel := context.WithTimeout(ctx, helperTimeout)
	defer cancel()
	var errs []error
	for _, u := range users {
		// Untagged, so that reaping this very instance spares the reaper.
		if _, _, err := d.execUntil(ctx, d.name, u, nil, []string{"bash", "-c", reapScript, instance}, reapDone); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	// Nothing is left to kill in a container that is gone or stopped.
	info, err := d.api.ContainerInspect(ctx, d.name)
	if errdefs.IsNotFound(err) || (err == nil && info.State != nil && !info.State.Running) {
		return nil
	}
	return errors.Join(errs...)
}

func (d *Docker) forget(s *Shell) {
	d.mu.Lock()
	delete(d.shells, s)
	d.mu.Unlock()
}

// engineErr turns a client error into one that says what to do when the
// engine cannot be reached, and wraps [ErrUnavailable] for every engine
// failure.
func (d *Docker) engineErr(op string, err error) error {
	if client.IsErrConnectionFailed(err) {
		host := os.Getenv("DOCKER_HOST")
		where := "DOCKER_HOST is not set, so the local socket " + d.api.DaemonHost() + " was used"
		if host != "" {
			where = "DOCKER_HOST=" + host
		}
		return fmt.Errorf("%w: cannot reach the Docker engine (%s): %v; start Docker, "+
			"point DOCKER_HOST at a running engine, or use the local sandbox (--sandbox local)", ErrUnavailable, where, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, op, err)
}

// startCall is one start of the container that shells being opened wait
// for together.
type startCall struct {
	done    chan struct{}
	cancel  context.CancelCauseFunc
	waiters int // guarded by Docker.mu
	id      string
	err     error
}

// ensureContainer returns the ID of the workspace's running container,
// starting, replacing or creating it as needed (see startContainer). The
// shells being opened wait for one start together, which runs under its
// own context: a caller whose ctx ends stops waiting with ctx's cause, and
// the start (a pull, the provisioning) goes on for the others; the last
// one to leave ends it, and gets its error.
func (d *Docker) ensureContainer(ctx context.Context) (string, error) {
	d.mu.Lock()
	c := d.starting
	if c == nil {
		sctx, cancel := context.WithCancelCause(d.life)
		c = &startCall{done: make(chan struct{}), cancel: cancel}
		d.starting = c
		go func() {
			id, err := d.startContainer(sctx)
			cancel(nil)
			d.mu.Lock()
			if d.starting == c {
				d.starting = nil
			}
			d.mu.Unlock()
			c.id, c.err = id, err
			close(c.done)
		}()
	}
	c.waiters++
	d.mu.Unlock()
	select {
	case <-c.done:
		d.mu.Lock()
		c.waiters--
		d.mu.Unlock()
		return c.id, c.err
	case <-ctx.Done():
	}
	d.mu.Lock()
	c.waiters--
	last := c.waiters == 0
	if last && d.starting == c {
		d.starting = nil // a shell that comes now starts afresh
	}
	d.mu.Unlock()
	if !last {
		return "", fmt.Errorf("the sandbox is still starting: %w", context.Cause(ctx))
	}
	c.cancel(context.Cause(ctx))
	<-c.done // at once: the engine's calls follow the cancel
	return c.id, c.err
}

// startContainer is ensureContainer's work: it takes this instance's lease
// before any exec can run, and kills what dead instances left in a
// container it attaches to.
func (d *Docker) startContainer(ctx context.Context) (string, error) {
	d.startMu.Lock()
	defer d.startMu.Unlock()
	id, attached, err := d.container(ctx)
	if err != nil {
		if d.life.Err() != nil {
			return "", fmt.Errorf("%w: %w", ErrClosed, err)
		}
		return "", err
	}
	d.takeLease()
	d.reapDead(ctx, attached)
	return id, nil
}

// container finds, starts, replaces or creates the container; attached
// reports that it was running already.
func (d *Docker) container(ctx context.Context) (id string, attached bool, err error) {
	for attempt := 0; ; attempt++ {
		info, err := d.api.ContainerInspect(ctx, d.name)
		switch {
		case errdefs.IsNotFound(err):
			id, err := d.createContainer(ctx)
			if errdefs.IsConflict(err) && attempt == 0 {
				continue // another process created it meanwhile
			}
			return id, false, err
		case err != nil:
			return "", false, d.engineErr("inspect container "+d.name, err)
		}
		if info.Config == nil || info.Config.Labels[LabelConfig] != d.configSum {
			d.log.Info("replacing sandbox container with other settings", "container", d.name)
			if err := d.api.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true}); err != nil && !errdefs.IsNotFound(err) {
				return "", false, d.engineErr("remove container "+d.name, err)
			}
			continue
		}
		if info.State != nil && info.State.Running {
			return info.ID, true, nil
		}
		d.log.Debug("starting sandbox container", "container", d.name)
		if err := d.api.ContainerStart(ctx, info.ID, container.StartOptions{}); err != nil {
			return "", false, d.engineErr("start container "+d.name, err)
		}
		return info.ID, false, nil
	}
}

func (d *Docker) createContainer(ctx context.Context) (string, error) {
	img, err := d.ensureImage(ctx)
	if err != nil {
		return "", err
	}
	binds := []string{d.opts.Workspace + ":" + d.opts.Workspace}
	for _, m := range d.opts.Mounts {
		binds = append(binds, m+":"+m)
	}
	dirs, files := d.hiddenInMounts()
	var tmpfs map[string]string
	for _, dir := range dirs {
		if tmpfs == nil {
			tmpfs = map[string]string{}
		}
		tmpfs[dir] = "ro,size=4k,mode=0755"
	}
	for _, f := range files {
		binds = append(binds, "/dev/null:"+f+":ro")
	}
	res := container.Resources{NanoCPUs: int64(d.opts.CPUs * 1e9)}
	if d.opts.Memory > 0 {
		res.Memory = d.opts.Memory
	}
	if d.opts.Pids > 0 {
		res.PidsLimit = &d.opts.Pids
	}
	init := true
	cfg := &container.Config{
		Image: img,
		// PID 1 only keeps the container alive; the engine's init (Init
		// below) reaps the orphans of the shells' jobs.
		Cmd:        []string{"sleep", "infinity"},
		WorkingDir: d.opts.Workspace,
		User:       d.user,
		Env:        []string{"HOME=" + d.home},
		Labels: map[string]string{
			LabelManaged:   "1",
			LabelWorkspace: d.opts.Workspace,
			LabelConfig:    d.configSum,
		},
	}
	host := &container.HostConfig{
		Binds:       binds,
		Tmpfs:       tmpfs,
		NetworkMode: container.NetworkMode(d.opts.Network),
		CapDrop:     []string{"ALL"},
		CapAdd:      d.opts.CapAdd,
		SecurityOpt: []string{"no-new-privileges"},
		Resources:   res,
		Init:        &init,
	}
	created, err := d.api.ContainerCreate(ctx, cfg, host, nil, nil, d.name)
	if err != nil {
		if errdefs.IsConflict(err) {
			return "", err
		}
		return "", d.engineErr("create container "+d.name+" from "+d.opts.Image, err)
	}
	if err := d.api.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		_ = d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
		return "", d.engineErr("start container "+d.name, err)
	}
	d.log.Info("sandbox container created", "container", d.name, "image", img)
	return created.ID, nil
}

// ensureImage pulls the base image when the engine does not have it and
// provisions the derived image when there is none yet; it returns the
// image containers start from.
func (d *Docker) ensureImage(ctx context.Context) (string, error) {
	base, err := d.baseImage(ctx)
	if err != nil {
		return "", err
	}
	if d.opts.Provision == "" {
		return d.opts.Image, nil
	}
	derived := d.derivedImage(base.ID)
	// Backends of this process provision one at a time, so that a second
	// one finds the first one's image instead of building it again.
	provisionMu.Lock()
	defer provisionMu.Unlock()
	switch _, err := d.api.ImageInspect(ctx, derived); {
	case err == nil:
		return derived, nil
	case !errdefs.IsNotFound(err):
		return "", d.engineErr("inspect image "+derived, err)
	}
	return d.provision(ctx, derived)
}

var provisionMu sync.Mutex

// EnsureImage makes sure the engine has the base image, pulling it when it
// is missing, without provisioning or starting anything, so a caller can
// find out before a run whether the image can be had at all. A pull the
// engine refuses (offline, no such image) is a [*PullError]; an engine
// that cannot be reached, and a ctx that ends, are other errors.
func (d *Docker) EnsureImage(ctx context.Context) error {
	_, err := d.baseImage(ctx)
	return err
}

// baseImage inspects the base image, pulling it first when missing.
func (d *Docker) baseImage(ctx context.Context) (image.InspectResponse, error) {
	base, err := d.api.ImageInspect(ctx, d.opts.Image)
	switch {
	case errdefs.IsNotFound(err):
		d.log.Info("pulling sandbox image", "image", d.opts.Image)
		if err := d.pull(ctx); err != nil {
			switch {
			case client.IsErrConnectionFailed(err):
				return base, d.engineErr("pull", err)
			case ctx.Err() != nil:
				return base, fmt.Errorf("%w: pull %s: %w", ErrUnavailable, d.opts.Image, context.Cause(ctx))
			}
			return base, &PullError{Image: d.opts.Image, Err: err}
		}
		if base, err = d.api.ImageInspect(ctx, d.opts.Image); err != nil {
			return base, d.engineErr("inspect image "+d.opts.Image, err)
		}
	case err != nil:
		return base, d.engineErr("inspect image "+d.opts.Image, err)
	}
	return base, nil
}

// derivedImage names the provisioned image of a base image: the script and
// the base image's ID decide it, so a changed script or base gives a new one.
func (d *Docker) derivedImage(baseID string) string {
	sum := sha256.Sum256([]byte(baseID + "\x00" + d.opts.Provision))
	return ProvisionedRepo + ":" + hex.EncodeToString(sum[:8])
}

// ImageStatus is what the engine has of the sandbox image (for zero doctor).
type ImageStatus struct {
	Image       string
	Present     bool   // the base image is on the engine
	Provisioned string // the derived image, when provisioning already ran
}

// ImageStatus says whether the image is present and provisioned, without
// pulling or provisioning anything.
func (d *Docker) ImageStatus(ctx context.Context) (ImageStatus, error) {
	st := ImageStatus{Image: d.opts.Image}
	base, err := d.api.ImageInspect(ctx, d.opts.Image)
	switch {
	case errdefs.IsNotFound(err):
		return st, nil
	case err != nil:
		return st, d.engineErr("inspect image "+d.opts.Image, err)
	}
	st.Present = true
	if d.opts.Provision == "" {
		st.Provisioned = d.opts.Image // nothing to provision
		return st, nil
	}
	derived := d.derivedImage(base.ID)
	switch _, err := d.api.ImageInspect(ctx, derived); {
	case err == nil:
		st.Provisioned = derived
	case !errdefs.IsNotFound(err):
		return st, d.engineErr("inspect image "+derived, err)
	}
	return st, nil
}

// provision runs the provisioning script in a temporary container of the
// base image and commits the result as derived, which it returns. A result
// the script says is partial (its "zero: " lines: no network for Python's
// venv) is kept as derived only when the sandbox has no network, where it
// cannot be better; otherwise it is committed as derived-partial, used by
// this backend, and the next backend provisions again.
func (d *Docker) provision(ctx context.Context, derived string) (string, error) {
	begin := time.Now()
	d.log.Info("provisioning sandbox image", "image", d.opts.Image, "derived", derived)
	created, err := d.api.ContainerCreate(ctx, &container.Config{
		Image:  d.opts.Image,
		User:   "root",
		Cmd:    []string{"bash", "-c", d.opts.Provision},
		Labels: map[string]string{LabelManaged + ".provision": "1"},
	}, &container.HostConfig{
		NetworkMode: container.NetworkMode(d.opts.Network),
		SecurityOpt: []string{"no-new-privileges"},
	}, nil, nil, "")
	if err != nil {
		return "", d.engineErr("create provisioning container from "+d.opts.Image, err)
	}
	// The temporary container goes whatever happens, also when ctx ends.
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), helperTimeout)
		defer cancel()
		_ = d.api.ContainerRemove(rctx, created.ID, container.RemoveOptions{Force: true})
	}()
	waitCh, errCh := d.api.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := d.api.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return "", d.engineErr("start provisioning container", err)
	}
	var code int64
	select {
	case w := <-waitCh:
		code = w.StatusCode
		if w.Error != nil && w.Error.Message != "" {
			return "", fmt.Errorf("%w: provisioning %s: %s", ErrUnavailable, d.opts.Image, w.Error.Message)
		}
	case err := <-errCh:
		if ctx.Err() != nil {
			return "", fmt.Errorf("provisioning %s: %w", d.opts.Image, ctx.Err())
		}
		return "", d.engineErr("wait for provisioning", err)
	}
	if code != 0 {
		return "", fmt.Errorf("%w: the provisioning script failed in image %q with exit status %d; its last output:\n%s",
			ErrUnavailable, d.opts.Image, code, d.logTail(ctx, created.ID))
	}
	// What the default script could not do it says in lines of its own.
	if tail := d.logTail(ctx, created.ID); strings.Contains(tail, "zero: ") {
		again := "the next start tries again"
		if d.opts.Network == "none" {
			again = "remove " + derived + " (docker rmi) to provision it again with a network"
		} else {
			derived += "-partial"
		}
		d.log.Warn("the sandbox image was provisioned without all it should have; "+again, "image", d.opts.Image, "output", strings.TrimSpace(tail))
	}
	if _, err := d.api.ContainerCommit(ctx, created.ID, container.CommitOptions{
		Reference: derived,
		Comment:   "zero sandbox provisioning of " + d.opts.Image,
	}); err != nil {
		return "", d.engineErr("commit provisioned image "+derived, err)
	}
	d.log.Info("sandbox image provisioned", "derived", derived, "took", time.Since(begin).Round(time.Millisecond))
	return derived, nil
}

// logTail returns the last lines a container printed, for error messages.
func (d *Docker) logTail(ctx context.Context, id string) string {
	rc, err := d.api.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "20"})
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer rc.Close()
	var out strings.Builder
	if _, err := stdcopy.StdCopy(&out, &out, io.LimitReader(rc, 64<<10)); err != nil && out.Len() == 0 {
		return "(no output: " + err.Error() + ")"
	}
	return strings.TrimRight(out.String(), "\n")
}

// pullMessage is one line of the engine's pull progress stream.
type pullMessage struct {
	Status   string `json:"status"`
	ID       string `json:"id"`
	Progress *struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
	Error *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	ErrorMessage string `json:"error"`
}

func (d *Docker) pull(ctx context.Context) (err error) {
	meter := newPullMeter(d.opts.Image)
	d.report(meter.status())
	defer func() {
		st := meter.status()
		st.Finished = true
		if err != nil {
			st.Error = strings.Join(strings.Fields(err.Error()), " ")
		}
		d.report(st)
		d.mu.Lock()
		d.pulling = nil
		d.mu.Unlock()
	}()
	rc, err := d.api.ImagePull(ctx, d.opts.Image, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var m pullMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading pull progress: %w", err)
		}
		switch {
		case m.Error != nil && m.Error.Message != "":
			return errors.New(m.Error.Message)
		case m.ErrorMessage != "":
			return errors.New(m.ErrorMessage)
		}
		p := PullProgress{Image: d.opts.Image, Layer: m.ID, Status: m.Status}
		if m.Progress != nil {
			p.Current, p.Total = m.Progress.Current, m.Progress.Total
		}
		if d.opts.OnPull != nil {
			d.opts.OnPull(p)
		}
		if meter.add(p, time.Now()) {
			d.report(meter.status())
		}
	}
}

// ListContainers lists every container the Docker backend created, for
// any workspace, running or not.
func (d *Docker) ListContainers(ctx context.Context) ([]ContainerInfo, error) {
	list, err := d.api.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", LabelManaged+"=1")),
	})
	if err != nil {
		return nil, fmt.Errorf("list sandbox containers: %w", d.engineErr("list containers", err))
	}
	out := make([]ContainerInfo, 0, len(list))
	for _, c := range list {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, ContainerInfo{
			ID:        c.ID,
			Name:      name,
			Workspace: c.Labels[LabelWorkspace],
			Image:     c.Image,
			State:     string(c.State),
			Created:   time.Unix(c.Created, 0),
		})
	}
	slices.SortFunc(out, func(a, b ContainerInfo) int { return strings.Compare(a.Workspace, b.Workspace) })
	return out, nil
}

// RemoveContainers removes, killing what runs in them, the sandbox
// containers of workspace ("" means this backend's workspace), or all of
// them when all is true. It returns those it removed.
func (d *Docker) RemoveContainers(ctx context.Context, workspace string, all bool) ([]ContainerInfo, error) {
	if workspace == "" {
		workspace = d.opts.Workspace
	} else if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	list, err := d.ListContainers(ctx)
	if err != nil {
		return nil, err
	}
	var removed []ContainerInfo
	var errs []error
	for _, c := range list {
		if !all && c.Workspace != workspace {
			continue
		}
		if err := d.api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", c.Name, d.engineErr("remove container", err)))
			continue
		}
		removed = append(removed, c)
	}
	return removed, errors.Join(errs...)
}

// shellBoot starts the shell: it creates HOME, reads the provisioning's
// profile (the venv's variables, which bash inherits), announces the shell's pid
// (the exec's pid as the container sees it, which bash keeps through
// exec), then becomes an interactive bash without start-up files.
const shellBoot = `mkdir -p "$HOME" 2>/dev/null; [ -r /etc/zero/profile ] && . /etc/zero/profile; ` +
	`printf '` + pidMarker + `%s\n' "$$"; ` +
	`exec bash --noprofile --norc --noediting -i`

const pidMarker = "zero-shell-pid:"

// homeFor is HOME for a user: root's own, else a writable folder the boot
// script creates.
func homeFor(user string) string {
	if user == "root" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root:") {
		return "/root"
	}
	return dockerHome
}

func (d *Docker) startTerminal(ctx context.Context, id, user string) (*dockerTerm, error) {
	// The tag comes last: DockerOptions.Env cannot override it.
	env := slices.Concat([]string{"HOME=" + homeFor(user)}, shellEnv, []string{"PWD=" + d.opts.Workspace}, d.opts.Env, d.tag())
	ex, err := d.api.ContainerExecCreate(ctx, id, container.ExecOptions{
		User:         user,
		Tty:          true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Env:          env,
		WorkingDir:   d.opts.Workspace,
		Cmd:          []string{"/bin/sh", "-c", shellBoot},
	})
	if err != nil {
		return nil, d.engineErr("create shell exec", err)
	}
	resp, err := d.api.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{Tty: true})
	if err != nil {
		return nil, d.engineErr("start shell exec", err)
	}
	t := &dockerTerm{d: d, user: user, containerID: id, execID: ex.ID, resp: resp}
	if err := d.api.ContainerExecResize(ctx, ex.ID, container.ResizeOptions{Height: termRows, Width: termCols}); err != nil {
		d.log.Debug("resize shell terminal", "err", err)
	}
	if err := t.readPid(ctx); err != nil {
		resp.Close()
		return nil, fmt.Errorf("%w: shell did not start: %v", ErrUnavailable, err)
	}
	return t, nil
}

// dockerTerm is the [terminal] of a bash in a PTY exec.
type dockerTerm struct {
	d           *Docker
	user        string // the shell's user, for its helper execs too
	containerID string
	execID      string
	resp        types.HijackedResponse
	pid         int         // bash, as the container sees it; also its session and group
	noSweep     atomic.Bool // Docker.Close kills everything at once: close skips the sweep

	closeOnce sync.Once
	closeMu   sync.Mutex // guards closing
	closing   bool
}

// readPid reads the pid announcement that precedes everything else; what
// follows stays buffered in resp.Reader for the Shell.
func (t *dockerTerm) readPid(ctx context.Context) error {
	deadline := time.Now().Add(startupTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = t.resp.Conn.SetReadDeadline(deadline)
	defer t.resp.Conn.SetReadDeadline(time.Time{})
	for range 20 {
		line, err := t.resp.Reader.ReadString('\n')
		if i := strings.Index(line, pidMarker); i >= 0 {
			pid, perr := strconv.Atoi(strings.TrimSpace(line[i+len(pidMarker):]))
			if perr != nil || pid <= 0 {
				return fmt.Errorf("bad pid announcement %q", line)
			}
			t.pid = pid
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the shell's pid: %w (output: %q)", err, line)
		}
	}
	return errors.New("the shell did not announce its pid")
}

func (t *dockerTerm) isClosing() bool {
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	return t.closing
}

func (t *dockerTerm) Read(p []byte) (int, error) {
	n, err := t.resp.Reader.Read(p)
	if err == nil || t.isClosing() {
		return n, err
	}
	return n, t.ended(err)
}

// ended explains why the shell's stream ended: the container went away,
// or the shell exited. A killed container may still be reported running
// for a moment after its processes died, so a shell that died of a signal
// is looked at again for up to endedSettle.
func (t *dockerTerm) ended(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	deadline := time.Now().Add(endedSettle)
	for {
		info, ierr := t.d.api.ContainerInspect(ctx, t.containerID)
		switch {
		case errdefs.IsNotFound(ierr):
			return fmt.Errorf("the sandbox container %s was removed", t.d.name)
		case ierr == nil && info.State != nil && !info.State.Running:
			return fmt.Errorf("the sandbox container %s stopped (%s, exit code %d)", t.d.name, info.State.Status, info.State.ExitCode)
		}
		ex, xerr := t.d.api.ContainerExecInspect(ctx, t.execID)
		switch {
		case xerr == nil && !ex.Running && ex.ExitCode < 128:
			return fmt.Errorf("shell ended: exit status %d", ex.ExitCode)
		case time.Now().After(deadline):
			if xerr == nil && !ex.Running {
				return fmt.Errorf("shell ended: exit status %d", ex.ExitCode)
			}
			return fmt.Errorf("shell stream ended: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endedSettle bounds how long [dockerTerm.ended] waits for the engine to
// notice a dead container.
const endedSettle = time.Second

func (t *dockerTerm) Write(p []byte) (int, error) { return t.resp.Conn.Write(p) }

func (t *dockerTerm) foreground() (int, bool, error) {
	out, code, err := t.helper("cat /proc/" + strconv.Itoa(t.pid) + "/stat")
	if err != nil {
		return 0, false, err
	}
	if code != 0 {
		return 0, false, errors.New("shell ended")
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid ...
	i := strings.LastIndexByte(out, ')')
	if i < 0 {
		return 0, false, fmt.Errorf("unexpected stat line %q", out)
	}
	f := strings.Fields(out[i+1:])
	if len(f) < 6 {
		return 0, false, fmt.Errorf("unexpected stat line %q", out)
	}
	pgrp, err := strconv.Atoi(f[5])
	if err != nil || pgrp <= 0 {
		return 0, false, fmt.Errorf("no foreground process group (%s)", f[5])
	}
	return pgrp, pgrp == t.pid, nil
}

func (t *dockerTerm) kill(pgrp int, sig syscall.Signal) error {
	if pgrp == t.pid && sig != syscall.SIGINT {
		return errShellGroup
	}
	_, code, err := t.helper(fmt.Sprintf("kill -n %d -- -%d", int(sig), pgrp))
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("kill -%d -%d: exit status %d", int(sig), pgrp, code)
	}
	return nil
}

// resetModes does nothing: restoring the modes would cost an exec per
// command. The init script turned echo off; a program that turns it back
// on and exits without restoring it makes later commands echo.
func (t *dockerTerm) resetModes() error { return nil }

// sweepScript SIGKILLs every process of the session given as $1 (the
// shell's), three times for processes forked meanwhile, with bash alone, so
// that it works in images without procps.
const sweepScript = `for _ in 1 2 3; do for f in /proc/[0-9]*/stat; do ` +
	`read -r l < "$f" 2>/dev/null || continue; set -- $l; p=$1; l=${l##*) }; set -- $l; ` +
	`[ "$4" = "$0" ] && [ "$1" != Z ] && kill -9 "$p" 2>/dev/null; done; done; true`

func (t *dockerTerm) close() error {
	t.closeOnce.Do(func() {
		t.closeMu.Lock()
		t.closing = true
		t.closeMu.Unlock()
		if !t.noSweep.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
			defer cancel()
			if _, _, err := t.run(ctx, []string{"bash", "-c", sweepScript, strconv.Itoa(t.pid)}); err != nil {
				t.d.log.Debug("sweeping the shell's processes", "err", err)
			}
		}
		t.resp.Close()
	})
	return nil
}

// helper runs script with bash in the container as the shell's user and
// returns its stdout and exit status.
func (t *dockerTerm) helper(script string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	return t.run(ctx, []string{"bash", "-c", script})
}

// run executes argv in the shell's container as the shell's user, tagged
// as this backend's.
func (t *dockerTerm) run(ctx context.Context, argv []string) (string, int, error) {
	return t.d.exec(ctx, t.containerID, t.user, t.d.tag(), argv)
}

// tag is the environment that marks an exec, and what it starts, as this
// backend instance's.
func (d *Docker) tag() []string { return []string{"ZERO_INSTANCE=" + d.instance} }

// exec runs argv in the target container (a name or ID) as user without
// a terminal, with env added to the container's environment, and collects
// its stdout; stderr is discarded.
func (d *Docker) exec(ctx context.Context, target, user string, env, argv []string) (string, int, error) {
	return d.execUntil(ctx, target, user, env, argv, "")
}

// errSeen stops reading an exec's output at the text execUntil waits for.
var errSeen = errors.New("seen")

// untilWriter collects output and fails with errSeen once it holds until.
type untilWriter struct {
	strings.Builder
	until string
}

func (w *untilWriter) Write(p []byte) (int, error) {
	n, _ := w.Builder.Write(p)
	if w.until != "" && strings.Contains(w.String(), w.until) {
		return n, errSeen
	}
	return n, nil
}

// execUntil is exec that, when until is not empty, returns as soon as
// stdout holds until, with exit status 0, instead of at the end of the
// exec; when the output ends without it, that is an error.
func (d *Docker) execUntil(ctx context.Context, target, user string, env, argv []string, until string) (string, int, error) {
	ex, err := d.api.ContainerExecCreate(ctx, target, container.ExecOptions{
		User:         user,
		Env:          env,
		AttachStdout: true,
		AttachStderr: true,
		Cmd:          argv,
	})
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	resp, err := d.api.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	defer resp.Close()
	stdout := untilWriter{until: until}
	switch _, err := stdcopy.StdCopy(&stdout, io.Discard, resp.Reader); {
	case errors.Is(err, errSeen):
		return stdout.String(), 0, nil
	case err != nil:
		return "", 0, fmt.Errorf("exec %s: reading output: %w", argv[0], err)
	case until != "":
		return "", 0, fmt.Errorf("exec %s: ended before it was done", argv[0])
	}
	info, err := d.api.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return stdout.String(), info.ExitCode, nil
}
