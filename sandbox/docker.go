package sandbox

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
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
