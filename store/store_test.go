package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openTest opens a store in a fresh temporary directory, closed (and
// checked) when the test ends.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func mustCreate(t testing.TB, s *Store, sess Session) {
	t.Helper()
	if err := s.CreateSession(sess); err != nil {
		t.Fatalf("CreateSession(%q): %v", sess.ID, err)
	}
}

func mustFlush(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// at is a fixed instant plus d seconds.
func at(d int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC).Add(time.Duration(d) * time.Second)
}

// timeEqual compares times by instant, as the store keeps them.
var timeEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	if got, err := DefaultPath(); err != nil || got != filepath.Join("/xdg/data", "zero", "zero.db") {
		t.Errorf("DefaultPath() = %q, %v; want under XDG_DATA_HOME", got, err)
	}
	for _, v := range []string{"", "relative/dir"} {
		t.Setenv("XDG_DATA_HOME", v)
		want := filepath.Join(home, ".local", "share", "zero", "zero.db")
		if got, err := DefaultPath(); err != nil || got != want {
			t.Errorf("XDG_DATA_HOME=%q: DefaultPath() = %q, %v; want %q", v, got, err, want)
		}
	}
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "zero.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("mode of %s = %v, want %v", p, fi.Mode(), want)
		}
	}
	var mode string
	if err := s.r.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	for _, c := range []struct {
		pragma string
		want   int
	}{{"synchronous", 1}, {"foreign_keys", 1}, {"busy_timeout", 5000}} {
		var got int
		if err := s.r.QueryRow(`PRAGMA ` + c.pragma).Scan(&got); err != nil || got != c.want {
			t.Errorf("reader PRAGMA %s = %d, %v; want %d", c.pragma, got, err, c.want)
		}
		if err := s.w.QueryRow(`PRAGMA ` + c.pragma).Scan(&got); err != nil || got != c.want {
			t.Errorf("writer PRAGMA %s = %d, %v; want %d", c.pragma, got, err, c.want)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	// '?', '#', '%' and spaces must not be taken for URI syntax.
	path := filepath.Join(t.TempDir(), "we?ird #dir%20", "z?e#r%o.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "x", Workspace: "/w"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at %s: %v", path, err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Session("x"); err != nil {
		t.Errorf("Session after reopen: %v", err)
	}
}

func TestSessionRoundTrip(t *testing.T) {
	s, _ := openTest(t)
	want := Session{
		ID: "s1", Workspace: "/home/u/p", Roots: []string{"/home/u/p", "/home/u/lib", ""},
		Profile: "coder", Model: "gpt", Title: "fix the bug",
		Created: at(0), Updated: at(1), Runs: 2, Settings: json.RawMessage(`{"allow":["read"]}`),
	}
	mustCreate(t, s, want)
	got, err := s.Session("s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("Session after create (-want +got):\n%s", diff)
	}
	if err := s.CreateSession(want); !errors.Is(err, ErrExists) {
		t.Errorf("CreateSession of an existing id = %v, want ErrExists", err)
	}
	if err := s.CreateSession(Session{}); err == nil {
		t.Error("CreateSession with an empty id: no error")
	}

	upd := want
	upd.Workspace = "/elsewhere" // not replaced
	upd.Created = at(100)        // not replaced
	upd.Roots = []string{"/home/u/p"}
	upd.Profile, upd.Model, upd.Title, upd.Runs = "p2", "m2", "t2", 3
	upd.Updated = at(5)
	upd.Settings = nil
	s.UpdateSession(upd)
	mustFlush(t, s)
	got, err = s.Session("s1")
	if err != nil {
		t.Fatal(err)
	}
	want2 := upd
	want2.Workspace, want2.Created = want.Workspace, want.Created
	if diff := cmp.Diff(want2, got, timeEqual); diff != "" {
		t.Errorf("Session after update (-want +got):\n%s", diff)
	}

	// Defaults: zero times mean now; no roots, no settings stay none.
	before := time.Now()
	mustCreate(t, s, Session{ID: "s2", Workspace: "/w"})
	got, err = s.Session("s2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Created.Before(before) || !got.Updated.Equal(got.Created) || got.Roots != nil || got.Settings != nil {
		t.Errorf("defaults: got %+v", got)
	}

	if _, err := s.Session("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(missing) = %v, want ErrNotFound", err)
	}
	s.UpdateSession(Session{ID: "nope"})
	if err := s.Flush(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Flush after UpdateSession(missing) = %v, want ErrNotFound", err)
	}
}

func TestSessionsListing(t *testing.T) {
	s, _ := openTest(t)
	mk := func(id, ws string, updated int) {
		mustCreate(t, s, Session{ID: id, Workspace: ws, Created: at(0), Updated: at(updated)})
	}
	mk("a1", "/a", 10)
	mk("b1", "/b", 20)
	mk("a2", "/a", 30)
	mk("a3", "/a", 5)
	// An event makes its session the most recent.
	s.AppendEvent("a3", Event{Seq: 1, Type: "x"})
	mustFlush(t, s)

	ids := func(o ListOptions) []string {
		t.Helper()
		ss, err := s.Sessions(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ss {
			out = append(out, x.ID)
		}
		return out
	}
	for _, c := range []struct {
		o    ListOptions
		want []string
	}{
		{ListOptions{}, []string{"a3", "a2", "b1", "a1"}},
		{ListOptions{Workspace: "/a"}, []string{"a3", "a2", "a1"}},
		{ListOptions{Workspace: "/a", Limit: 2}, []string{"a3", "a2"}},
		{ListOptions{Limit: 1}, []string{"a3"}},
		{ListOptions{Workspace: "/none"}, nil},
	} {
		if diff := cmp.Diff(c.want, ids(c.o)); diff != "" {
			t.Errorf("Sessions(%+v) (-want +got):\n%s", c.o, diff)
		}
	}
}

func TestEvents(t *testing.T) {
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w", Updated: at(0)})
	var want []Event
	buf := []byte(`{"i":1}`)
	for i := 1; i <= 20; i++ {
		e := Event{Seq: int64(i), Type: fmt.Sprint("t", i%3), Agent: i % 2, Data: buf}
		s.AppendEvent("s", e)
		want = append(want, Event{Seq: e.Seq, Type: e.Type, Agent: e.Agent, Data: fmt.Appendf(nil, `{"i":%d}`, i%10)})
		copy(buf, fmt.Sprintf(`{"i":%d}`, (i+1)%10)) // the store copied Data
	}
	s.AppendEvent("s", Event{Seq: 21}) // nil Data is stored as empty
	want = append(want, Event{Seq: 21, Data: []byte{}})
	mustFlush(t, s)

	for _, c := range []struct {
		since int64
		limit int
		want  []Event
	}{
		{0, 0, want},
		{5, 0, want[5:]},
		{5, 3, want[5:8]},
		{21, 0, nil},
	} {
		got, err := s.Events("s", c.since, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Events(since %d, limit %d) (-want +got):\n%s", c.since, c.limit, diff)
		}
	}
	for _, n := range []int{0, 1, 4, 100} {
		got, err := s.LastEvents("s", n)
		if err != nil {
			t.Fatal(err)
		}
		w := want[max(0, len(want)-n):]
		if n == 0 {
			w = nil
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("LastEvents(%d) (-want +got):\n%s", n, diff)
		}
	}
	sess, err := s.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.LastSeq != 21 || !sess.Updated.After(at(0)) {
		t.Errorf("after appends LastSeq = %d, Updated = %v; want 21 and now", sess.LastSeq, sess.Updated)
	}

	// A duplicate Seq and a missing session are reported by Flush, and
	// the queue goes on.
	s.AppendEvent("s", Event{Seq: 3, Type: "dup"})
	s.AppendEvent("missing", Event{Seq: 1})
	s.AppendEvent("s", Event{Seq: 22, Type: "after"})
	err = s.Flush()
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Flush after bad appends = %v, want errors", err)
	}
	if err := s.Flush(); err != nil {
		t.Errorf("second Flush = %v, want nil (errors are reported once)", err)
	}
	got, err := s.Events("s", 20, 0)
	if err != nil || len(got) != 2 || got[1].Type != "after" {
		t.Errorf("Events after bad appends = %+v, %v; want seq 21 and 22", got, err)
	}
	if sess, _ := s.Session("s"); sess.LastSeq != 22 {
		t.Errorf("LastSeq = %d, want 22", sess.LastSeq)
	}

	for _, f := range []func() error{
		func() error { _, err := s.Events("missing", 0, 0); return err },
		func() error { _, err := s.LastEvents("missing", 3); return err },
		func() error { _, err := s.LastEvents("missing", 0); return err },
	} {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Errorf("events of a missing session: %v, want ErrNotFound", err)
		}
	}
}

