package mcpclient_test

import (
	"context"
	"testing"

	"github.com/zeroagent/zero/mcpclient"
)

// BenchmarkCall is the cost of one tool call on a started stdio server
// whose tool does nothing (echo): Zero's client, the JSON-RPC round trip
// over the pipes and the server's own dispatch; the overhead a call adds
// over the tool's own time.
//
//	go test -run '^$' -bench Call -benchtime 2000x ./mcpclient
func BenchmarkCall(b *testing.B) {
	srv, _ := fakeServer(b, "fake")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	ctx := context.Background()
	if _, errs := p.List(ctx); len(errs) > 0 {
		b.Fatal(errs)
	}
	args := map[string]any{"text": "x"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Call(ctx, "fake", "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}
