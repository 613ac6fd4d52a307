package store

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultBusyTimeout is how long a write waits for another process's write
// transaction on the same file before it is retried.
const DefaultBusyTimeout = 5 * time.Second

// DefaultPath returns the default database path: $XDG_DATA_HOME/zero/zero.db,
// else ~/.local/share/zero/zero.db, on every system (like the config
// directory). A relative XDG_DATA_HOME is ignored, as the XDG spec says.
func DefaultPath() (string, error) {
	home, _ := os.UserHomeDir()
	return DefaultPathIn(os.Getenv("XDG_DATA_HOME"), home)
}

// DefaultPathIn is DefaultPath for an environment given as its
// XDG_DATA_HOME and home directory ("" when there is none).
func DefaultPathIn(dataHome, home string) (string, error) {
	if filepath.IsAbs(dataHome) {
		return filepath.Join(dataHome, "zero", "zero.db"), nil
	}
	if home == "" {
		return "", errors.New("store path: no home directory")
	}
	return filepath.Join(home, ".local", "share", "zero", "zero.db"), nil
}

// OpenOptions configures [OpenWith]. Its zero value works.
type OpenOptions struct {
	// Logger receives write errors and retries; nil means silent.
	Logger *slog.Logger
	// BusyTimeout is how long one attempt to write waits for another
	// process's transaction; 0 means [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// OnDamage is called once, from the writer, when a write finds the
	// database file damaged (see [IsDamaged]), with its error, in place of
	// the store's own log line saying so; nil means only that line.
	OnDamage func(err error)
}

// Store is an open database. Its methods may be called from any goroutine.
type Store struct {
	log  *slog.Logger
	path string  // the database file, absolute
	w    *sql.DB // one connection, used by the writer goroutine (and Open) only
	r    *sql.DB // readers

	mu     sync.Mutex
	queue  []op
	closed bool
	wake   chan struct{} // signalled (non-blocking) when queue grows or closed is set
	done   chan struct{} // closed when the writer goroutine has returned
	// closing is closed by Close: a writer pausing before a retry stops.
	closing  chan struct{}
	failures int // batches failed in a row (see requeue)

	locks   string // the folder of the sessions' claim files
	claimMu sync.Mutex
	held    map[string]*os.File // sessions this Store claimed, with their locked files

	// Owned by the writer goroutine (and by Close after done).
	errs     []error              // queued writes' errors not yet reported by a Flush
	stmts    map[string]*sql.Stmt // prepared on w
	onDamage func(error)          // OpenOptions.OnDamage
	damaged  bool                 // a write found the file damaged (said once)
}

// Open opens the database at path with default options; see [OpenWith].
func Open(path string) (*Store, error) {
	return OpenWith(path, OpenOptions{})
}

// OpenWith opens the database at path, creating its directory (mode 0700)
// and the file (0600) if needed, and brings its schema up to date. It
// refuses, with an error wrapping [ErrNewerSchema], a database written by a
// newer version, and with a [*DamagedError] (wrapping [ErrDamaged]) a
// damaged file: its header, its schema, the small tables every listing
// reads, and both ends of the others are checked (see checkOpen); the file
// is left as it is ([Recover] starts a new one). Close the Store when done.
func OpenWith(path string, o OpenOptions) (*Store, error) {
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.BusyTimeout = cmp.Or(o.BusyTimeout, DefaultBusyTimeout)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Create the file ourselves so that it (and the -wal and -shm files
	// SQLite derives from it) are private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	f.Close()

	w, err := sql.Open("sqlite", dsn(abs, o.BusyTimeout, writerParams...))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	stmts := make(map[string]*sql.Stmt)
	fail := func(err error) (*Store, error) {
		for _, st := range stmts {
			st.Close()
		}
		w.Close()
		if IsDamaged(err) {
			return nil, fmt.Errorf("open store: %w", damaged(abs, err))
		}
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := migrate(w, len(migrations)); err != nil {
		return fail(err)
	}
	// Prepare the frequent writes on the writer's connection now: while a
	// batch's transaction holds it, only the transaction can prepare.
	for _, q := range hotWrites {
		st, err := w.Prepare(q)
		if err != nil {
			return fail(err)
		}
		stmts[q] = st
	}
	if err := checkOpen(w); err != nil {
		return fail(err)
	}
	r, err := sql.Open("sqlite", dsn(abs, o.BusyTimeout, "_pragma=query_only(1)"))
	if err != nil {
		return fail(err)
	}
	n := max(2, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)

	s := &Store{
		log:      o.Logger,
		path:     abs,
		onDamage: o.OnDamage,
		w:        w,
		r:        r,
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		closing:  make(chan struct{}),
		stmts:    stmts,
		locks:    lockDir(abs),
		held:     map[string]*os.File{},
	}
	go s.run()
	return s, nil
}

// writerParams are the DSN parameters of the writer's connection beyond
// dsn's: its transactions are IMMEDIATE (they take the write lock at BEGIN,
// so they wait for other writers there and are never refused halfway), and
// it turns the file to WAL mode (a setting kept in the file, so the readers
// need not repeat it).
var writerParams = []string{"_pragma=journal_mode(WAL)", "_txlock=immediate"}

// dsn is the data source name of the database file at abs, as a file: URI
// (so that any byte of the path survives), with the pragmas every pooled
// connection gets, plus extra parameters.
func dsn(abs string, busy time.Duration, extra ...string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter: file:///C:/...
	}
	u := url.URL{Path: p}
	q := append([]string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds()),
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(1)",
	}, extra...)
	return "file://" + u.EscapedPath() + "?" + strings.Join(q, "&")
}

// Path is the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Flush waits until every write queued before it is committed, and returns
// the errors of queued writes not yet reported by an earlier Flush (joined),
// or [ErrClosed] after Close.
func (s *Store) Flush() error {
	return s.do(op{name: "flush", flush: true})
}

// Close commits every queued write, stops the writer and closes the
// database. It returns the errors of queued writes that no Flush reported.
// Calls after Close fail with [ErrClosed] (queued writes are dropped).
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.signal()
	<-s.done
	s.releaseAll()
	errs := s.errs
	s.errs = nil
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, s.r.Close(), s.w.Close())
	return errors.Join(errs...)
}

// isBusy reports whether err is SQLite's "database is locked" (by another
// connection), after which a write may be retried.
func isBusy(err error) bool {
	return isCode(err, sqlite3.SQLITE_BUSY) || isCode(err, sqlite3.SQLITE_LOCKED)
}

// isCode reports whether err is an SQLite error with result code code: an
// extended code exactly, a primary code as the primary part of any.
func isCode(err error, code int) bool {
	e, ok := errors.AsType[*sqlite.Error](err)
	if !ok {
		return false
	}
	if code <= 0xff {
		return e.Code()&0xff == code
	}
	return e.Code() == code
}
