package store

import "errors"

var (
	// ErrNotFound is wrapped by the errors of lookups and updates of a
	// session (or message) that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists is wrapped by [Store.CreateSession] when the id is taken.
	ErrExists = errors.New("session exists")
	// ErrBusy is wrapped by [Store.Claim] when another live process holds
	// the session.
	ErrBusy = errors.New("session in use by another process")
	// ErrClosed is returned by calls on a closed [Store].
	ErrClosed = errors.New("store closed")
	// ErrNewerSchema is wrapped by [Open] when the database was written by
	// a newer version of Zero than this one.
	ErrNewerSchema = errors.New("database schema is newer than this version of zero")
)
