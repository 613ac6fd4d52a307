package security

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroagent/zero/store" // and its SQLite driver, for dbstat
)

// A damaged session store (garbage over some of its pages, or over its
// header) is survivable: every command says what happened and what to do,
// zero doctor names it and the fix, zero store recover keeps the damaged
// file, salvages what still reads into a new store, and the next zero run
// is stored again.

// storeFile is the box's session store (the default path under HOME).
func (b *box) storeFile() string {
	return filepath.Join(b.home, ".local", "share", "zero", "zero.db")
}

// smashPage writes garbage over page no (from 1, of 4096 bytes) of path.
func smashPage(t *testing.T, path string, no int) {
	t.Helper()
	garbage := make([]byte, 4096)
	r := rand.New(rand.NewPCG(uint64(no), 11))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	smashBytes(t, path, int64(no-1)*4096, garbage)
}

func smashBytes(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// leafPages lists the leaf pages of a table of the database at path, in
// the table's order, with how many rows each holds.
func leafPages(t *testing.T, path, table string) (pages, rows []int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file://"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(`SELECT pageno, ncell FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var p, n int
		if err := rs.Scan(&p, &n); err != nil {
			t.Fatal(err)
		}
		pages, rows = append(pages, p), append(rows, n)
	}
	return pages, rows
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectDamageSaid runs the commands that read the store and checks that
// each says the store is damaged (why: reason) and what to do, and that
// none changes the damaged file. zero run and zero acp go on without it.
func (b *box) expectDamageSaid(reason string) {
	t := b.t
	t.Helper()
	path := b.storeFile()
	before := mustReadFile(t, path)
	clear := "the session store " + path + " is damaged (" + reason + "): its sessions and memories cannot be read"
	fix := "zero store recover moves it aside, keeping it, and starts a new store with what still reads"
	for _, args := range [][]string{
		{"sessions"},
		{"sessions", "--all"},
		{"memory", "ls"},
		{"memory", "search", "build"},
		{"store", "check"},
	} {
		stdout, stderr, err := b.run(nil, args...)
		if out := stdout + stderr; err == nil || !strings.Contains(out, clear) || !strings.Contains(out, fix) {
			t.Errorf("zero %s: %v; want a failure with the clear message:\n%s", strings.Join(args, " "), err, out)
		}
	}
	stdout, _, err := b.run(nil, "doctor", "--workspace", b.ws)
	if err == nil || !strings.Contains(stdout, "✗ sessions: "+clear) || !strings.Contains(stdout, "fix: zero store recover (it renames the damaged file to zero.db.damaged-<UTC time>, keeping it") {
		t.Errorf("zero doctor: %v\n%s", err, stdout)
	}
	// zero run shows it as a warning of the session (zero chat's
	// conversation and the editors show the same event).
	stdout, stderr, err := b.run(nil, "run", "--workspace", b.ws, "work while damaged")
	if err != nil || !strings.Contains(stdout, "! "+clear) || !strings.Contains(stdout, "until then sessions will not outlive this process") || !strings.Contains(stdout, "answered while damaged") {
		t.Errorf("zero run should go on without the store, saying why: %v\n%s\n%s", err, stdout, stderr)
	}
	// An editor's zero acp logs it on stderr at start (and shows it in
	// the first session).
	s := b.acp(nil)
	s.stdin.Close()
	s.proc.Wait() // all of stderr is copied
	if !strings.Contains(s.stderr.String(), clear) || !strings.Contains(s.stderr.String(), fix) {
		t.Errorf("zero acp should warn with the clear message:\n%s", s.stderr)
	}
	if !bytes.Equal(before, mustReadFile(t, path)) {
		t.Error("a command changed the damaged file")
	}
}

// recoverStore runs zero store recover, checks that it kept the damaged
// file as it was, and returns what it printed.
func (b *box) recoverStore() string {
	t := b.t
	t.Helper()
	path := b.storeFile()
	damaged := mustReadFile(t, path)
	stdout, stderr, err := b.run(nil, "store", "recover")
	if err != nil {
		t.Fatalf("zero store recover: %v\n%s%s", err, stdout, stderr)
	}
	kept, _ := filepath.Glob(path + ".damaged-*")
	kept = slices.DeleteFunc(kept, func(p string) bool { return strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") })
	if len(kept) != 1 || !strings.Contains(stdout, "kept as  "+kept[0]) || !bytes.Equal(mustReadFile(t, kept[0]), damaged) {
		t.Errorf("the damaged file should be kept, as it was, beside the new store (%v):\n%s", kept, stdout)
	}
	return stdout
}

// expectWorkingStore checks that zero run is stored again and the store is
// sound; want are texts zero sessions lists.
func (b *box) expectWorkingStore(want ...string) {
	t := b.t
	t.Helper()
	if stdout, stderr, err := b.run(nil, "run", "--workspace", b.ws, "work after recovery"); err != nil || strings.Contains(stderr, "damaged") {
		t.Errorf("zero run after recovery: %v\n%s%s", err, stdout, stderr)
	}
	stdout, stderr, err := b.run(nil, "sessions", "--all")
	for _, w := range append(want, "work after recovery") {
		if err != nil || !strings.Contains(stdout, w) {
			t.Errorf("zero sessions --all should list %q: %v\n%s%s", w, err, stdout, stderr)
		}
	}
	if stdout, stderr, err := b.run(nil, "store", "check"); err != nil || !strings.Contains(stdout, " is sound: ") {
		t.Errorf("zero store check after recovery: %v\n%s%s", err, stdout, stderr)
	}
}

// Garbage over one page of the sessions table: the sessions on the other
// pages, with their events, and the memories come back.
func TestDamagedStorePagesSalvaged(t *testing.T) {
	t.Parallel()
	b := newBox(t, answer("answered first"), answer("answered second"), answer("answered while damaged"), answer("answered after"))
	path := b.storeFile()
	for _, task := range []string{"first task", "second task"} {
		if stdout, stderr, err := b.run(nil, "run", "--workspace", b.ws, task); err != nil {
			t.Fatalf("zero run: %v\n%s%s", err, stdout, stderr)
		}
	}
	if stdout, stderr, err := b.run(nil, "memory", "save", "--workspace", b.ws, "the build of this project uses make"); err != nil {
		t.Fatalf("zero memory save: %v\n%s%s", err, stdout, stderr)
	}
	// Many more sessions, as months of use leave, so that they fill
	// several pages; the two runs are on the first.
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Sessions(store.ListOptions{})
	if err != nil || len(runs) != 2 {
		t.Fatalf("the runs' sessions: %v, %v", runs, err)
	}
	const filled = 150
	for i := range filled {
		id := fmt.Sprintf("filled-%03d", i)
		if err := st.CreateSession(store.Session{ID: id, Workspace: b.ws, Roots: []string{b.ws}, Title: "filled session " + id + " about the build"}); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			st.AppendEvent(id, store.Event{Seq: int64(j + 1), Type: "response", Data: []byte(`{"type":"response","text":"an answer"}`)})
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	pages, rows := leafPages(t, path, "sessions")
	if len(pages) < 3 {
		t.Fatalf("the sessions fill %d pages; the test wants 3", len(pages))
	}
	mid := len(pages) / 2
	smashPage(t, path, pages[mid])

	b.expectDamageSaid("database disk image is malformed")
	out := b.recoverStore()
	m := regexp.MustCompile(`saved    (\d+) sessions .* and 1 memory\n  lost     (\d+) sessions and no memories that could not be read`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("zero store recover should say what it saved and lost:\n%s", out)
	}
	saved, _ := strconv.Atoi(m[1])
	lost, _ := strconv.Atoi(m[2])
	if saved != 2+filled-rows[mid] || lost != rows[mid] {
		t.Errorf("saved %d sessions and lost %d; want %d and the %d of the damaged page", saved, lost, 2+filled-rows[mid], rows[mid])
	}
	// The sessions of the undamaged pages: the runs (the first page) and
	// the newest (the last page), with their events.
	b.expectWorkingStore(runs[0].ID, runs[1].ID, "filled-149")
	for i, answer := range []string{"answered second", "answered first"} { // the newest first
		if stdout, stderr, err := b.run(nil, "sessions", "show", runs[i].ID); err != nil || !strings.Contains(stdout, "## Zero\n\n"+answer) {
			t.Errorf("zero sessions show of a salvaged run: %v\n%s%s", err, stdout, stderr)
		}
	}
	if stdout, stderr, err := b.run(nil, "memory", "search", "--workspace", b.ws, "build"); err != nil || !strings.Contains(stdout, "uses make") {
		t.Errorf("the salvaged memory should be found: %v\n%s%s", err, stdout, stderr)
	}
}

// Garbage over the header: nothing can be read, which zero store recover
// says; the new store is empty and works.
func TestDamagedStoreHeader(t *testing.T) {
	t.Parallel()
	b := newBox(t, answer("answered first"), answer("answered while damaged"), answer("answered after"))
	path := b.storeFile()
	if stdout, stderr, err := b.run(nil, "run", "--workspace", b.ws, "first task"); err != nil {
		t.Fatalf("zero run: %v\n%s%s", err, stdout, stderr)
	}
	if stdout, stderr, err := b.run(nil, "memory", "save", "--workspace", b.ws, "the build uses make"); err != nil {
		t.Fatalf("zero memory save: %v\n%s%s", err, stdout, stderr)
	}
	smashBytes(t, path, 0, bytes.Repeat([]byte{0x5a}, 100))

	b.expectDamageSaid("file is not a database")
	out := b.recoverStore()
	if !strings.Contains(out, "empty: nothing could be read from the damaged file (file is not a database)") {
		t.Errorf("zero store recover should say that nothing could be read:\n%s", out)
	}
	b.expectWorkingStore()
	if stdout, _, _ := b.run(nil, "sessions", "--all"); strings.Contains(stdout, "first task") {
		t.Errorf("nothing was read, yet the old session is listed:\n%s", stdout)
	}
}
