package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/image"
)

// PullStatus sums up an image pull so far, for people: what
// [WithPullListener] reports to the shells waiting for the image.
type PullStatus struct {
	Image string `json:"image"`
	// Layers are the layers the engine named so far; LayersDone those
	// downloaded and unpacked (or already there).
	Layers     int `json:"layers"`
	LayersDone int `json:"layers_done"`
	// Current and Total count the bytes downloaded of the layers whose
	// size the engine told (compressed sizes); Total grows as it tells more.
	Current int64 `json:"current"`
	Total   int64 `json:"total"`
	// Finished is set on the last report of a pull; Error then says why it
	// failed ("" when the image is there).
	Finished bool   `json:"finished,omitempty"`
	Error    string `json:"error,omitempty"`
}

// String says where the pull is, in one line.
func (s PullStatus) String() string {
	switch {
	case s.Finished && s.Error != "":
		return fmt.Sprintf("pulling the sandbox image %s failed: %s", s.Image, s.Error)
	case s.Finished && s.Total > 0:
		return fmt.Sprintf("pulled the sandbox image %s (%d layers, %s)", s.Image, s.Layers, megabytes(s.Total))
	case s.Finished:
		return fmt.Sprintf("pulled the sandbox image %s", s.Image)
	case s.Layers == 0:
		return fmt.Sprintf("pulling the sandbox image %s (once; the next runs reuse it)", s.Image)
	case s.Total == 0:
		return fmt.Sprintf("pulling the sandbox image %s: %d of %d layers", s.Image, s.LayersDone, s.Layers)
	}
	return fmt.Sprintf("pulling the sandbox image %s: %d of %d layers, %s of %s", s.Image, s.LayersDone, s.Layers, megabytes(s.Current), megabytes(s.Total))
}

// megabytes writes n bytes as Docker does (decimal units).
func megabytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// pullReportEvery is how often, at most, a pull's listeners hear of bytes
// coming in; a finished layer and the end are reported at once.
const pullReportEvery = time.Second

// pullMeter turns the engine's progress lines (one per layer and step,
// many a second) into a PullStatus and says when it is worth reporting.
type pullMeter struct {
	image  string
	order  []string
	layers map[string]*layerProgress
	last   time.Time // of the last report
	done   int       // LayersDone at the last report
	sized  bool      // a report had bytes to tell
}

type layerProgress struct {
	current, total int64
	done           bool
}

func newPullMeter(image string) *pullMeter {
	return &pullMeter{image: image, layers: map[string]*layerProgress{}}
}

// add takes one line of the engine and reports whether the status should
// go out now: the first bytes, a layer done, or pullReportEvery since the
// last report.
func (m *pullMeter) add(p PullProgress, now time.Time) bool {
	switch p.Status {
	case "Pulling fs layer", "Waiting", "Downloading", "Verifying Checksum", "Download complete",
		"Extracting", "Pull complete", "Already exists":
	default: // "Pulling from …" (whose ID is the tag), "Digest: …", "Status: …"
		return false
	}
	l := m.layers[p.Layer]
	if l == nil {
		l = &layerProgress{}
		m.layers[p.Layer] = l
		m.order = append(m.order, p.Layer)
	}
	switch p.Status {
	case "Downloading":
		l.current, l.total = p.Current, max(p.Total, l.total)
	case "Download complete", "Verifying Checksum":
		l.current = l.total
	case "Pull complete", "Already exists":
		l.current, l.done = l.total, true
	}
	st := m.status()
	switch {
	case st.LayersDone != m.done, !m.sized && st.Total > 0, now.Sub(m.last) >= pullReportEvery:
		m.last, m.done, m.sized = now, st.LayersDone, st.Total > 0
		return true
	}
	return false
}

func (m *pullMeter) status() PullStatus {
	st := PullStatus{Image: m.image, Layers: len(m.order)}
	for _, id := range m.order {
		l := m.layers[id]
		if l.done {
			st.LayersDone++
		}
		if l.total > 0 {
			st.Current += l.current
			st.Total += l.total
		}
	}
	return st
}

// pullWaiter is a shell being opened that wants to hear of pulls. It
// hears them one at a time and in order: the report kept for a waiter that
// comes late may reach it after a newer one was sent, and is then dropped.
type pullWaiter struct {
	fn   func(PullStatus)
	mu   sync.Mutex
	last uint64 // the number of the last report it heard
}

func (w *pullWaiter) hear(seq uint64, st PullStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if seq <= w.last {
		return
	}
	w.last = seq
	w.fn(st)
}

type pullListenerKey struct{}

// WithPullListener returns ctx carrying fn: an OpenShell with that ctx
// reports to fn, from the goroutine that pulls, the image pull it waits
// for, be it one it started or one another shell's start began: when it
// begins, as layers and bytes come in (at most about once a second, and
// when a layer is done), and when it ends. fn must not block.
func WithPullListener(ctx context.Context, fn func(PullStatus)) context.Context {
	return context.WithValue(ctx, pullListenerKey{}, fn)
}

func pullListener(ctx context.Context) func(PullStatus) {
	fn, _ := ctx.Value(pullListenerKey{}).(func(PullStatus))
	return fn
}

// PullListener is the listener ctx carries ([WithPullListener]), or nil.
func PullListener(ctx context.Context) func(PullStatus) { return pullListener(ctx) }

// PullWatcher is a backend whose shells may wait for an image pull: a
// caller that waits for a shell another goroutine opens hears of the pull
// from WatchPull until it calls stop. [Docker] is one.
type PullWatcher interface {
	WatchPull(fn func(PullStatus)) (stop func())
}

// WatchPull implements [PullWatcher]: fn hears of the pulls as a shell
// opened with [WithPullListener] does, a pull under way at once.
func (d *Docker) WatchPull(fn func(PullStatus)) (stop func()) { return d.wait(fn) }

// wait makes fn hear of the pulls until the returned func is called; a
// pull under way is reported to it at once.
func (d *Docker) wait(fn func(PullStatus)) (done func()) {
	w := &pullWaiter{fn: fn}
	d.mu.Lock()
	if d.waiters == nil {
		d.waiters = map[*pullWaiter]struct{}{}
	}
	d.waiters[w] = struct{}{}
	var now *PullStatus
	seq := d.pullSeq
	if d.pulling != nil {
		st := *d.pulling
		now = &st
	}
	d.mu.Unlock()
	if now != nil {
		w.hear(seq, *now)
	}
	return func() {
		d.mu.Lock()
		delete(d.waiters, w)
		d.mu.Unlock()
	}
}

// report tells the waiters st, and keeps it for a waiter that comes later.
func (d *Docker) report(st PullStatus) {
	d.mu.Lock()
	d.pulling = &st
	d.pullSeq++
	seq := d.pullSeq
	ws := make([]*pullWaiter, 0, len(d.waiters))
	for w := range d.waiters {
		ws = append(ws, w)
	}
	d.mu.Unlock()
	for _, w := range ws {
		w.hear(seq, st)
	}
}

// CanPull asks the engine whether the registry has the image, without
// pulling it (the engine fetches its manifest): sandbox.backend auto uses
// it to choose the local backend at once when a missing image cannot be
// had (offline, no such image) instead of failing at the first command.
// An error that is not the engine's is returned as it is; one of the
// registry is a [*PullError].
func (d *Docker) CanPull(ctx context.Context) error {
	_, err := d.api.DistributionInspect(ctx, d.opts.Image, "")
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w: asking the registry for %s: %w", ErrUnavailable, d.opts.Image, context.Cause(ctx))
	}
	return &PullError{Image: d.opts.Image, Err: err}
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
