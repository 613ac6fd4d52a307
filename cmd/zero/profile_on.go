//go:build zeroprof

package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// A binary built with -tags zeroprof writes profiles of its whole life for
// the performance work (docs/performance.md): ZERO_CPUPROFILE, ZERO_MEMPROFILE
// (allocations) and ZERO_TRACE name the files. The release binary has none
// of this.
func init() {
	var stops []func()
	if p := os.Getenv("ZERO_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("ZERO_TRACE"); p != "" {
		f, err := os.Create(p)
		if err == nil && trace.Start(f) == nil {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
	}
	if p := os.Getenv("ZERO_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 4096
		stops = append(stops, func() {
			f, err := os.Create(p)
			if err != nil {
				return
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(os.Stderr, "zero: memory profile:", err)
			}
		})
	}
	atExit = stops
}
