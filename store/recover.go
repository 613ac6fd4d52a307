package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotDamaged is wrapped by the error of [Recover] when the integrity
// check finds the file sound: there is nothing to recover.
var ErrNotDamaged = errors.New("the database file is not damaged")

// RecoverOptions configures [Recover]. Its zero value salvages.
type RecoverOptions struct {
	// Empty starts the new store empty: nothing is copied from the
	// damaged file (which is kept all the same).
	Empty bool
	// Now is the time the damaged file's new name carries; zero means
	// time.Now().
	Now time.Time
}

// Recovery is what [Recover] did.
type Recovery struct {
	Path    string // the new store's file (the path given, absolute)
	Damaged string // where the damaged file is kept (its -wal and -shm beside it)
	Reason  string // what was wrong with it (the DamagedError's Reason)
	// Unreadable is set, to why, when nothing at all could be read from the
	// damaged file (its header or its schema is damaged): the new store is
	// empty.
	Unreadable string
	// Sessions and Memories are how many were saved into the new store;
	// SessionsLost and MemoriesLost how many more the damaged file is known
	// to have held (an index, a session's events or a memory's vectors
	// name them) but could not be read: rows on damaged pages that nothing
	// readable names are not counted.
	Sessions, SessionsLost int
	Memories, MemoriesLost int
	// Copied counts the rows copied by table; Dropped the rows read but
	// not copied (the events of a session that could not be read, say).
	Copied, Dropped map[string]int
	// FailedReads counts the reads that hit a damaged page, by table.
	FailedReads map[string]int
}

