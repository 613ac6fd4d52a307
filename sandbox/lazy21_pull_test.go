package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/errdefs"
)

// pullAPI is an engine without the workspace's container or its image,
// whose pulls are what the test streams.
type pullAPI struct {
	imageAPI
}

func (*pullAPI) ContainerInspect(_ context.Context, id string) (container.InspectResponse, error) {
	return container.InspectResponse{}, errdefs.NotFound(errors.New("No such container: " + id))
}

// statuses records what a pull listener heard.
type statuses struct {
	mu    sync.Mutex
	list  []PullStatus
	heard chan struct{} // closed at the first report
}

func newStatuses() *statuses { return &statuses{heard: make(chan struct{})} }

func (s *statuses) add(st PullStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		close(s.heard)
	}
	s.list = append(s.list, st)
}

func (s *statuses) get() []PullStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PullStatus(nil), s.list...)
}

// The shells waiting for an image hear how its pull goes, summed up and
// throttled, not one report per line of the engine; one that comes while
// another shell's start pulls hears of that pull too, and waits for that
// same pull; a pull that fails ends with a report saying why, to both.
func TestPullProgressReachesTheWaitingShells(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		api := &pullAPI{imageAPI{have: map[string]bool{}}}
		lines := 0
		api.pull = func(string) (io.ReadCloser, error) {
			r, w := io.Pipe()
			go func() {
				send := func(s string) { lines++; fmt.Fprintln(w, s) }
				send(`{"status":"Pulling from kalilinux/kali-rolling","id":"latest"}`)
				send(`{"status":"Pulling fs layer","progressDetail":{},"id":"a"}`)
				send(`{"status":"Pulling fs layer","progressDetail":{},"id":"b"}`)
				for i := 1; i <= 100; i++ { // many lines in the same instant
					send(fmt.Sprintf(`{"status":"Downloading","progressDetail":{"current":%d,"total":50000000},"id":"a"}`, i*100000))
				}
				send(`{"status":"Downloading","progressDetail":{"current":1000,"total":2000000},"id":"b"}`)
				time.Sleep(2 * pullReportEvery) // the bubble's clock: a second and more later
				send(`{"status":"Downloading","progressDetail":{"current":20000000,"total":50000000},"id":"a"}`)
				<-release
				send(`{"status":"Pull complete","progressDetail":{},"id":"b"}`)
				send(`{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}`)
				w.Close()
			}()
			return r, nil
		}
		d := fakeDocker(t, api, DockerOptions{})
		first, second := newStatuses(), newStatuses()
		errs := make(chan error, 2)
		go func() {
			_, err := d.OpenShell(WithPullListener(t.Context(), first.add))
			errs <- err
		}()
		time.Sleep(3 * pullReportEvery) // the bubble's clock: past the engine's pause
		synctest.Wait()                 // the pull waits for release
		during := first.get()
		if len(during) == 0 {
			t.Fatal("no progress while the image is pulled")
		}
		// Once at the start, once at the first bytes, once after the pause.
		if len(during) > 4 {
			t.Errorf("%d reports for %d lines of the engine, want them throttled:\n%v", len(during), lines, during)
		}
		last := during[len(during)-1]
		want := "pulling the sandbox image kalilinux/kali-rolling: 0 of 2 layers, 20.0 MB of 52.0 MB"
		if last.Layers != 2 || last.Current != 20001000 || last.Total != 52000000 || last.String() != want {
			t.Errorf("the last report during the pull = %+v\n%q\nwant %q", last, last.String(), want)
		}
		go func() {
			_, err := d.OpenShell(WithPullListener(t.Context(), second.add))
			errs <- err
		}()
		<-second.heard // told at once, then it waits for the same start
		if got := second.get(); len(got) != 1 || got[0] != last {
			t.Errorf("a shell that comes during the pull heard %v, want the pull as it is (%v)", got, last)
		}
		close(release)
		for range 2 {
			if err := <-errs; !errors.As(err, new(*PullError)) {
				t.Errorf("OpenShell = %v, want a *PullError", err)
			}
		}
		end := first.get()
		final := end[len(end)-1]
		if !final.Finished || final.Error != "unexpected EOF" || final.LayersDone != 1 ||
			final.String() != "pulling the sandbox image kalilinux/kali-rolling failed: unexpected EOF" {
			t.Errorf("the last report = %+v (%q)", final, final.String())
		}
		if got := second.get(); got[len(got)-1] != final {
			t.Errorf("the second shell heard %v last, want the same end (%v)", got[len(got)-1], final)
		}
		if len(api.pulled) != 1 {
			t.Errorf("%d pulls, want the one both shells waited for", len(api.pulled))
		}
	})
}