func TestHistory(t *testing.T) {
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	mustCreate(t, s, Session{ID: "empty", Workspace: "/w"})
	msgs := []Message{
		{N: 0, Topic: 0, Content: "hi"},
		{N: 1, Topic: 0, AI: true, Content: "hello", Tokens: 3},
		{N: 2, Topic: 1, Content: "next"},
	}
	for _, m := range msgs {
		s.AddMessage("s", 0, m)
	}
	s.AddMessage("s", 2, Message{N: 0, Content: "sub"})
	s.SetTokens("s", 0, 2, 7)
	msgs[2].Tokens = 7
	sums := []Summary{
		{ID: 1, Kind: "message", From: 1, To: 1, Content: "short", Tokens: 1},
		{ID: 2, Kind: "dropped", From: 0, To: 1},
	}
	for _, sm := range sums {
		s.AddSummary("s", 0, sm)
	}
	s.AddSummary("s", 5, Summary{ID: 1, Kind: "topic"})
	mustFlush(t, s)

	h, err := s.History("s", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(History{Messages: msgs, Summaries: sums}, h); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	agents, err := s.Agents("s")
	if err != nil || !slicesEqual(agents, []int{0, 2, 5}) {
		t.Errorf("Agents = %v, %v; want [0 2 5]", agents, err)
	}
	if h, err := s.History("s", 9); err != nil || h.Messages != nil || h.Summaries != nil {
		t.Errorf("History of an agent without one = %+v, %v; want empty", h, err)
	}
	if a, err := s.Agents("empty"); err != nil || a != nil {
		t.Errorf("Agents(empty) = %v, %v", a, err)
	}
	if _, err := s.History("missing", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("History(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.Agents("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Agents(missing) = %v, want ErrNotFound", err)
	}

	s.SetTokens("s", 0, 99, 1)
	s.AddMessage("s", 0, Message{N: 0, Content: "dup"})
	s.AddSummary("s", 0, Summary{ID: 1})
	if err := s.Flush(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "add message") ||
		!strings.Contains(err.Error(), "add summary") {
		t.Errorf("Flush after bad history writes = %v", err)
	}
}

func slicesEqual(a, b []int) bool { return cmp.Equal(a, b) }

func TestDeleteSession(t *testing.T) {
	s, _ := openTest(t)
	for _, id := range []string{"gone", "kept"} {
		mustCreate(t, s, Session{ID: id, Workspace: "/w"})
		s.AppendEvent(id, Event{Seq: 1, Data: []byte(`{}`)})
		s.AddMessage(id, 0, Message{N: 0, Content: "m"})
		s.AddSummary(id, 0, Summary{ID: 1, Kind: "topic"})
	}
	// Queued writes before the delete are ordered before it.
	if err := s.DeleteSession("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession("gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteSession = %v, want ErrNotFound", err)
	}
	for _, table := range []string{"sessions", "events", "messages", "summaries"} {
		for id, want := range map[string]int{"gone": 0, "kept": 1} {
			col := "session"
			if table == "sessions" {
				col = "id"
			}
			var n int
			if err := s.r.QueryRow(`SELECT count(*) FROM `+table+` WHERE `+col+` = ?`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Errorf("%s rows of %q = %d, want %d", table, id, n, want)
			}
		}
	}
	if err := s.Flush(); err != nil {
		t.Errorf("Flush = %v", err)
	}
}

// TestOrder queues 1,000 mixed writes and checks they were applied in
// call order.
func TestOrder(t *testing.T) {
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	var wantEvents []Event
	var wantMsgs []Message
	var wantSums []Summary
	title := ""
	for i := range 1000 {
		switch i % 5 {
		case 0, 1:
			e := Event{Seq: int64(i + 1), Type: "t", Agent: i % 3, Data: fmt.Appendf(nil, `{"i":%d}`, i)}
			s.AppendEvent("s", e)
			wantEvents = append(wantEvents, e)
		case 2:
			m := Message{N: len(wantMsgs), Topic: i, Content: fmt.Sprint(i)}
			s.AddMessage("s", 1, m)
			wantMsgs = append(wantMsgs, m)
		case 3:
			// Counts the message just added: fails unless ordered after it.
			n := len(wantMsgs) - 1
			s.SetTokens("s", 1, n, i)
			wantMsgs[n].Tokens = i
		case 4:
			title = fmt.Sprint("title ", i)
			s.UpdateSession(Session{ID: "s", Title: title, Runs: i})
			sm := Summary{ID: len(wantSums) + 1, Kind: "bulk", From: 0, To: i}
			s.AddSummary("s", 1, sm)
			wantSums = append(wantSums, sm)
		}
		if i%97 == 0 {
			// A synchronous call in the middle is ordered too.
			if err := s.Claim("s", os.Getpid()); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustFlush(t, s)
	evs, err := s.Events("s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantEvents, evs); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
	h, err := s.History("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(History{Messages: wantMsgs, Summaries: wantSums}, h); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	sess, err := s.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != title || sess.Runs != 999 || sess.LastSeq != wantEvents[len(wantEvents)-1].Seq {
		t.Errorf("session = %+v; want title %q, runs 999, last seq %d", sess, title, wantEvents[len(wantEvents)-1].Seq)
	}
}

// TestUpdatedOrder checks that an event's advance of Updated and an
// UpdateSession apply in call order within one batch.
func TestUpdatedOrder(t *testing.T) {
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w", Updated: at(0)})
	release := holdWriter(s)
	s.AppendEvent("s", Event{Seq: 1})
	s.UpdateSession(Session{ID: "s", Updated: at(-100)})
	release()
	mustFlush(t, s)
	if sess, _ := s.Session("s"); !sess.Updated.Equal(at(-100)) || sess.LastSeq != 1 {
		t.Errorf("Updated = %v, LastSeq = %d; want the later UpdateSession's %v and 1", sess.Updated, sess.LastSeq, at(-100))
	}
	release = holdWriter(s)
	s.UpdateSession(Session{ID: "s", Updated: at(-200)})
	s.AppendEvent("s", Event{Seq: 2})
	release()
	mustFlush(t, s)
	if sess, _ := s.Session("s"); !sess.Updated.After(at(0)) || sess.LastSeq != 2 {
		t.Errorf("Updated = %v, LastSeq = %d; want the later append's time and 2", sess.Updated, sess.LastSeq)
	}
}

// holdWriter keeps the writer goroutine busy until release is called, so
// that the writes queued meanwhile are committed in one batch.
func holdWriter(s *Store) (release func()) {
	held, c := make(chan struct{}), make(chan struct{})
	s.write("hold", "", false, func(*batch) error {
		close(held)
		<-c
		return nil
	})
	<-held
	return func() { close(c) }
}

func TestClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	for i := range 100 {
		s.AppendEvent("s", Event{Seq: int64(i + 1)})
	}
	s.AppendEvent("missing", Event{Seq: 1})
	if err := s.Close(); err == nil {
		t.Error("Close did not report the unflushed write error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := s.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if err := s.CreateSession(Session{ID: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateSession after Close = %v, want ErrClosed", err)
	}
	s.AppendEvent("s", Event{Seq: 1000}) // dropped, no panic

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events("s", 0, 0)
	if err != nil || len(evs) != 100 {
		t.Errorf("after Close and reopen: %d events, %v; want 100", len(evs), err)
	}
}

// TestConcurrentCallers queues from many goroutines at once (for -race).
func TestConcurrentCallers(t *testing.T) {
	s, _ := openTest(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			id := fmt.Sprint("s", g)
			if err := s.CreateSession(Session{ID: id, Workspace: "/w"}); err != nil {
				t.Error(err)
				return
			}
			for i := range 200 {
				s.AppendEvent(id, Event{Seq: int64(i + 1)})
				if i%50 == 0 {
					if err := s.Flush(); err != nil {
						t.Error(err)
					}
					if _, err := s.Sessions(ListOptions{}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	mustFlush(t, s)
	for g := range 8 {
		if evs, err := s.Events(fmt.Sprint("s", g), 0, 0); err != nil || len(evs) != 200 {
			t.Errorf("session %d: %d events, %v", g, len(evs), err)
		}
	}
}

func TestHostileInput(t *testing.T) {
	s, _ := openTest(t)
	odd := "nul\x00byte, bad utf8 \xff\xfe, quote ' \" ; -- \n end"
	ids := []string{"'; DROP TABLE sessions; --", odd, "%", "_", `\`}
	for _, id := range ids {
		want := Session{ID: id, Workspace: odd, Roots: []string{strings.ReplaceAll(odd, "\x00", ""), "\xc3\x28"}, Profile: odd, Model: odd, Title: odd,
			Created: at(0), Updated: at(0)}
		mustCreate(t, s, want)
		got, err := s.Session(id)
		if err != nil {
			t.Fatalf("Session(%q): %v", id, err)
		}
		if diff := cmp.Diff(want, got, timeEqual); diff != "" {
			t.Errorf("Session(%q) (-want +got):\n%s", id, diff)
		}
	}
	all, err := s.Sessions(ListOptions{Workspace: odd})
	if err != nil || len(all) != len(ids) {
		t.Errorf("Sessions(odd workspace) = %d sessions, %v; want %d", len(all), err, len(ids))
	}
	if _, err := s.Session("%"); err != nil {
		t.Error(err)
	}
	if err := s.CreateSession(Session{ID: "r", Roots: []string{"a\x00b"}}); err == nil {
		t.Error("a root with a NUL byte was accepted")
	}

	id := ids[0]
	huge := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	huge[12345] = 0
	evs := []Event{
		{Seq: 1, Type: odd, Agent: -1, Data: huge},
		{Seq: 2, Type: "bin", Data: []byte{0, 0xff, '\'', 0}},
	}
	for _, e := range evs {
		s.AppendEvent(id, e)
	}
	s.AddMessage(id, 0, Message{N: 0, Content: odd})
	s.AddSummary(id, 0, Summary{ID: 1, Kind: odd, Content: odd})
	mustFlush(t, s)
	got, err := s.Events(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0].Data, huge) || got[0].Type != odd || !bytes.Equal(got[1].Data, evs[1].Data) {
		t.Errorf("hostile events did not round-trip (%d events)", len(got))
	}
	h, err := s.History(id, 0)
	if err != nil || len(h.Messages) != 1 || h.Messages[0].Content != odd || h.Summaries[0].Kind != odd {
		t.Errorf("hostile history = %+v, %v", h, err)
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != len(ids) {
		t.Errorf("sessions table: %d rows, %v", n, err)
	}
	if err := s.DeleteSession(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ids[1]); err != nil {
		t.Errorf("deleting %q touched another session: %v", id, err)
	}
}

func TestSettingsMustBeJSON(t *testing.T) {
	s, _ := openTest(t)
	if err := s.CreateSession(Session{ID: "s", Settings: json.RawMessage(`{bad`)}); err == nil {
		t.Error("CreateSession with invalid settings: no error")
	}
	mustCreate(t, s, Session{ID: "s"})
	s.UpdateSession(Session{ID: "s", Settings: json.RawMessage(`nope`)})
	if err := s.Flush(); err == nil {
		t.Error("UpdateSession with invalid settings: Flush reported nothing")
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }

func TestClearHistory(t *testing.T) {
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "s", Workspace: "/w"})
	s.AppendEvent("s", Event{Seq: 1})
	s.AddMessage("s", 0, Message{N: 0, Content: "old"})
	s.AddSummary("s", 0, Summary{ID: 1, Kind: "topic"})
	s.ClearHistory("s")
	s.AddMessage("s", 1, Message{N: 0, Content: "new"})
	mustFlush(t, s)
	if a, err := s.Agents("s"); err != nil || !cmp.Equal(a, []int{1}) {
		t.Errorf("Agents after ClearHistory = %v, %v; want [1]", a, err)
	}
	if evs, err := s.Events("s", 0, 0); err != nil || len(evs) != 1 {
		t.Errorf("ClearHistory touched the event log: %d events, %v", len(evs), err)
	}
}

func TestWriteErrorsAreLogged(t *testing.T) {
	var buf syncBuffer
	s, err := OpenWith(filepath.Join(t.TempDir(), "zero.db"), OpenOptions{
		Logger: slog.New(slog.NewTextHandler(&buf, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddMessage("ghost", 0, Message{N: 0, Content: "secret content"})
	if err := s.Flush(); err == nil {
		t.Fatal("Flush: no error for a message of a missing session")
	}
	out := buf.String()
	if !strings.Contains(out, "store write failed") || !strings.Contains(out, "ghost") {
		t.Errorf("log = %q, want the failed write", out)
	}
	if strings.Contains(out, "secret content") {
		t.Errorf("log = %q: it holds the content", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
