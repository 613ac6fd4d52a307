package app

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zeroagent/zero/store"
)

// storeDamage says what happened to a damaged session store (err is its
// error), and storeFix what to do: together, damagedStore, the message
// of every command that finds the store damaged.
func storeDamage(path string, err error) string {
	if de, ok := errors.AsType[*store.DamagedError](err); ok {
		path = de.Path
	}
	return fmt.Sprintf("the session store %s is damaged (%s): its sessions and memories cannot be read", path, store.DamageReason(err))
}

const storeFix = "zero store recover moves it aside, keeping it, and starts a new store with what still reads"

func DamagedStore(path string, err error) string {
	return storeDamage(path, err) + "; " + storeFix
}

// recoverFix is zero doctor's fix for a damaged store at path.
func recoverFix(path string) string {
	return "zero store recover (it renames the damaged file to " + filepath.Base(path) + ".damaged-<UTC time>, keeping it, " +
		"starts a new store, and copies into it the sessions and memories that still read)"
}
