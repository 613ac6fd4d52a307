package main

import "testing"

func TestVersionLine(t *testing.T) {
	for _, c := range []struct {
		b    build
		want string
	}{
		{build{version: "dev"}, "zero dev"},
		{build{version: "v0.11.0", commit: "0123456789abcdef0123", date: "2026-12-01T17:00:00Z"}, "zero v0.11.0 (commit 0123456789ab, 2026-12-01T17:00:00Z)"},
		{build{version: "v0.11.0", commit: "0123456789abcdef", modified: true}, "zero v0.11.0 (commit 0123456789ab+changes)"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.b, got, c.want)
		}
	}
}
