package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/store"
)

// ResolveStored returns the id of the stored session that arg names: its
// whole id or a prefix only its id starts with; an ambiguous prefix is an
// error that lists the sessions it could mean.
func ResolveStored(st *store.Store, arg string) (string, error) {
	list, err := st.Sessions(store.ListOptions{})
	if err != nil {
		return "", err
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	id, err := server.ResolveID(ids, arg)
	if errors.Is(err, server.ErrNotFound) {
		return "", fmt.Errorf("%w (zero sessions --all lists them)", err)
	}
	return id, err
}

// RemoveSession deletes a stored session that no live process holds, and
// its spilled output.
func RemoveSession(st *store.Store, id string) error {
	rec, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no session %q (zero sessions --all lists them)", id)
	} else if err != nil {
		return err
	}
	if err := st.Claim(id, os.Getpid()); err != nil {
		if errors.Is(err, store.ErrBusy) {
			return fmt.Errorf("session %s is open in another zero process; close it there first", id)
		}
		return err
	}
	if err := st.DeleteSession(id); err != nil {
		return err
	}
	if rec.Workspace != "" {
		RemoveSpill(rec.Workspace, id)
	}
	return nil
}
