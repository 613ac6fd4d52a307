package store

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func storeImage(data string) Image {
	sum := sha256.Sum256([]byte(data))
	return Image{Hash: hex.EncodeToString(sum[:]), MIME: "image/png", Width: 2, Height: 3, Name: "a.png", Data: []byte(data)}
}

func imageRows(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM images`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An image named by many messages of many sessions is kept once, read back
// with its data, and goes when no message names it any more; one whose
// bytes no longer match its hash reads back without data.
func TestImagesKeptOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	mustCreate(t, s, Session{ID: "a", Workspace: "/w"})
	mustCreate(t, s, Session{ID: "b", Workspace: "/w"})
	pic, other := storeImage("picture"), storeImage("other")
	s.AddMessage("a", 0, Message{N: 0, Content: "look", Images: []Image{pic}})
	s.AddMessage("a", 0, Message{N: 1, Content: "again", Images: []Image{pic, other}})
	s.AddMessage("b", 0, Message{N: 0, Content: "same", Images: []Image{pic}})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := imageRows(t, s); n != 2 {
		t.Fatalf("%d image rows, want 2", n)
	}
	h, err := s.History("a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Messages[1].Images; len(got) != 2 || string(got[0].Data) != "picture" || string(got[1].Data) != "other" || got[0].Name != "a.png" || got[0].Width != 2 {
		t.Fatalf("read back %+v", got)
	}
	if err := s.DeleteSession("a"); err != nil {
		t.Fatal(err)
	}
	if n := imageRows(t, s); n != 1 {
		t.Errorf("%d image rows after deleting a, want b's one", n)
	}
	if _, err := s.w.Exec(`UPDATE images SET data = ?`, []byte("tampered")); err != nil {
		t.Fatal(err)
	}
	h, err = s.History("b", 0)
	if err != nil {
		t.Fatal(err)
	}
	if im := h.Messages[0].Images; len(im) != 1 || im[0].Data != nil {
		t.Errorf("a damaged image reads back as %+v, want no data", im)
	}
	s.ClearHistory("b")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := imageRows(t, s); n != 0 {
		t.Errorf("%d image rows after clearing the last history naming one", n)
	}
}
