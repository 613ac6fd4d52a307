package store

import (
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rawDB opens the file at path without the Store, as the writer does.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, time.Second, writerParams...))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUpgradeFromV1 builds a version 1 database with data, opens it with
// the current code, and checks that the data survived and that what
// version 2 added works on it.
func TestUpgradeFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	db := rawDB(t, path)
	if err := migrate(db, 1); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, db); v != 1 {
		t.Fatalf("user_version = %d, want 1", v)
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, workspace, roots, profile, model, title, created, updated, runs, last_seq)
			VALUES ('old', '/w', char(0) || '/w', 'p', 'm', 'old chat', 1000, 2000, 4, 2)`,
		`INSERT INTO events (session, seq, type, agent, data) VALUES ('old', 1, 'a', 0, x'7b7d'), ('old', 2, 'b', 1, x'5b5d')`,
		`INSERT INTO messages (session, agent, n, topic, ai, content) VALUES ('old', 0, 0, 0, 0, 'hi'), ('old', 0, 1, 0, 1, 'hello')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := userVersion(t, s.r); v != len(migrations) {
		t.Errorf("user_version after Open = %d, want %d", v, len(migrations))
	}
	want := Session{ID: "old", Workspace: "/w", Roots: []string{"/w"}, Profile: "p", Model: "m", Title: "old chat",
		Created: time.Unix(0, 1000), Updated: time.Unix(0, 2000), Runs: 4, LastSeq: 2}
	got, err := s.Session("old")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("v1 session after upgrade (-want +got):\n%s", diff)
	}
	evs, err := s.Events("old", 0, 0)
	if diff := cmp.Diff([]Event{{1, "a", 0, []byte("{}")}, {2, "b", 1, []byte("[]")}}, evs); diff != "" || err != nil {
		t.Errorf("v1 events after upgrade, %v (-want +got):\n%s", err, diff)
	}
	h, err := s.History("old", 0)
	if diff := cmp.Diff(History{Messages: []Message{{N: 0, Content: "hi"}, {N: 1, AI: true, Content: "hello"}}}, h); diff != "" || err != nil {
		t.Errorf("v1 history after upgrade, %v (-want +got):\n%s", err, diff)
	}

	// Version 2 on version 1 rows: token counts, summaries, settings, claims.
	s.SetTokens("old", 0, 1, 12)
	s.AddSummary("old", 0, Summary{ID: 1, Kind: "topic", From: 0, To: 1, Content: "greetings", Tokens: 2})
	s.AppendEvent("old", Event{Seq: 3, Type: "c"})
	upd := want
	upd.Settings = []byte(`{"auto":true}`)
	upd.Updated = time.Unix(0, 3000)
	s.UpdateSession(upd)
	mustFlush(t, s)
	if err := s.Claim("old", 1<<22+12345); err != nil { // no such pid (pid_max is 2^22)
		t.Errorf("Claim of a v1 session: %v", err)
	}
	h, err = s.History("old", 0)
	wantH := History{
		Messages:  []Message{{N: 0, Content: "hi"}, {N: 1, AI: true, Content: "hello", Tokens: 12}},
		Summaries: []Summary{{ID: 1, Kind: "topic", From: 0, To: 1, Content: "greetings", Tokens: 2}},
	}
	if diff := cmp.Diff(wantH, h); diff != "" || err != nil {
		t.Errorf("history with v2 features, %v (-want +got):\n%s", err, diff)
	}
	got, err = s.Session("old")
	if err != nil || string(got.Settings) != `{"auto":true}` || got.LastSeq != 3 {
		t.Errorf("session with v2 features = %+v, %v", got, err)
	}
	if err := s.DeleteSession("old"); err != nil {
		t.Fatal(err)
	}
}

// TestNewerSchemaRefused opens a database a newer Zero wrote: it is
// refused with ErrNewerSchema and left as it was.
func TestNewerSchemaRefused(t *testing.T) {
	s, path := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	mustFlush(t, s)
	db := rawDB(t, path)
	newer := len(migrations) + 1
	if _, err := db.Exec(`CREATE TABLE future (x)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = ` + itoa(newer)); err != nil {
		t.Fatal(err)
	}

	if s2, err := Open(path); !errors.Is(err, ErrNewerSchema) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("Open of a newer database = %v, want ErrNewerSchema", err)
	} else {
		t.Logf("error: %v", err)
	}
	if v := userVersion(t, db); v != newer {
		t.Errorf("user_version = %d after refusal, want %d", v, newer)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 1 {
		t.Errorf("sessions after refusal: %d, %v", n, err)
	}
	// The Store that had it open keeps working on what it knows.
	if _, err := s.Session("s"); err != nil {
		t.Error(err)
	}
}

// TestMigrateIdempotent applies the migrations twice and from two
// connections at once.
func TestMigrateIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	a, b := rawDB(t, path), rawDB(t, path)
	done := make(chan error, 2)
	go func() { done <- migrate(a, len(migrations)) }()
	go func() { done <- migrate(b, len(migrations)) }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(a, len(migrations)); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, a); v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
}

func TestNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	if err := writeFile(path, []byte("this is not a database, but it is long enough to look like a header......")); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path); err == nil {
		s.Close()
		t.Fatal("Open of a non-database succeeded")
	} else {
		t.Logf("error: %v", err)
	}
}

// TestRebuildStepKeepsReferences adds a step that rebuilds the sessions
// table the way SQLite documents (create, copy, drop, rename): with foreign
// keys on, dropping the old table would cascade into every event and
// message; migrations run with them off and check them before committing.
func TestRebuildStepKeepsReferences(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	s.AppendEvent("s", Event{Seq: 1, Type: "x", Data: []byte(`{}`)})
	s.AddMessage("s", 0, Message{N: 0, Content: "m"})
	mustFlush(t, s)
	s.Close()

	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(slices.Clone(saved), []string{
		`CREATE TABLE sessions_new (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, roots TEXT NOT NULL DEFAULT '',
			profile TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '',
			created INTEGER NOT NULL, updated INTEGER NOT NULL, runs INTEGER NOT NULL DEFAULT 0,
			last_seq INTEGER NOT NULL DEFAULT 0, settings BLOB, owner_pid INTEGER NOT NULL DEFAULT 0)`,
		`INSERT INTO sessions_new SELECT id, workspace, roots, profile, model, title, created, updated, runs, last_seq, settings, owner_pid FROM sessions`,
		`DROP TABLE sessions`,
		`ALTER TABLE sessions_new RENAME TO sessions`,
	})
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events("s", 0, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after a rebuilding migration = %v, %v; want the one event", evs, err)
	}
	h, err := s.History("s", 0)
	if err != nil || len(h.Messages) != 1 {
		t.Fatalf("history after a rebuilding migration = %+v, %v", h, err)
	}
}
