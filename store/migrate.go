package store

import (
	"database/sql"
	"fmt"
	"time"
)

// migrations[i] brings the schema from version i to version i+1 (PRAGMA
// user_version). Append new steps; never edit a released one.
var migrations = [][]string{
	// 1: sessions, their event logs and the agents' raw messages.
	{
		`CREATE TABLE sessions (
			id        TEXT PRIMARY KEY,
			workspace TEXT NOT NULL,
			roots     TEXT NOT NULL DEFAULT '',   -- each root preceded by a NUL byte
			profile   TEXT NOT NULL DEFAULT '',
			model     TEXT NOT NULL DEFAULT '',
			title     TEXT NOT NULL DEFAULT '',
			created   INTEGER NOT NULL,           -- Unix nanoseconds
			updated   INTEGER NOT NULL,           -- Unix nanoseconds
			runs      INTEGER NOT NULL DEFAULT 0,
			last_seq  INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX sessions_workspace_updated ON sessions (workspace, updated)`,
		`CREATE INDEX sessions_updated ON sessions (updated)`,
		`CREATE TABLE events (
			session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			seq     INTEGER NOT NULL,
			type    TEXT NOT NULL,
			agent   INTEGER NOT NULL,
			data    BLOB NOT NULL,
			PRIMARY KEY (session, seq)
		)`,
		`CREATE TABLE messages (
			session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			agent   INTEGER NOT NULL,
			n       INTEGER NOT NULL,
			topic   INTEGER NOT NULL,
			ai      INTEGER NOT NULL,
			content TEXT NOT NULL,
			PRIMARY KEY (session, agent, n)
		)`,
	},
	// 2: history compression (summaries and token counts), per-session
	// settings, and the claim of a session by a process.
	{
		`ALTER TABLE messages ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE sessions ADD COLUMN settings BLOB`,                        // JSON, NULL when none
		`ALTER TABLE sessions ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0`, // 0: unclaimed
		`CREATE TABLE summaries (
			session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			agent   INTEGER NOT NULL,
			id      INTEGER NOT NULL,
			kind    TEXT NOT NULL,
			from_n  INTEGER NOT NULL, -- Summary.From
			to_n    INTEGER NOT NULL, -- Summary.To
			content TEXT NOT NULL,
			tokens  INTEGER NOT NULL DEFAULT 0,
			PRIMARY KEY (session, agent, id)
		)`,
	},
	// 3: memory (Agent Zero's memory areas, searched by keywords with FTS5
	// and, when an embedding model is configured, by vectors), the
	// knowledge files imported into it, and the behaviour rules.
	{
		`CREATE TABLE memories (
			id      INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: ids are given to the model
			uid     TEXT NOT NULL UNIQUE,             -- the id the model and the user see
			scope   TEXT NOT NULL,                    -- '' the user's memory, else a workspace
			area    TEXT NOT NULL,
			text    TEXT NOT NULL,
			meta    BLOB NOT NULL,                    -- JSON object
			created INTEGER NOT NULL,                 -- Unix nanoseconds
			source  TEXT NOT NULL DEFAULT ''          -- the knowledge file of a chunk
		)`,
		`CREATE INDEX memories_scope_area ON memories (scope, area)`,
		`CREATE INDEX memories_scope_source ON memories (scope, source)`,
		`CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='id',
			tokenize='porter unicode61 remove_diacritics 2')`,
		`CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
			INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
		END`,
		`CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
			INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
		END`,
		`CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
			INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
			INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
		END`,
		`CREATE TABLE memory_vectors (
			id    INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
			model TEXT NOT NULL,
			vec   BLOB NOT NULL, -- float32 little endian, unit length
			PRIMARY KEY (id, model)
		)`,
		`CREATE INDEX memory_vectors_model ON memory_vectors (model)`,
		// version counts the writes to a scope's memory, so that a process
		// keeping its vectors in memory sees another's writes.
		`CREATE TABLE memory_scopes (
			scope   TEXT PRIMARY KEY,
			version INTEGER NOT NULL DEFAULT 0
		)`,
		// The agent's behaviour rules (behaviour_adjustment), by scope.
		`CREATE TABLE behaviour (
			scope   TEXT PRIMARY KEY,
			rules   TEXT NOT NULL,
			updated INTEGER NOT NULL -- Unix nanoseconds
		)`,
		`CREATE TABLE knowledge_files (
			scope    TEXT NOT NULL,
			path     TEXT NOT NULL,
			checksum TEXT NOT NULL,
			chunks   INTEGER NOT NULL,
			imported INTEGER NOT NULL, -- Unix nanoseconds
			PRIMARY KEY (scope, path)
		)`,
	},
	{
		// A model's native tool calls (JSON, as the engine writes them) and
		// the call a result answers.
		`ALTER TABLE messages ADD COLUMN calls TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE messages ADD COLUMN call_id TEXT NOT NULL DEFAULT ''`,
	},
	{
		// 6: the messages' images, each kept once by its content's hash
		// (messages.images lists the references as JSON; images no
		// message names any more go with the sessions or histories that
		// named them, see collectImages).
		`CREATE TABLE images (
			hash TEXT PRIMARY KEY, -- hex SHA-256 of data
			mime TEXT NOT NULL,
			data BLOB NOT NULL
		)`,
		`ALTER TABLE messages ADD COLUMN images TEXT NOT NULL DEFAULT ''`,
	},
	{
		// 7: the points a session can go back to (undo, rewind, fork):
		// the engine's data as JSON (the history's mark, the workspace's
		// snapshots), numbered per session.
		`CREATE TABLE checkpoints (
			session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			id      INTEGER NOT NULL,
			run     INTEGER NOT NULL,
			created INTEGER NOT NULL, -- Unix nanoseconds
			data    BLOB NOT NULL,
			PRIMARY KEY (session, id)
		)`,
	},
}

