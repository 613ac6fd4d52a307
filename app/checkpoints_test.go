package app

import (
	"path/filepath"
	"testing"
)

// The snapshots live beside the store (and are hidden from the agent with
// it), in a folder of the process without a store; ZERO_CHECKPOINTS=off
// keeps none.
func TestCheckpointDir(t *testing.T) {
	home := t.TempDir()
	base := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	for _, tc := range []struct {
		env       []string
		want      string
		ephemeral bool
	}{
		{nil, filepath.Join(home, "data", "zero", "checkpoints"), false},
		{[]string{"ZERO_STORE=" + filepath.Join(home, "my.db")}, filepath.Join(home, "my.db.checkpoints"), false},
		{[]string{"ZERO_CHECKPOINTS=off"}, "", false},
		{[]string{"ZERO_CHECKPOINTS=" + filepath.Join(home, "cps")}, filepath.Join(home, "cps"), false},
	} {
		env := Env(append(append([]string(nil), base...), tc.env...))
		got, eph := env.CheckpointDir()
		if got != tc.want || eph != tc.ephemeral {
			t.Errorf("%v: CheckpointDir = %q, %v; want %q, %v", tc.env, got, eph, tc.want, tc.ephemeral)
		}
		if got != "" && !hiddenHas(zeroState(env), got) {
			t.Errorf("%v: %s is not hidden from the agent: %v", tc.env, got, zeroState(env))
		}
	}
	env := Env(append(append([]string(nil), base...), "ZERO_STORE=off"))
	if got, eph := env.CheckpointDir(); !eph || filepath.Dir(got) != filepath.Join(home, "state", "zero") {
		t.Errorf("without a store: %q, %v", got, eph)
	}
}

func hiddenHas(list []string, p string) bool {
	for _, h := range list {
		if rel, err := filepath.Rel(h, p); err == nil && (rel == "." || !filepath.IsAbs(rel) && rel[:min(2, len(rel))] != "..") {
			return true
		}
	}
	return false
}
