package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database file can be damaged: a disk or file system fault, a copy
// taken while it was being written, garbage written over it. SQLite then
// answers SQLITE_CORRUPT ("database disk image is malformed") or
// SQLITE_NOTADB ("file is not a database") to whatever reads a damaged
// page. [Open] finds what every first query would hit (see checkOpen) and
// fails with a [*DamagedError]; [Check] reads every page; [Recover] moves a
// damaged file aside and starts a new one with what still reads.

// ErrDamaged is wrapped by the errors of [Open], [Check] and the writes
// that found the database file damaged. [IsDamaged] also knows the errors
// of reads that hit a damaged page.
var ErrDamaged = errors.New("the database file is damaged")

// DamagedError is the error of [Open] and [Check] on a damaged database
// file. It wraps [ErrDamaged] and what SQLite said.
type DamagedError struct {
	Path string // the database file
	// Reason says what is wrong, in SQLite's words: "database disk image
	// is malformed", "file is not a database", or the integrity check's
	// first finding.
	Reason string
	Err    error // SQLite's error, or nil when the integrity check found it
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s is damaged (%s)", e.Path, e.Reason)
}

func (e *DamagedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrDamaged}
	}
	return []error{ErrDamaged, e.Err}
}

// IsDamaged reports whether err says that the database file is damaged:
// it wraps [ErrDamaged], or an SQLite error of code SQLITE_CORRUPT (any of
// its extended codes) or SQLITE_NOTADB. An error passed on as text only
// (it crossed a process or a protocol) is recognised by SQLite's messages
// for those codes.
func IsDamaged(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDamaged) || isCode(err, sqlite3.SQLITE_CORRUPT) || isCode(err, sqlite3.SQLITE_NOTADB) {
		return true
	}
	if _, ok := errors.AsType[*sqlite.Error](err); ok {
		return false // the code said otherwise
	}
	msg := err.Error()
	return strings.Contains(msg, msgCorrupt) || strings.Contains(msg, msgNotADB)
}

// SQLite's messages (sqlite3_errstr) for the codes of damage.
const (
	msgCorrupt = "database disk image is malformed"
	msgNotADB  = "file is not a database"
)

// DamageReason is what is wrong in err, for a person: the Reason of a
// [*DamagedError], SQLite's words for its code, or "" when err does not
// say the file is damaged.
func DamageReason(err error) string {
	if e, ok := errors.AsType[*DamagedError](err); ok {
		return e.Reason
	}
	switch {
	case isCode(err, sqlite3.SQLITE_NOTADB):
		return msgNotADB
	case isCode(err, sqlite3.SQLITE_CORRUPT):
		return msgCorrupt
	case !IsDamaged(err):
		return ""
	case strings.Contains(err.Error(), msgNotADB):
		return msgNotADB
	default:
		return msgCorrupt
	}
}

// damaged is err as a *DamagedError of the file at path when it says the
// file is damaged, else err.
func damaged(path string, err error) error {
	if err == nil || !IsDamaged(err) {
		return err
	}
	if _, ok := errors.AsType[*DamagedError](err); ok {
		return err
	}
	return &DamagedError{Path: path, Reason: DamageReason(err), Err: err}
}

// checkedWhole are the tables that checkOpen checks whole (with their
// indexes): small ones (a row per session, per scope, per knowledge file)
// that the first query of every face reads.
var checkedWhole = []string{"sessions", "memory_scopes", "behaviour", "knowledge_files", "sqlite_sequence"}