// Recover gives a damaged database file a new start. It checks the file at
// path (see [Check]) and returns an error wrapping [ErrNotDamaged] when it
// is sound, or wrapping [ErrBusy] while another process holds one of its
// sessions. Otherwise it renames the file, with its -wal and -shm files, to
// path.damaged-<UTC time> (never deleting anything), creates a new store at
// path, and, unless o.Empty, copies into it, row by row, every session
// (with its events, histories and summaries), memory (with its vectors)
// and rule that SQLite can still read from the damaged file, skipping the
// damaged pages. The returned Recovery says what was saved and lost; it is
// meaningful with an error too once Damaged is set.
//
// No Store may have the file open meanwhile, in this process or another:
// close the editors' Zero first (a session one of them holds is noticed).
func Recover(path string, o RecoverOptions) (Recovery, error) {
	rec := Recovery{Copied: map[string]int{}, Dropped: map[string]int{}, FailedReads: map[string]int{}}
	abs, err := filepath.Abs(path)
	if err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	rec.Path = abs
	err = Check(abs)
	de, isDamaged := errors.AsType[*DamagedError](err)
	switch {
	case err == nil:
		return rec, fmt.Errorf("recover store %s: %w", abs, ErrNotDamaged)
	case !isDamaged:
		return rec, fmt.Errorf("recover store: %w", err)
	}
	rec.Reason = de.Reason
	if held := heldSessions(abs); held > 0 {
		return rec, fmt.Errorf("recover store %s: %d of its sessions are open in another zero process; close it first: %w", abs, held, ErrBusy)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	if rec.Damaged, err = moveAside(abs, now); err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	st, err := Open(abs) // the new store, with its schema
	if err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	if err := st.Close(); err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	if !o.Empty {
		if err := salvage(rec.Damaged, abs, &rec); err != nil {
			return rec, fmt.Errorf("recover store: copying what still reads from %s: %w", rec.Damaged, err)
		}
	}
	// The new store opens (and passes the check of Open).
	st, err = Open(abs)
	if err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	if err := st.Close(); err != nil {
		return rec, fmt.Errorf("recover store: %w", err)
	}
	return rec, nil
}

// heldSessions counts the claim files of the database at abs that another
// Store holds (0 where there are no file locks).
func heldSessions(abs string) int {
	if !lockable {
		return 0
	}
	ents, err := os.ReadDir(lockDir(abs))
	if err != nil {
		return 0
	}
	held := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		f, err := os.OpenFile(filepath.Join(lockDir(abs), e.Name()), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if errors.Is(lockExclusive(f), errLocked) {
			held++
		}
		f.Close() // drops the lock if it took it
	}
	return held
}

// moveAside renames the database file at abs and its -wal and -shm files
// to abs.damaged-<UTC time> (with -2, -3... if taken), the WAL first: a
// WAL left behind would be applied to the new file. It puts back what it
// moved if a rename fails.
func moveAside(abs string, now time.Time) (string, error) {
	base := abs + ".damaged-" + now.UTC().Format("20060102T150405Z")
	aside := base
	taken := func(p string) bool {
		for _, suf := range []string{"", "-wal", "-shm"} {
			if _, err := os.Lstat(p + suf); err == nil {
				return true
			}
		}
		return false
	}
	for i := 2; taken(aside); i++ {
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	var moved []string
	for _, suf := range []string{"-wal", "-shm", ""} {
		err := os.Rename(abs+suf, aside+suf)
		if suf != "" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			for _, m := range moved {
				os.Rename(aside+m, abs+m)
			}
			return "", err
		}
		moved = append(moved, suf)
	}
	return aside, nil
}

// salvaged are the tables salvage copies, parents first (the foreign keys
// of the new store drop the rows whose parent could not be read). The
// memories' full-text index is rebuilt by the triggers of the memories
// table.
var salvaged = []struct {
	table string
	// key is the column naming what a row belongs to (a session, a
	// memory), for the counts.
	key string
}{
	{"sessions", "id"},
	{"events", "session"},
	{"messages", "session"},
	{"summaries", "session"},
	{"images", ""},
	{"checkpoints", "session"},
	{"memories", "id"},
	{"memory_vectors", "id"},
	{"memory_scopes", ""},
	{"behaviour", ""},
	{"knowledge_files", ""},
}

// salvage copies into the new database at to every row of the salvaged
// tables that can still be read from the damaged one at from, in one
// transaction, and counts what was saved and lost into rec.
func salvage(from, to string, rec *Recovery) error {
	src, err := openReadOnly(from)
	if err != nil {
		return err
	}
	defer src.Close()
	// Without the schema, nothing can be read.
	var n int
	if err := src.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		rec.Unreadable = reasonOf(err)
		return nil
	}
	dst, err := sql.Open("sqlite", dsn(to, DefaultBusyTimeout, writerParams...))
	if err != nil {
		return err
	}
	defer dst.Close()
	dst.SetMaxOpenConns(1)
	tx, err := dst.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()

	sessions := map[any]bool{} // session ids known: true when saved
	memories := map[int64]bool{}
	readable := false // anything at all could be read
	for _, t := range salvaged {
		cols, err := commonColumns(src, tx, t.table)
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			continue
		}
		key := slices.Index(cols, t.key)
		ins, err := tx.Prepare(`INSERT INTO ` + quoteIdent(t.table) + ` (` + strings.Join(quoteAll(cols), `, `) +
			`) VALUES (` + strings.TrimSuffix(strings.Repeat(`?, `, len(cols)), `, `) + `)`)
		if err != nil {
			return err
		}
		failed, err := readRows(src, t.table, cols, func(_ int64, vals []any) error {
			readable = true
			_, err := ins.Exec(vals...)
			saved := err == nil
			if err != nil && !isCode(err, sqlite3.SQLITE_CONSTRAINT) {
				return err
			}
			if saved {
				rec.Copied[t.table]++
			} else {
				rec.Dropped[t.table]++
			}
			switch {
			case key < 0:
			case t.key == "session" || t.table == "sessions":
				id := keyOf(vals[key])
				sessions[id] = sessions[id] || (saved && t.table == "sessions")
			case t.table == "memories":
				if id, ok := vals[key].(int64); ok {
					memories[id] = memories[id] || saved
				}
			default: // the vectors of a memory
				if id, ok := vals[key].(int64); ok && !memories[id] {
					memories[id] = false
				}
			}
			return nil
		})
		ins.Close()
		if failed > 0 {
			rec.FailedReads[t.table] = failed
		}
		if err != nil {
			return err
		}
	}
	if !readable && len(rec.FailedReads) > 0 {
		rec.Unreadable = "every read of its tables failed"
	}
	// What the indexes still name: the sessions and the memories on the
	// damaged pages of their tables.
	readIndex(src, `SELECT id FROM sessions INDEXED BY sqlite_autoindex_sessions_1 ORDER BY id`, func(v any) {
		if id := keyOf(v); !sessions[id] {
			sessions[id] = false
		}
	})
	addMemory := func(v any) {
		if id, ok := v.(int64); ok && !memories[id] {
			memories[id] = false
		}
	}
	readIndex(src, `SELECT rowid FROM memories INDEXED BY sqlite_autoindex_memories_1 ORDER BY uid`, addMemory)
	if hasTable(src, "memories_fts_docsize") {
		rec.FailedReads["memories_fts_docsize"], _ = readRows(src, "memories_fts_docsize", []string{"id"}, func(_ int64, vals []any) error {
			addMemory(vals[0])
			return nil
		})
		if rec.FailedReads["memories_fts_docsize"] == 0 {
			delete(rec.FailedReads, "memories_fts_docsize")
		}
	}
	for _, saved := range sessions {
		if !saved {
			rec.SessionsLost++
		}
	}
	var top int64
	for id, saved := range memories {
		top = max(top, id)
		if !saved {
			rec.MemoriesLost++
		}
	}
	rec.Sessions, rec.Memories = rec.Copied["sessions"], rec.Copied["memories"]
	if err := afterSalvage(src, tx, top); err != nil {
		return err
	}
	return tx.Commit()
}

