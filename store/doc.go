// Package store is Zero's embedded database: one SQLite file (by default
// $XDG_DATA_HOME/zero/zero.db, see [DefaultPath]) that keeps durable
// sessions, their event logs and their agents' histories.
//
// The store has its own plain types and imports no other package of this
// module; the engine passes its values in as JSON where the store need not
// understand them ([Event.Data], [Session.Settings]).
//
// # Writes
//
// Writes are of two kinds. Queued writes ([Store.AppendEvent],
// [Store.UpdateSession], [Store.AddMessage], [Store.AddSummary],
// [Store.SetTokens]) return at once: they go into one ordered queue that a
// single writer goroutine drains, committing everything queued while the
// previous batch was committing in one transaction. So the caller never waits
// for the disk, writes are committed in exactly the order they were called,
// and a process killed with SIGKILL loses only what it queued in the last few
// milliseconds. A queued write that fails is logged and reported by the next
// [Store.Flush]; the writes around it still commit.
//
// Synchronous writes ([Store.CreateSession], [Store.DeleteSession],
// [Store.Claim], [Store.Release]) go through the same queue and wait for their
// batch to commit, so they are ordered with the queued writes: a write queued
// after CreateSession returned always finds its session.
//
// Reads ([Store.Session], [Store.Sessions], [Store.Events], [Store.History],
// ...) see committed data only; call [Store.Flush] first to read one's own
// queued writes.
//
// # Several processes
//
// Several Zero processes of one user (an editor window and a terminal) may
// open the same file at once. The database runs in WAL mode, so readers never
// wait for the writer, and writers of different processes take turns (each
// waits up to a busy timeout for the other's transaction, and a batch that
// still finds the database locked is retried). A session is meant to be
// driven by one process at a time: [Store.Claim] records the process that
// drives it and refuses a second live one.
//
// # Damage
//
// A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) is refused by [Open] with
// a [*DamagedError], and left as it is: Open reads the header, the schema,
// the small tables whole and both ends of the others (about a millisecond,
// whatever the file's size). A read that hits damage elsewhere fails with
// an error [IsDamaged] knows; a write that does is not retried. [Check]
// reads every page; [Recover] renames a damaged file aside, with its -wal
// and -shm, and starts a new one holding every row that still reads.
//
// # Schema
//
// The schema is versioned with PRAGMA user_version and upgraded by [Open],
// one migration per transaction. A database written by a newer version of
// Zero is refused with [ErrNewerSchema] and left untouched.
package store
