package sandbox

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
)

// imageAPI fakes the image calls of the engine; any other call panics on
// the nil dockerAPI it embeds.
type imageAPI struct {
	dockerAPI
	have   map[string]bool
	pull   func(ref string) (io.ReadCloser, error) // nil: the pull fails as offline
	pulled []string
}

func (f *imageAPI) DaemonHost() string { return "unix:///fake/docker.sock" }
func (f *imageAPI) Close() error       { return nil }

func (f *imageAPI) ImageInspect(_ context.Context, ref string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	if f.have[ref] {
		return image.InspectResponse{ID: "sha256:" + ref}, nil
	}
	return image.InspectResponse{}, errdefs.NotFound(errors.New("No such image: " + ref))
}

func (f *imageAPI) ImagePull(_ context.Context, ref string, _ image.PullOptions) (io.ReadCloser, error) {
	f.pulled = append(f.pulled, ref)
	if f.pull == nil {
		return nil, errdefs.System(errors.New("Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host\n"))
	}
	return f.pull(ref)
}

func fakeDocker(t *testing.T, api dockerAPI, opts DockerOptions) *Docker {
	t.Helper()
	opts.Workspace = t.TempDir()
	d, err := newDocker(opts, api)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEnsureImage(t *testing.T) {
	t.Parallel()
	t.Run("present: no pull", func(t *testing.T) {
		t.Parallel()
		api := &imageAPI{have: map[string]bool{DefaultDockerImage: true}}
		if err := fakeDocker(t, api, DockerOptions{}).EnsureImage(t.Context()); err != nil || len(api.pulled) != 0 {
			t.Errorf("EnsureImage = %v after pulls %q; want nil and no pull", err, api.pulled)
		}
	})
	t.Run("missing, pulled", func(t *testing.T) {
		t.Parallel()
		api := &imageAPI{have: map[string]bool{}}
		api.pull = func(ref string) (io.ReadCloser, error) {
			api.have[ref] = true
			return io.NopCloser(strings.NewReader(`{"status":"Pulling from kalilinux/kali-rolling"}` + "\n")), nil
		}
		var progress []string
		d := fakeDocker(t, api, DockerOptions{OnPull: func(p PullProgress) { progress = append(progress, p.Status) }})
		if err := d.EnsureImage(t.Context()); err != nil || len(api.pulled) != 1 || len(progress) != 1 {
			t.Errorf("EnsureImage = %v; pulls %q, progress %q", err, api.pulled, progress)
		}
	})
	t.Run("missing, the engine cannot pull", func(t *testing.T) {
		t.Parallel()
		api := &imageAPI{have: map[string]bool{}}
		err := fakeDocker(t, api, DockerOptions{}).EnsureImage(t.Context())
		pe, ok := errors.AsType[*PullError](err)
		if !ok || !errors.Is(err, ErrUnavailable) || pe.Image != DefaultDockerImage {
			t.Fatalf("EnsureImage = %v, want a *PullError of %s", err, DefaultDockerImage)
		}
		want := `cannot pull image kalilinux/kali-rolling: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`
		if err.Error() != want {
			t.Errorf("error = %q\nwant    %q (one line)", err, want)
		}
	})
	t.Run("missing, pull stream reports an error", func(t *testing.T) {
		t.Parallel()
		api := &imageAPI{have: map[string]bool{}, pull: func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(`{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}` + "\n")), nil
		}}
		err := fakeDocker(t, api, DockerOptions{Image: "nosuch/image:1"}).EnsureImage(t.Context())
		if err == nil || err.Error() != "cannot pull image nosuch/image:1: manifest unknown" {
			t.Errorf("EnsureImage = %v", err)
		}
	})
	t.Run("cancelled: not a pull error", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		api := &imageAPI{have: map[string]bool{}, pull: func(string) (io.ReadCloser, error) {
			cancel()
			return nil, context.Canceled
		}}
		err := fakeDocker(t, api, DockerOptions{}).EnsureImage(ctx)
		if _, ok := errors.AsType[*PullError](err); ok || !errors.Is(err, context.Canceled) {
			t.Errorf("EnsureImage = %v, want a cancellation, not a *PullError", err)
		}
	})
}
