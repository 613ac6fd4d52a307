//go:build unix

package hooks

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkCallScript measures one trivial script run (fork, exec of /bin/sh, JSON both ways), the
// price a point pays per call once a user installs a script there.
func BenchmarkCallScript(b *testing.B) {
	layer := filepath.Join(b.TempDir(), "ext")
	path := filepath.Join(layer, ResponseStreamChunk, "_10_echo.sh")
	if err := mkScript(path, "#!/bin/sh\ncat >/dev/null\necho '{\"seen\":[\"x\"]}'\n"); err != nil {
		b.Fatal(err)
	}
	var ws warnings
	s, err := Resolve(nil, []Layer{{Name: "user", Dir: layer}}, Options{OnWarning: ws.add})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := &testPayload{}
		if err := s.Call(ctx, ResponseStreamChunk, p); err != nil || len(p.Seen) != 1 {
			b.Fatalf("Call = %v, seen %v, warnings %v", err, p.Seen, ws.get())
		}
	}
}
