package main

import (
	"testing"
	"time"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/llm"
)

// The deadlines a 0 in the config stands for are the model client's: a
// workspace's "shorter" deadline is judged against the ones in force.
func TestDefaultTimeoutsAgree(t *testing.T) {
	d := config.DefaultTimeouts
	for _, tc := range []struct {
		name   string
		config time.Duration
		llm    time.Duration
	}{
		{"header", d.Header, llm.DefaultHeaderTimeout},
		{"idle", d.Idle, llm.DefaultIdleTimeout},
		{"total", d.Total, llm.DefaultTotalTimeout},
	} {
		if tc.config != tc.llm {
			t.Errorf("%s: config says %v, llm %v", tc.name, tc.config, tc.llm)
		}
	}
}
