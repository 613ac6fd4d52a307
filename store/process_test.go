package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as a child process: helperEnv selects what it
// does (see TestMain).
const helperEnv = "ZERO_STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "writer":
		os.Exit(writerChild(os.Getenv("ZERO_STORE_TEST_DB")))
	case "sleep":
		time.Sleep(time.Minute) // killed by the parent long before
		os.Exit(0)
	case "exit":
		os.Exit(0)
	case "claim": // claims session "s", says so, and waits to be killed
		s, err := Open(os.Getenv("ZERO_STORE_TEST_DB"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := s.Claim("s", os.Getpid()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("claimed")
		time.Sleep(time.Minute)
		os.Exit(0)
	default:
		os.Exit(2)
	}
}

// writerChild appends events to session "s" of the database at path
// forever, printing "flushed N" after each Flush that committed events
// 1..N, until it is killed.
func writerChild(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	data := []byte(`{"type":"token","text":"` + strings.Repeat("x", 250) + `"}`)
	for seq := int64(1); ; seq++ {
		s.AppendEvent("s", Event{Seq: seq, Type: "token", Data: data})
		if seq%10 == 0 {
			s.AddMessage("s", 0, Message{N: int(seq / 10), Content: "m"})
		}
		if seq%100 == 0 {
			if err := s.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Printf("flushed %d\n", seq)
		}
	}
}

// helper starts the test binary as the child process kind.
func helper(t *testing.T, kind string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+kind)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestDurabilityAfterSIGKILL kills a writing process right after a Flush
// (Process.Kill: SIGKILL on Unix, TerminateProcess on Windows) and checks
// that everything it flushed is there, in a sound database.
func TestDurabilityAfterSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := helper(t, "writer", "ZERO_STORE_TEST_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var flushed int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		n, err := strconv.ParseInt(strings.TrimPrefix(sc.Text(), "flushed "), 10, 64)
		if err != nil {
			t.Fatalf("child said %q", sc.Text())
		}
		if flushed = n; flushed >= 3000 {
			break
		}
	}
	// Kill it while it keeps writing: it is between two appends, two
	// flushes or in the middle of a commit.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if flushed < 3000 {
		t.Fatalf("child stopped after flushing %d events", flushed)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var check string
	if err := s.r.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	var fk int
	if err := s.r.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil || fk != 0 {
		t.Errorf("foreign_key_check: %d rows, %v", fk, err)
	}
	evs, err := s.Events("s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(evs)) < flushed {
		t.Fatalf("%d events after the kill, want at least the %d flushed", len(evs), flushed)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: a hole in the log", i, e.Seq)
		}
	}
	sess, err := s.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.LastSeq != int64(len(evs)) {
		t.Errorf("LastSeq = %d, but %d events are stored", sess.LastSeq, len(evs))
	}
	t.Logf("flushed %d, found %d (lost only unflushed writes: %d)", flushed, len(evs), int64(len(evs))-flushed)
}

