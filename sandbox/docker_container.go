package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/errdefs"
)

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
