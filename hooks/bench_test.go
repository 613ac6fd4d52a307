package hooks

import (
	"context"
	"encoding/json"
	"testing"
)

func BenchmarkCallEmptyPoint(b *testing.B) {
	reg := NewRegistry()
	reg.Register(SystemPrompt, "_10_main", mark("_10_main"))
	s, err := Resolve(reg, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p := &testPayload{}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Call(ctx, ResponseStreamChunk, p); err != nil {
			b.Fatal(err)
		}
	}
}

type counter struct{ n int }

func (*counter) ScriptInput() any { return nil }

func (*counter) ApplyScript(json.RawMessage) error { return nil }

func BenchmarkCallBuiltins(b *testing.B) {
	reg := NewRegistry()
	inc := func(_ context.Context, p Payload) error { p.(*counter).n++; return nil }
	for _, name := range []string{"_10_a", "_20_b", "_30_c"} {
		reg.Register(ResponseStreamChunk, name, inc)
	}
	s, err := Resolve(reg, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p := &counter{}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Call(ctx, ResponseStreamChunk, p); err != nil {
			b.Fatal(err)
		}
	}
	if p.n != 3*b.N {
		b.Fatalf("ran %d built-ins, want %d", p.n, 3*b.N)
	}
}
