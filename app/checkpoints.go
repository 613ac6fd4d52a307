package app

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/zeroagent/zero/checkpoint"
)

// CheckpointDir is where the workspace snapshots of the checkpoints are
// kept (package checkpoint): $ZERO_CHECKPOINTS, else beside the session
// store (its folder's checkpoints, or the store file's name with
// .checkpoints), else, with ZERO_STORE=off, a folder of this process in
// the state folder (removed when it ends: the sessions end with it). ""
// for ZERO_CHECKPOINTS=off. ephemeral says the folder is this process's.
func (e Env) CheckpointDir() (dir string, ephemeral bool) {
	switch v := e.Get("ZERO_CHECKPOINTS"); v {
	case "off":
		return "", false
	case "":
	default:
		if abs, err := filepath.Abs(v); err == nil {
			return abs, false
		}
		return v, false
	}
	path, err := e.StorePath()
	if err == nil {
		if def, derr := e.defaultStorePath(); derr == nil && def == path {
			return filepath.Join(filepath.Dir(path), "checkpoints"), false
		}
		if abs, aerr := filepath.Abs(path); aerr == nil {
			return abs + ".checkpoints", false
		}
	}
	state := e.StateDir()
	if state == "" {
		state = os.TempDir()
	}
	return filepath.Join(state, "checkpoints-"+strconv.Itoa(os.Getpid())), true
}

// openCheckpoints opens the snapshot store, or returns nil (checkpoints
// then cover the conversation only) with a warning.
func openCheckpoints(env Env, logger *slog.Logger, warn func(string)) (st *checkpoint.Store, cleanup func()) {
	dir, ephemeral := env.CheckpointDir()
	cleanup = func() {}
	if dir == "" {
		return nil, cleanup
	}
	var exclude []string
	if path, err := env.StorePath(); err == nil {
		exclude = append(exclude, filepath.Dir(path))
	}
	st, err := checkpoint.Open(dir, checkpoint.Options{Exclude: append(exclude, dir)})
	if err != nil {
		warn(fmt.Sprintf("checkpoints: %v; an undo or rewind will take back the conversation only", err))
		return nil, cleanup
	}
	logger.Debug("checkpoints", "dir", dir, "ephemeral", ephemeral)
	if ephemeral {
		cleanup = func() { _ = os.RemoveAll(dir) }
	}
	return st, cleanup
}