// afterSalvage makes the copied memory consistent: its ids are never
// reused (not even those of the memories lost), every scope's version
// moves (a process keeping vectors in memory reloads them), and a
// knowledge file missing chunks is imported again by the next import.
func afterSalvage(src *sql.DB, tx *sql.Tx, top int64) error {
	var seq int64
	if src.QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'memories'`).Scan(&seq) != nil {
		seq = 0
	}
	seq = max(seq, top)
	if seq > 0 {
		res, err := tx.Exec(`UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'memories'`, seq)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := tx.Exec(`INSERT INTO sqlite_sequence (name, seq) VALUES ('memories', ?)`, seq); err != nil {
				return err
			}
		}
	}
	for _, q := range []string{
		`UPDATE memory_scopes SET version = version + 1`,
		`INSERT OR IGNORE INTO memory_scopes (scope, version) SELECT DISTINCT scope, 1 FROM memories`,
		`UPDATE knowledge_files SET checksum = '' WHERE chunks <> (SELECT count(*) FROM memories m
			WHERE m.scope = knowledge_files.scope AND m.source = knowledge_files.path)`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	return nil
}

// commonColumns are the columns of table in the new database (tx) that
// the damaged one (src) has too, in the new one's order; none when src has
// no such table (an older schema).
func commonColumns(src *sql.DB, tx *sql.Tx, table string) ([]string, error) {
	cols := func(q interface {
		Query(string, ...any) (*sql.Rows, error)
	}) ([]string, error) {
		rows, err := q.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, rows.Err()
	}
	have, err := cols(src)
	if err != nil {
		return nil, nil // the damaged schema does not say: nothing to copy
	}
	want, err := cols(tx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(want, func(c string) bool { return !slices.Contains(have, c) }), nil
}

// maxFailedReads bounds the reads readRows tries in a table past damaged
// pages: a damaged interior page hides all the rows below it, and probing
// its whole range would go on for long.
const maxFailedReads = 1 << 14

// readRows calls fn with the rowid and the values of cols of every row of
// the rowid table that can still be read from db, and returns how many
// reads failed. It reads in rowid order from the smallest and backwards
// from the largest, each until it hits a damaged page; the rows between
// are probed by halves of their rowid range (each probe reading on until
// it hits damage again), so that the readable pages between damaged ones
// are found, with at most maxFailedReads failed reads. A page that SQLite
// cannot reach from the table's root (below a damaged interior page)
// cannot be read. An error of fn ends it.
//
// A read that seeks a rowid beyond the table's ends still visits its
// first or last leaf, so the range probed is bounded: rowids start at 1
// (Zero gives none below), and when the last leaf is damaged the largest
// rowid is taken from the table's indexes (see topRowid).
func readRows(db *sql.DB, table string, cols []string, fn func(rowid int64, vals []any) error) (failed int, err error) {
	sel := `SELECT rowid, ` + strings.Join(quoteAll(cols), `, `) + ` FROM ` + quoteIdent(table) +
		` NOT INDEXED WHERE rowid > ? AND rowid < ? ORDER BY rowid`
	fwd, err := db.Prepare(sel)
	if err != nil {
		return 1, nil // the table cannot even be named: nothing reads
	}
	defer fwd.Close()
	bwd, err := db.Prepare(sel + ` DESC`)
	if err != nil {
		return 1, nil
	}
	defer bwd.Close()
	var fnErr error
	top := int64(0) // the largest rowid read
	// scan reads the rows strictly between lo and hi, reporting the rowid
	// of the last one read (from if none) and whether it read them all.
	scan := func(st *sql.Stmt, lo, hi, from int64) (last int64, all bool) {
		last = from
		rows, err := st.Query(lo, hi)
		if err != nil {
			return last, false
		}
		defer rows.Close()
		vals := make([]any, len(cols))
		dest := make([]any, len(cols)+1)
		var rowid int64
		dest[0] = &rowid
		for i := range vals {
			dest[i+1] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return last, false
			}
			if fnErr = fn(rowid, slices.Clone(vals)); fnErr != nil {
				return last, true
			}
			last, top = rowid, max(top, rowid)
		}
		return last, rows.Err() == nil
	}
	// A gap is a rowid range (exclusive bounds) still to read; fwdFails
	// and bwdFails say that reading it from its low end, or from its high
	// end, is known to fail at once.
	type gap struct {
		lo, hi             int64
		fwdFails, bwdFails bool
	}
	queue := []gap{{lo: 0, hi: math.MaxInt64}}
	for len(queue) > 0 && failed < maxFailedReads {
		g := queue[0]
		queue = queue[1:]
		lo, hi := g.lo, g.hi
		if !g.fwdFails {
			last, all := scan(fwd, lo, hi, lo)
			if fnErr != nil {
				return failed, fnErr
			}
			if all {
				continue
			}
			failed++
			lo = last
		}
		if !g.bwdFails {
			last, all := scan(bwd, lo, hi, hi)
			if fnErr != nil {
				return failed, fnErr
			}
			if all {
				continue
			}
			failed++
			if last == math.MaxInt64 {
				// The last leaf is damaged: beyond the largest rowid
				// known, every read fails.
				last = max(top, topRowid(db, table)) + 1
			}
			hi = last
		}
		// Between lo and hi, the rows next to both ends are unreadable.
		if hi-lo <= 2 {
			continue
		}
		mid := lo + (hi-lo)/2
		queue = append(queue, gap{lo: lo, hi: mid + 1, fwdFails: true}, gap{lo: mid, hi: hi, bwdFails: true})
	}
	return failed, nil
}

// topRowid is the largest rowid that the indexes of table still name (0
// if none): a covering read of each, in its order and then backwards,
// until it fails.
func topRowid(db *sql.DB, table string) int64 {
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?`, table)
	if err != nil {
		return 0
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	rows.Close()
	top := int64(0)
	for _, ix := range names {
		var col string
		if db.QueryRow(`SELECT name FROM pragma_index_info(?) ORDER BY seqno LIMIT 1`, ix).Scan(&col) != nil {
			continue
		}
		readIndex(db, `SELECT rowid FROM `+quoteIdent(table)+` INDEXED BY `+quoteIdent(ix)+` ORDER BY `+quoteIdent(col), func(v any) {
			if id, ok := v.(int64); ok {
				top = max(top, id)
			}
		})
	}
	return top
}

// readIndex calls fn with the first column of every row query reads (a
// covering scan of an index, ORDER BY its one column) until it fails, then
// again from the other end (DESC) until it fails: what a damaged index
// still names.
func readIndex(db *sql.DB, query string, fn func(v any)) {
	read := func(q string) bool {
		rows, err := db.Query(q)
		if err != nil {
			return false
		}
		defer rows.Close()
		for rows.Next() {
			var v any
			if rows.Scan(&v) != nil {
				return false
			}
			fn(v)
		}
		return rows.Err() == nil
	}
	if !read(query) {
		read(query + ` DESC`)
	}
}

// hasTable reports whether the damaged schema names the table.
func hasTable(db *sql.DB, name string) bool {
	var one int
	return db.QueryRow(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&one) == nil
}

// keyOf is a session id read as any (TEXT comes as a string; a damaged
// row may hold a BLOB).
func keyOf(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// reasonOf is what a person is told about err: the damage, or the error.
func reasonOf(err error) string {
	if r := DamageReason(err); r != "" {
		return r
	}
	return err.Error()
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}
