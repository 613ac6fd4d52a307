package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// Checkpoints are kept per session (a later one with an ID replaces it),
// and deleted with the session; TruncateHistory
// takes the history back to a count of messages and summaries.
func TestCheckpointsAndTruncate(t *testing.T) {
	s, _ := openTest(t)
	if err := s.CreateSession(Session{ID: "s1", Workspace: "/w"}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	for i := 1; i <= 3; i++ {
		s.PutCheckpoint("s1", Checkpoint{ID: i, Run: i, Created: now, Data: json.RawMessage(`{"before":"x"}`)})
	}
	s.PutCheckpoint("s1", Checkpoint{ID: 2, Run: 2, Created: now, Data: json.RawMessage(`{"before":"x","after":"y"}`)})
	for n := range 6 {
		s.AddMessage("s1", 0, Message{N: n, Content: "m", Images: []Image{storeImage("png")}})
	}
	s.AddSummary("s1", 0, Summary{ID: 1, Kind: "topic", From: 0, To: 1, Content: "sum"})
	s.AddSummary("s1", 0, Summary{ID: 2, Kind: "topic", From: 2, To: 4, Content: "sum2"})
	s.TruncateHistory("s1", 0, 3, 1)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	cps, err := s.Checkpoints("s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 3 || cps[1].ID != 2 || string(cps[1].Data) != `{"before":"x","after":"y"}` || !cps[0].Created.Equal(now) {
		t.Fatalf("checkpoints = %+v", cps)
	}
	h, err := s.History("s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 3 || len(h.Summaries) != 1 || len(h.Messages[2].Images) != 1 || string(h.Messages[2].Images[0].Data) != "png" {
		t.Fatalf("history after truncating = %+v", h)
	}
	all, err := s.AllCheckpoints()
	if err != nil || len(all) != 3 {
		t.Fatalf("AllCheckpoints = %d, %v", len(all), err)
	}
	if _, err := s.Checkpoints("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Checkpoints of no session = %v", err)
	}
	if err := s.DeleteSession("s1"); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.AllCheckpoints(); len(all) != 0 {
		t.Errorf("checkpoints outlived their session: %d", len(all))
	}
}
