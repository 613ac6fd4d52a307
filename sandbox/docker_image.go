package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
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