// ctxPullAPI is a pullAPI whose pull waits for release and keeps the ctx
// it was given, to see whether the pull was cancelled.
type ctxPullAPI struct {
	pullAPI
	release chan struct{}
	mu      sync.Mutex
	ctxs    []context.Context
}

func (f *ctxPullAPI) ImagePull(ctx context.Context, ref string, _ image.PullOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	f.ctxs = append(f.ctxs, ctx)
	f.mu.Unlock()
	r, w := io.Pipe()
	go func() {
		fmt.Fprintln(w, `{"status":"Pulling fs layer","progressDetail":{},"id":"a"}`)
		select {
		case <-f.release:
			fmt.Fprintln(w, `{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}`)
		case <-ctx.Done():
			w.CloseWithError(ctx.Err())
			return
		}
		w.Close()
	}()
	return r, nil
}

func (f *ctxPullAPI) pullCtxs() []context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]context.Context(nil), f.ctxs...)
}

// Shells being opened wait for one start of the container together: one
// whose caller stops waiting (its run was cancelled) leaves at once with
// that cause while the pull goes on for the others; the last one to leave
// ends the pull and gets its error. Close ends a start too.
func TestPullEndsWithItsLastWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &ctxPullAPI{pullAPI: pullAPI{imageAPI{have: map[string]bool{}}}, release: make(chan struct{})}
		d := fakeDocker(t, api, DockerOptions{NoProvision: true})
		gone := errors.New("the run was cancelled")
		ctx, cancel := context.WithCancelCause(t.Context())
		first, second := newStatuses(), newStatuses()
		errs := make(chan error, 2)
		go func() {
			_, err := d.OpenShell(WithPullListener(ctx, first.add))
			errs <- err
		}()
		<-first.heard
		go func() {
			_, err := d.OpenShell(WithPullListener(t.Context(), second.add))
			errs <- err
		}()
		<-second.heard
		synctest.Wait() // both wait for the pull
		cancel(gone)
		if err := <-errs; !errors.Is(err, gone) || !strings.Contains(err.Error(), "still starting") {
			t.Errorf("OpenShell after its ctx ended = %v, want the cause, saying the sandbox is still starting", err)
		}
		synctest.Wait()
		if ctxs := api.pullCtxs(); len(ctxs) != 1 || ctxs[0].Err() != nil {
			t.Fatalf("the pull was cancelled while a shell still waited for it (%d pulls)", len(ctxs))
		}
		close(api.release)
		if err := <-errs; !errors.As(err, new(*PullError)) {
			t.Errorf("the shell that stayed = %v, want the pull's own failure", err)
		}

		// The only waiter leaves: the pull ends, and says why.
		api2 := &ctxPullAPI{pullAPI: pullAPI{imageAPI{have: map[string]bool{}}}, release: make(chan struct{})}
		d2 := fakeDocker(t, api2, DockerOptions{NoProvision: true})
		ctx2, cancel2 := context.WithCancelCause(t.Context())
		alone := newStatuses()
		go func() {
			_, err := d2.OpenShell(WithPullListener(ctx2, alone.add))
			errs <- err
		}()
		<-alone.heard
		cancel2(gone)
		if err := <-errs; !errors.Is(err, gone) || !strings.Contains(err.Error(), "pull kalilinux/kali-rolling") {
			t.Errorf("OpenShell of the last waiter = %v, want the pull ended for its cause", err)
		}
		if ctxs := api2.pullCtxs(); len(ctxs) != 1 || ctxs[0].Err() == nil {
			t.Error("the pull went on with nobody waiting")
		}

		// Close ends a start under way.
		api3 := &ctxPullAPI{pullAPI: pullAPI{imageAPI{have: map[string]bool{}}}, release: make(chan struct{})}
		d3 := fakeDocker(t, api3, DockerOptions{NoProvision: true})
		started := newStatuses()
		go func() {
			_, err := d3.OpenShell(WithPullListener(t.Context(), started.add))
			errs <- err
		}()
		<-started.heard
		d3.Close()
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("OpenShell after Close = %v, want ErrClosed", err)
		}
		if ctxs := api3.pullCtxs(); len(ctxs) != 1 || ctxs[0].Err() == nil {
			t.Error("Close left the pull going")
		}
	})
}
