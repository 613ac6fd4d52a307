package trust_test

import (
	"fmt"
	"testing"

	"github.com/zeroagent/zero/trust"
)

// BenchmarkScanAndCheck is what every new session and subordinate pays to
// decide whether the workspace's code may run: a scan of 20 extension
// scripts of 2 KB each and the check against the store.
func BenchmarkScanAndCheck(b *testing.B) {
	ws := b.TempDir()
	for i := range 20 {
		write(b, ws, fmt.Sprintf(".zero/extensions/point%d/_%02d_x", i%5, i), string(make([]byte, 2048)), 0o755)
	}
	store := trust.NewStore(b.TempDir())
	m, err := trust.Scan(ws)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Grant(m); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m, err := trust.Scan(ws)
		if err != nil {
			b.Fatal(err)
		}
		if st, _ := store.Check(m); !st.Runs() {
			b.Fatal("not trusted")
		}
	}
}