// migrate brings the schema of db up to version upto, each step in its own
// IMMEDIATE transaction (db must open them so, see _txlock), which re-reads
// the version first: processes opening one file at once apply each step
// once. A database of a version above len(migrations) is refused untouched.
//
// A step that finds the database locked is retried: when processes open a
// new file at once, SQLite may report the lock at once rather than wait
// (while one of them turns the file to WAL mode).
func migrate(db *sql.DB, upto int) error {
	for busy := 0; ; {
		done, err := migrateStep(db, upto)
		switch {
		case err != nil && isBusy(err) && busy < 20:
			time.Sleep(time.Duration(busy+1) * 10 * time.Millisecond)
			busy++
		case err != nil || done:
			return err
		}
	}
}

// migrateStep applies the next migration, if any, reporting done when the
// schema is at version upto.
//
// Foreign keys are off during a step (SQLite ignores the pragma inside a
// transaction, so it is set before): a step that rebuilds a table the way
// SQLite documents (create, copy, drop, rename) must not cascade the drop
// into the tables that refer to it. The references are checked before the
// step commits. db has one connection, so the pragmas apply to the step's.
func migrateStep(db *sql.DB, upto int) (done bool, err error) {
	if _, err := db.Exec(`PRAGMA foreign_keys = OFF`); err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer db.Exec(`PRAGMA foreign_keys = ON`)
	tx, err := db.Begin()
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	if v > len(migrations) {
		return false, fmt.Errorf("schema version %d, this version of zero knows up to %d: %w", v, len(migrations), ErrNewerSchema)
	}
	if v >= upto {
		return true, nil
	}
	for _, q := range migrations[v] {
		if _, err := tx.Exec(q); err != nil {
			return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	rows, err := tx.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	broken := rows.Next()
	rows.Close()
	if broken {
		return false, fmt.Errorf("migrate to version %d: it breaks references between tables", v+1)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	return false, nil
}