// checkOpen is the check Open makes of the database: what the first
// queries of every face read, and cheap enough for every command (about a
// millisecond for 500 sessions, whatever the size of the file; PRAGMA
// quick_check of the whole file costs about 130 ms per 170 MB, see
// [Check]). Reading the schema and preparing statements (done before)
// hits a damaged header or schema; then the small tables are checked
// whole (PRAGMA quick_check(table)), and every other table and index is
// read at both ends: their root pages and the pages of the oldest and the
// newest rows, which the listings and the last session read. Damage
// elsewhere (an old session's events) is found by the read that hits it,
// which fails with an error [IsDamaged] knows, and by [Check].
func checkOpen(db *sql.DB) error {
	rows, err := db.Query(`SELECT type, name, tbl_name FROM sqlite_schema
		WHERE type IN ('table', 'index') AND rootpage > 0 ORDER BY type DESC, name`)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	type btree struct{ typ, name, table string }
	var trees []btree
	for rows.Next() {
		var t btree
		if err := rows.Scan(&t.typ, &t.name, &t.table); err != nil {
			rows.Close()
			return fmt.Errorf("check: %w", err)
		}
		trees = append(trees, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	for _, t := range trees {
		var queries []string
		switch {
		case t.typ == "table" && slices.Contains(checkedWhole, t.name):
			if err := quickCheck(db, fmt.Sprintf(`PRAGMA quick_check(%s)`, quoteIdent(t.name))); err != nil {
				return fmt.Errorf("check %s: %w", t.name, err)
			}
			continue
		case slices.Contains(checkedWhole, t.table):
			continue // checked with its table
		case t.typ == "table" && !withoutRowid(db, t.name):
			q := `SELECT rowid FROM ` + quoteIdent(t.name) + ` NOT INDEXED ORDER BY rowid`
			queries = []string{q + ` LIMIT 1`, q + ` DESC LIMIT 1`}
		case t.typ == "table":
			// A table WITHOUT ROWID (FTS5's) is the b-tree of its key.
			var col string
			if err := db.QueryRow(`SELECT name FROM pragma_table_info(?) WHERE pk = 1`, t.name).Scan(&col); err != nil {
				return fmt.Errorf("check %s: %w", t.name, err)
			}
			from := ` FROM ` + quoteIdent(t.name)
			queries = []string{`SELECT min(` + quoteIdent(col) + `)` + from, `SELECT max(` + quoteIdent(col) + `)` + from}
		default:
			var col string
			if err := db.QueryRow(`SELECT name FROM pragma_index_info(?) ORDER BY seqno LIMIT 1`, t.name).Scan(&col); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					continue // an index on an expression: none here
				}
				return fmt.Errorf("check %s: %w", t.name, err)
			}
			// min and max of an index's first column are read from its
			// ends.
			from := ` FROM ` + quoteIdent(t.table) + ` INDEXED BY ` + quoteIdent(t.name)
			queries = []string{`SELECT min(` + quoteIdent(col) + `)` + from, `SELECT max(` + quoteIdent(col) + `)` + from}
		}
		for _, q := range queries {
			var v any
			if err := db.QueryRow(q).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("check %s: %w", t.name, err)
			}
		}
	}
	return nil
}

// withoutRowid reports whether the table is a WITHOUT ROWID one.
func withoutRowid(db *sql.DB, table string) bool {
	var wr bool
	return db.QueryRow(`SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, table).Scan(&wr) == nil && wr
}

// quickCheck runs a quick_check pragma and returns its findings as an
// error wrapping ErrDamaged (nil for "ok").
func quickCheck(db *sql.DB, pragma string) error {
	rows, err := db.Query(pragma)
	if err != nil {
		return err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		for _, line := range strings.Split(s, "\n") {
			if line != "ok" && !strings.HasPrefix(line, "*** in database ") {
				found = append(found, line)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	return &checkFindings{found}
}

// checkFindings are what an integrity check found.
type checkFindings struct{ lines []string }

func (f *checkFindings) Error() string {
	s := "integrity check: " + f.lines[0]
	if n := len(f.lines) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more findings)", n)
	}
	return s
}

func (f *checkFindings) Is(target error) bool { return target == ErrDamaged }

// Check reads every page of the database file at path (SQLite's PRAGMA
// quick_check, about 130 ms per 170 MB read from the page cache) without
// changing it, and returns nil when it is sound, a [*DamagedError] when it
// is damaged, and an error wrapping [os.ErrNotExist] when there is no such
// file. Other Zero processes may use the file meanwhile.
func Check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	db, err := openReadOnly(abs)
	if err != nil {
		return fmt.Errorf("check store %s: %w", abs, err)
	}
	defer db.Close()
	err = quickCheck(db, `PRAGMA quick_check(20)`)
	if f, ok := errors.AsType[*checkFindings](err); ok {
		return &DamagedError{Path: abs, Reason: f.Error()}
	}
	if err := damaged(abs, err); err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	return nil
}

// openReadOnly opens the database file at abs for reading only: a
// damaged file is never written to (not even by a checkpoint of its WAL,
// whose committed pages are read nonetheless).
func openReadOnly(abs string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(abs, DefaultBusyTimeout, "mode=ro", "_pragma=cell_size_check(1)"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
