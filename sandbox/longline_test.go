package sandbox

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A line without a newline is capped in memory like the rest of the
// output: streaming 128 MB of one line must not hold it (it took 496 MB of
// heap before the cleaner forgot the emitted middle of long lines). Not
// parallel, so that the heap it measures is its own.
func TestLocalLongLineBoundedMemory(t *testing.T) {
	const size = 128 << 20
	s := openShell(t, LocalOptions{})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var (
		peak uint64
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	begin := time.Now()
	if err := s.Start(fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a`, size)); err != nil {
		t.Fatal(err)
	}
	streamed := 0
	// No time limit: the command's end decides (a loaded machine under the
	// race detector takes minutes; go test's own timeout guards a hang).
	r, err := s.Wait(t.Context(), Timeouts{}, func(p string) { streamed += len(p) })
	close(stop)
	wg.Wait()
	t.Logf("%d MB in %v, peak heap growth %d MB", size>>20, time.Since(begin).Round(time.Millisecond), (int64(peak)-int64(before.HeapInuse))>>20)
	if err != nil || !r.Done || r.ExitCode != 0 || streamed == 0 {
		t.Fatalf("Wait = %v, %v (%d bytes streamed)", r.Reason, err, streamed)
	}
	// Nothing was lost: the kept head and tail and the omitted count add up.
	m := regexp.MustCompile(`\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n`).FindStringSubmatchIndex(r.Output)
	if m == nil {
		t.Fatalf("no omission marker in the %d bytes of output", len(r.Output))
	}
	omitted, _ := strconv.Atoi(r.Output[m[2]:m[3]])
	head, tail := r.Output[:m[0]], r.Output[m[1]:]
	if strings.Trim(head+tail, "a") != "" || len(head)+omitted+len(tail) != size {
		t.Errorf("head %d + omitted %d + tail %d bytes, want %d a's", len(head), omitted, len(tail), size)
	}
	if growth := int64(peak) - int64(before.HeapInuse); growth > 64<<20 {
		t.Errorf("the heap grew by %d MB while one %d MB line streamed; want it bounded", growth>>20, size>>20)
	}
}