// TestTwoStoresOneFile writes from two Stores on one file at once, as two
// processes would.
func TestTwoStoresOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	var stores [2]*Store
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range stores {
		// Open at once too: both race to create the schema.
		wg.Go(func() {
			s, err := OpenWith(path, OpenOptions{})
			stores[i] = s
			errs <- err
		})
	}
	wg.Wait()
	for range stores {
		if err := <-errs; err != nil {
			t.Fatalf("Open: %v", err)
		}
	}
	mustCreate(t, stores[0], Session{ID: "shared", Workspace: "/w"})
	const n = 2000
	for i, s := range stores {
		wg.Go(func() {
			own := fmt.Sprint("own", i)
			if err := s.CreateSession(Session{ID: own, Workspace: "/w"}); err != nil {
				t.Error(err)
				return
			}
			for k := range n {
				s.AppendEvent(own, Event{Seq: int64(k + 1), Data: []byte(`{}`)})
				// Interleaved seqs in the shared session: 1,3,5... and 2,4,6...
				s.AppendEvent("shared", Event{Seq: int64(2*k + 1 + i), Data: []byte(`{}`)})
				s.AddMessage(own, 0, Message{N: k})
				if k%100 == 0 {
					if err := s.Flush(); err != nil {
						t.Error(err)
					}
					if _, err := s.Sessions(ListOptions{}); err != nil {
						t.Error(err)
					}
				}
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, want := range map[string]int{"own0": n, "own1": n, "shared": 2 * n} {
		evs, err := s.Events(id, 0, 0)
		if err != nil || len(evs) != want {
			t.Errorf("%s: %d events, %v; want %d", id, len(evs), err, want)
			continue
		}
		for k, e := range evs {
			if e.Seq != int64(k+1) {
				t.Errorf("%s: event %d has seq %d", id, k, e.Seq)
				break
			}
		}
	}
	if sess, err := s.Session("shared"); err != nil || sess.LastSeq != 2*n {
		t.Errorf("shared LastSeq = %d, %v; want %d", sess.LastSeq, err, 2*n)
	}
}

func TestClaim(t *testing.T) {
	s, path := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	me := os.Getpid()
	if err := s.Claim("s", me); err != nil {
		t.Fatalf("first Claim: %v", err)
	}
	if err := s.Claim("s", me); err != nil {
		t.Errorf("Claim again by the holder: %v", err)
	}
	if err := s.Claim("missing", me); !errors.Is(err, ErrNotFound) {
		t.Errorf("Claim(missing) = %v, want ErrNotFound", err)
	}
	if err := s.Release("missing", me); err != nil {
		t.Errorf("Release(missing) = %v, want nil", err)
	}
	// Another Store (as another process would) is refused, told who holds
	// it, and cannot delete it either.
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = other.Claim("s", me+1)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), strconv.Itoa(me)) {
		t.Errorf("Claim of a held session = %v, want ErrBusy naming pid %d", err, me)
	}
	if err := other.DeleteSession("s"); !errors.Is(err, ErrBusy) {
		t.Errorf("DeleteSession of a held session = %v, want ErrBusy", err)
	}
	// Released, it is the other's.
	if err := s.Release("s", me); err != nil {
		t.Fatal(err)
	}
	if err := other.Claim("s", me+1); err != nil {
		t.Fatalf("Claim after Release: %v", err)
	}
	if err := s.Claim("s", me); !errors.Is(err, ErrBusy) {
		t.Errorf("Claim back = %v, want ErrBusy", err)
	}
	// Close drops every claim.
	other.Close()
	if err := s.Claim("s", me); err != nil {
		t.Fatalf("Claim after the holder closed: %v", err)
	}
	// A row naming a live pid (a reused pid, or one of another pid
	// namespace) without the lock is no claim.
	if err := s.Release("s", me); err != nil {
		t.Fatal(err)
	}
	third, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if err := third.Claim("s", os.Getppid()); err != nil {
		t.Fatal(err)
	}
	third.Close()
	if err := s.Claim("s", me); err != nil {
		t.Errorf("Claim of a session whose row names a live pid but no one holds: %v", err)
	}
	if err := s.DeleteSession("s"); err != nil {
		t.Errorf("DeleteSession by the holder: %v", err)
	}
}

// TestClaimOfAKilledProcess: the claim of a process killed with SIGKILL is
// gone with it, whoever has its pid next.
func TestClaimOfAKilledProcess(t *testing.T) {
	s, path := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	child := helper(t, "claim", "ZERO_STORE_TEST_DB="+path)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "claimed\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	err = s.Claim("s", os.Getpid())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), strconv.Itoa(child.Process.Pid)) {
		t.Fatalf("Claim while the child holds it = %v, want ErrBusy naming its pid", err)
	}
	child.Process.Kill()
	child.Wait()
	if err := s.Claim("s", os.Getpid()); err != nil {
		t.Fatalf("Claim after the holder was killed: %v", err)
	}
}

// TestClaimRace lets two Stores (as two processes) claim a session at once:
// exactly one wins.
func TestClaimRace(t *testing.T) {
	s1, path := openTest(t)
	mustCreate(t, s1, Session{ID: "s", Workspace: "/w"})
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() { errs[0] = s1.Claim("s", os.Getpid()) })
	wg.Go(func() { errs[1] = s2.Claim("s", os.Getpid()) })
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Errorf("claims = %v, %v; want exactly one to win", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, ErrBusy) {
			t.Errorf("losing claim = %v, want ErrBusy", err)
		}
	}
}

// TestLockedByAnotherWriter holds the write lock from another connection
// (as another process would): a short hold is waited out by retries; a
// long one fails the synchronous calls and the Flushes made meanwhile, and
// the queued writes wait, in order, until the lock is gone: none is lost,
// so a session never gets a hole.
func TestLockedByAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := OpenWith(path, OpenOptions{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	other := rawDB(t, path)

	tx, err := other.Begin() // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(150*time.Millisecond, func() { tx.Rollback() })
	s.AppendEvent("s", Event{Seq: 1})
	if err := s.Flush(); err != nil {
		t.Errorf("Flush after a short lock = %v, want it waited out", err)
	}

	tx, err = other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	s.AppendEvent("s", Event{Seq: 2})
	err = s.CreateSession(Session{ID: "t", Workspace: "/w"})
	if !isBusy(err) {
		t.Errorf("CreateSession under a long lock = %v, want SQLITE_BUSY", err)
	}
	if err := s.Flush(); !isBusy(err) {
		t.Errorf("Flush under a long lock = %v, want SQLITE_BUSY (the append is not written yet)", err)
	}
	tx.Rollback()
	s.AppendEvent("s", Event{Seq: 3})
	mustFlush(t, s)
	evs, err := s.Events("s", 0, 0)
	if err != nil || len(evs) != 3 || evs[0].Seq != 1 || evs[1].Seq != 2 || evs[2].Seq != 3 {
		t.Errorf("events = %+v, %v; want seq 1, 2 and 3: the append made under the lock is kept", evs, err)
	}
}

// Close does not wait for ever for a database another process keeps
// locked: the writes it could not make are reported as lost.
func TestCloseUnderALongLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := OpenWith(path, OpenOptions{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	other := rawDB(t, path)
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	s.AppendEvent("s", Event{Seq: 1})
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "lost at close") {
		t.Fatalf("Close under a lock = %v, want the lost write reported", err)
	}
}
