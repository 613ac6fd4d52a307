package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fill makes a closed store at path with n sessions (s000, s001, ...,
// created in order, so their rows go in that order), each with events
// events and two messages, and m memories (memory 0, memory 1, ...).
func fill(t *testing.T, path string, n, events, m int) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		mustCreate(t, s, Session{ID: id, Workspace: "/w", Title: "session number " + id + strings.Repeat(" and a longer title", 4)})
		for j := range events {
			s.AppendEvent(id, Event{Seq: int64(j + 1), Type: "tool_result", Data: benchEvent})
		}
		s.AddMessage(id, 0, Message{N: 0, Content: "hello " + id})
		s.AddMessage(id, 0, Message{N: 1, AI: true, Content: "hi from " + id})
	}
	for i := range m {
		if _, err := s.SaveMemories([]Memory{{Scope: "/w", Area: "main", Text: fmt.Sprintf("memory %d: the build of project%d uses make", i, i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetBehaviour("/w", "be brief"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// page is one b-tree page of a database file, from dbstat.
type page struct {
	no    int
	typ   string // "leaf", "internal", "overflow"
	cells int
}

// pagesOf lists the pages of the b-tree name (a table or an index) in
// their order in the tree: the leaves from the smallest key to the largest.
func pagesOf(t *testing.T, path, name string) []page {
	t.Helper()
	db, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT pageno, pagetype, ncell FROM dbstat WHERE name = ? ORDER BY path`, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []page
	for rows.Next() {
		var p page
		if err := rows.Scan(&p.no, &p.typ, &p.cells); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func leaves(ps []page) []page {
	return slices.DeleteFunc(slices.Clone(ps), func(p page) bool { return p.typ != "leaf" })
}

// smash writes garbage over page no (from 1) of the file at path.
func smash(t testing.TB, path string, no int) {
	t.Helper()
	garbage := make([]byte, 4096)
	r := rand.New(rand.NewPCG(uint64(no), 7))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	smashAt(t, path, int64(no-1)*4096, garbage)
}

// smashAt writes b over the file at path from offset off.
func smashAt(t testing.TB, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The damage every first query would hit is found by Open, which leaves
// the file as it is.
func TestOpenFindsDamage(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "zero.db")
	fill(t, clean, 150, 30, 60)
	for _, tc := range []struct {
		name   string
		page   func() int
		reason string
	}{
		{"header", func() int { return 1 }, msgNotADB},
		{"sessions root", func() int { return pagesOf(t, clean, "sessions")[0].no }, msgCorrupt},
		{"sessions middle leaf", func() int { l := leaves(pagesOf(t, clean, "sessions")); return l[len(l)/2].no }, msgCorrupt},
		{"sessions index", func() int { return pagesOf(t, clean, "sessions_updated")[0].no }, msgCorrupt},
		{"events root", func() int { return pagesOf(t, clean, "events")[0].no }, msgCorrupt},
		{"events newest leaf", func() int { l := leaves(pagesOf(t, clean, "events")); return l[len(l)-1].no }, msgCorrupt},
		{"events index", func() int { return pagesOf(t, clean, "sqlite_autoindex_events_1")[0].no }, msgCorrupt},
		{"memories root", func() int { return pagesOf(t, clean, "memories")[0].no }, msgCorrupt},
		{"memory search index", func() int { return pagesOf(t, clean, "memories_fts_data")[0].no }, msgCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "zero.db")
			if err := os.WriteFile(path, mustRead(t, clean), 0o600); err != nil {
				t.Fatal(err)
			}
			smash(t, path, tc.page())
			before := mustRead(t, path)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open of a damaged file succeeded")
			}
			de, ok := errors.AsType[*DamagedError](err)
			if !ok || !errors.Is(err, ErrDamaged) || !IsDamaged(err) {
				t.Fatalf("Open: %v (%T); want a *DamagedError", err, err)
			}
			if de.Path != path || !strings.Contains(de.Reason, tc.reason) || DamageReason(err) != de.Reason {
				t.Errorf("DamagedError = %+v; want path %s, a reason with %q", de, path, tc.reason)
			}
			if !bytes.Equal(before, mustRead(t, path)) {
				t.Error("Open changed the damaged file")
			}
		})
	}
}

// Damage in the middle of a big table (an old session's events) is not
// looked for by Open; the read that hits it fails with an error IsDamaged
// knows, and Check finds it.
func TestCheckFindsWhatOpenDoesNot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 100, 30, 0)
	if err := Check(path); err != nil {
		t.Fatalf("Check of a sound file: %v", err)
	}
	ev := leaves(pagesOf(t, path, "events"))
	smash(t, path, ev[len(ev)/2].no)
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	var hit error
	for i := range 100 {
		if _, err := s.Events(fmt.Sprintf("s%03d", i), 0, 0); err != nil {
			hit = err
			break
		}
	}
	if !IsDamaged(hit) || DamageReason(hit) != msgCorrupt {
		t.Errorf("reading every session's events: %v; want a damaged-file error", hit)
	}
	err = Check(path)
	if de, ok := errors.AsType[*DamagedError](err); !ok || de.Reason != msgCorrupt || de.Path != path {
		t.Errorf("Check: %v; want a *DamagedError", err)
	}
	if err := Check(filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check of no file: %v", err)
	}
}

// What the integrity check finds is said in one line.
func TestCheckFindings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 100, 30, 0)
	root := pagesOf(t, path, "events")[0]
	if root.typ != "internal" {
		t.Fatalf("the events' root is a %s page", root.typ)
	}
	smash(t, path, root.no)
	err := Check(path)
	de, ok := errors.AsType[*DamagedError](err)
	if !ok || !strings.HasPrefix(de.Reason, "integrity check: ") || strings.Contains(de.Reason, "\n") ||
		strings.Contains(de.Reason, "*** in database") || !strings.Contains(de.Reason, "more findings)") {
		t.Errorf("Check: %v; want the first finding and how many more", err)
	}
}

func TestIsDamaged(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("disk full"), false},
		{fmt.Errorf("x: %w", ErrDamaged), true},
		{ErrNotFound, false},
		// Passed on as text (through an editor's protocol, say).
		{errors.New("session/load: list sessions: database disk image is malformed (11)"), true},
		{errors.New("open: file is not a database (26)"), true},
	} {
		if got := IsDamaged(tc.err); got != tc.want {
			t.Errorf("IsDamaged(%v) = %v", tc.err, got)
		}
	}
	// The driver's codes: SQLITE_NOTADB, SQLITE_CORRUPT, and another.
	path := filepath.Join(t.TempDir(), "zero.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`SELECT * FROM sqlite_schema`)
	if !isCode(err, 26) || !IsDamaged(err) || DamageReason(err) != msgNotADB {
		t.Errorf("a file that is not a database: %v", err)
	}
	fine := filepath.Join(t.TempDir(), "zero.db")
	fill(t, fine, 1, 0, 0)
	db2, err := openReadOnly(fine)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	_, err = db2.Exec(`SELECT * FROM no_such_table`)
	if err == nil || IsDamaged(err) || DamageReason(err) != "" {
		t.Errorf("another SQLite error: %v counted as damage", err)
	}
}

// Writes that find the file damaged are said once, to OnDamage, and not
// tried again for ever: Flush reports them.
func TestDamagedWritesAreNotRetried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 100, 30, 0)
	said := make(chan error, 10)
	s, err := OpenWith(path, OpenOptions{OnDamage: func(err error) { said <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Every leaf of the events' index but the ends, which Open checks: a
	// new event of each session goes into the middle of the index.
	ix := leaves(pagesOf(t, path, "sqlite_autoindex_events_1"))
	for _, p := range ix[1 : len(ix)-1] {
		smash(t, path, p.no)
	}
	for i := range 100 {
		s.AppendEvent(fmt.Sprintf("s%03d", i), Event{Seq: 100, Type: "x", Data: []byte("{}")})
	}
	err = s.Flush()
	if !IsDamaged(err) {
		t.Fatalf("Flush after writes to damaged pages: %v", err)
	}
	if got := <-said; !errors.Is(got, ErrDamaged) || !strings.Contains(got.Error(), path) {
		t.Errorf("OnDamage got %v", got)
	}
	// The failed writes are reported (by this Flush or the next), not kept
	// for a retry: the queue drains.
	if err := s.Flush(); err != nil && !IsDamaged(err) {
		t.Errorf("a second Flush: %v", err)
	}
	if err := s.Flush(); err != nil {
		t.Errorf("a third Flush: %v (the failed writes were kept for a retry)", err)
	}
	if len(said) != 0 {
		t.Errorf("OnDamage called %d more times", len(said))
	}
}

// copyStore copies a closed store's file to a new folder.
func copyStore(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "zero.db")
	if err := os.WriteFile(dst, mustRead(t, path), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Garbage over some pages of the sessions and events: Recover keeps the
// damaged file as it is, and the new store holds every session and memory
// that was on an undamaged page, with its events, and says how many were
// lost.
func TestRecoverSalvages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 150, 30, 300)
	sl := leaves(pagesOf(t, path, "sessions"))
	if len(sl) < 3 {
		t.Fatalf("the sessions fill %d leaves; the test wants 3", len(sl))
	}
	ml := leaves(pagesOf(t, path, "memories"))
	ev := leaves(pagesOf(t, path, "events"))
	smash(t, path, sl[len(sl)/2].no)
	smash(t, path, ml[1].no)
	smash(t, path, ev[len(ev)/3].no)
	damagedBytes := mustRead(t, path)
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

	rec, err := Recover(path, RecoverOptions{Now: now})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	t.Logf("%+v", rec)
	want := path + ".damaged-20260301T123000Z"
	if rec.Damaged != want || !bytes.Equal(mustRead(t, want), damagedBytes) {
		t.Errorf("the damaged file should be kept, unchanged, as %s (got %q)", want, rec.Damaged)
	}
	lost := sl[len(sl)/2].cells
	if rec.Sessions != 150-lost || rec.SessionsLost != lost || rec.Unreadable != "" {
		t.Errorf("saved %d sessions, lost %d; want %d and %d (the cells of the damaged leaf)", rec.Sessions, rec.SessionsLost, 150-lost, lost)
	}
	if rec.Memories != 300-ml[1].cells || rec.MemoriesLost != ml[1].cells {
		t.Errorf("saved %d memories, lost %d; want %d and %d", rec.Memories, rec.MemoriesLost, 300-ml[1].cells, ml[1].cells)
	}
	if rec.Reason != msgCorrupt {
		t.Errorf("Reason = %q", rec.Reason)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatalf("the new store: %v", err)
	}
	defer s.Close()
	list, err := s.Sessions(ListOptions{})
	if err != nil || len(list) != rec.Sessions {
		t.Fatalf("Sessions: %d, %v", len(list), err)
	}
	// The oldest and the newest were on undamaged pages, with their
	// events and histories.
	for _, id := range []string{"s000", "s149"} {
		evs, err := s.Events(id, 0, 0)
		if err != nil || len(evs) != 30 {
			t.Errorf("events of %s: %d, %v", id, len(evs), err)
		}
		h, err := s.History(id, 0)
		if err != nil || len(h.Messages) != 2 || h.Messages[1].Content != "hi from "+id {
			t.Errorf("history of %s: %+v, %v", id, h, err)
		}
	}
	// The memories that survived are searched; new ones get new ids.
	found, err := s.MatchMemories([]string{"/w"}, []string{"project299"}, 5)
	if err != nil || len(found) != 1 {
		t.Errorf("searching a saved memory: %v, %v", found, err)
	}
	if b, err := s.Behaviour("/w"); err != nil || b != "be brief" {
		t.Errorf("behaviour: %q, %v", b, err)
	}
	mustCreate(t, s, Session{ID: "new", Workspace: "/w"})
	s.AppendEvent("new", Event{Seq: 1, Type: "x", Data: []byte("{}")})
	if _, err := s.SaveMemories([]Memory{{Scope: "/w", Area: "main", Text: "after"}}); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, s)
	if err := Check(path); err != nil {
		t.Errorf("the new store: %v", err)
	}
}

// A damaged header: nothing can be read, which Recover says; the new store
// is empty and works.
func TestRecoverUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 5, 3, 3)
	smashAt(t, path, 0, bytes.Repeat([]byte{0xA5}, 100))
	rec, err := Recover(path, RecoverOptions{})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if rec.Unreadable != msgNotADB || rec.Sessions != 0 || rec.Memories != 0 || rec.Reason != msgNotADB {
		t.Errorf("Recovery = %+v; want nothing read, the reason %q", rec, msgNotADB)
	}
	if _, err := os.Stat(rec.Damaged); err != nil {
		t.Errorf("the damaged file: %v", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, Session{ID: "a", Workspace: "/w"})
	if list, err := s.Sessions(ListOptions{}); err != nil || len(list) != 1 {
		t.Errorf("the new store: %v, %v", list, err)
	}
}

// A sound file is not recovered; Empty copies nothing; a name taken gets
// a number.
func TestRecoverOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 3, 1, 1)
	before := mustRead(t, path)
	if _, err := Recover(path, RecoverOptions{}); !errors.Is(err, ErrNotDamaged) {
		t.Fatalf("Recover of a sound file: %v", err)
	}
	if !bytes.Equal(before, mustRead(t, path)) {
		t.Fatal("Recover changed a sound file")
	}
	if _, err := Recover(filepath.Join(t.TempDir(), "none.db"), RecoverOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Recover of no file: %v", err)
	}
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	var kept []string
	for range 2 {
		smash(t, path, 2)
		rec, err := Recover(path, RecoverOptions{Empty: true, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Sessions != 0 || len(rec.Copied) != 0 {
			t.Errorf("Empty copied %+v", rec)
		}
		kept = append(kept, rec.Damaged)
		fill(t, path, 3, 1, 1)
	}
	if want := []string{path + ".damaged-20260301T123000Z", path + ".damaged-20260301T123000Z-2"}; !slices.Equal(kept, want) {
		t.Errorf("kept as %q; want %q", kept, want)
	}
}

// The damaged file's WAL goes with it, and what only the WAL held is
// salvaged.
func TestRecoverKeepsWAL(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	fill(t, orig, 100, 30, 0)
	s, err := Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "only-in-wal", Workspace: "/w"})
	// A copy taken while it is open: the last session is in the WAL only.
	path := filepath.Join(t.TempDir(), "zero.db")
	for _, suf := range []string{"", "-wal"} {
		if err := os.WriteFile(path+suf, mustRead(t, orig+suf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	ev := leaves(pagesOf(t, orig, "events"))
	smash(t, path, ev[len(ev)/2].no)
	wal := mustRead(t, path+"-wal")

	rec, err := Recover(path, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, rec.Damaged+"-wal"), wal) {
		t.Error("the damaged file's WAL should be kept beside it, unchanged")
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Session("only-in-wal"); err != nil {
		t.Errorf("the session only the WAL held: %v", err)
	}
	if rec.Sessions != 101 || rec.Dropped["events"] != 0 || rec.Copied["events"] >= 3000 {
		t.Errorf("Recovery = %+v", rec)
	}
}

// readRows reads every row but those of the damaged leaves, however many
// there are and wherever they are.
func TestReadRowsSkipsDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 60, 50, 0)
	ev := leaves(pagesOf(t, path, "events"))
	bad := []page{ev[0], ev[5], ev[6], ev[len(ev)/2], ev[len(ev)-1]}
	lost := 0
	for _, p := range bad {
		smash(t, path, p.no)
		lost += p.cells
	}
	db, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got []int64
	failed, err := readRows(db, "events", []string{"session", "seq"}, func(rowid int64, vals []any) error {
		got = append(got, rowid)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if len(got) != 3000-lost || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("read %d rows (%d failed reads); want the %d not on the damaged leaves, each once", len(got), failed, 3000-lost)
	}
	// The rows missing are contiguous runs of rowids, one per damaged
	// leaf (two of which are neighbours).
	runs, prev := 0, int64(0)
	for _, r := range got {
		if r != prev+1 {
			runs++
		}
		prev = r
	}
	if prev != 3000 {
		runs++
	}
	if runs != 4 {
		t.Errorf("%d runs of missing rows; want 4", runs)
	}
}
