package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/memory"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func find(t *testing.T, svc *memory.Service, query string) []memory.Hit {
	t.Helper()
	hits, err := svc.Search(context.Background(), memory.Query{Text: query, Scopes: []string{ws, ""}})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestImportKnowledge(t *testing.T) {
	svc := memory.New(memory.Options{Store: openStore(t)})
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "runbook.md"), "# Runbook\n\nThe database backups run nightly at 02:00 from the cron host named otter.\n")
	write(t, filepath.Join(dir, "solutions", "flaky.txt"), "The flaky login test is fixed by clearing the redis cache before the suite.\n")
	write(t, filepath.Join(dir, "page.html"), "<html><head><script>var secret = 'no';</script></head><body><h1>Pager</h1><p>The pager rotation changes every Monday at noon.</p></body></html>")
	write(t, filepath.Join(dir, ".hidden", "x.md"), "hidden notes about the cron host")
	if err := os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 3, 0, 0, 255}, 0o644); err != nil {
		t.Fatal(err)
	}
	// A link out of the folder (a cloned repository pointing at your keys) is not followed.
	outside := filepath.Join(t.TempDir(), "id_rsa")
	write(t, outside, "PRIVATE KEY material about the cron host")
	if err := os.Symlink(outside, filepath.Join(dir, "key.md")); err != nil {
		t.Fatal(err)
	}
	kd := memory.KnowledgeDir{Path: dir, Scope: ws, Prefix: "k:"}

	rep, err := svc.Import(ctx, kd)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 3 || rep.Chunks < 3 {
		t.Fatalf("first import: %+v", rep)
	}
	skipped := strings.Join(rep.Skipped, "\n")
	if !strings.Contains(skipped, "blob.bin") || !strings.Contains(skipped, "key.md") {
		t.Errorf("skipped: %s", skipped)
	}
	hits := find(t, svc, "when do the database backups run?")
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "02:00") || hits[0].Source != "k:runbook.md" || hits[0].Area != memory.AreaMain {
		t.Fatalf("backups: %+v", hits)
	}
	if h := find(t, svc, "flaky login test fix"); len(h) == 0 || h[0].Area != memory.AreaSolutions {
		t.Fatalf("solutions/ goes to the solutions area: %+v", h)
	}
	if h := find(t, svc, "pager rotation monday"); len(h) == 0 || strings.Contains(h[0].Text, "secret") {
		t.Fatalf("html: %+v", h)
	}
	for _, h := range find(t, svc, "cron host otter private key hidden notes") {
		if strings.Contains(h.Text, "PRIVATE KEY") || strings.Contains(h.Text, "hidden notes") {
			t.Fatalf("imported what it must not: %q", h.Text)
		}
	}

	// Unchanged: nothing is read again.
	if rep, err = svc.Import(ctx, kd); err != nil || rep.Unchanged != 3 || rep.Added+rep.Updated+rep.Removed != 0 {
		t.Fatalf("second import: %+v, %v", rep, err)
	}
	// Changed: the old text goes, the new comes.
	write(t, filepath.Join(dir, "runbook.md"), "# Runbook\n\nThe database backups now run hourly from the cron host named badger.\n")
	if rep, err = svc.Import(ctx, kd); err != nil || rep.Updated != 1 {
		t.Fatalf("after a change: %+v, %v", rep, err)
	}
	hits = find(t, svc, "when do the database backups run?")
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "badger") {
		t.Fatalf("the new text: %+v", hits)
	}
	for _, h := range hits {
		if strings.Contains(h.Text, "otter") {
			t.Fatalf("the old text is still there: %q", h.Text)
		}
	}
	// Deleted: its memory disappears.
	if err := os.Remove(filepath.Join(dir, "runbook.md")); err != nil {
		t.Fatal(err)
	}
	if rep, err = svc.Import(ctx, kd); err != nil || rep.Removed != 1 {
		t.Fatalf("after a removal: %+v, %v", rep, err)
	}
	if h := find(t, svc, "when do the database backups run?"); len(h) != 0 {
		t.Fatalf("a deleted file's memory stays: %+v", h)
	}
	// The whole folder gone: all of it goes.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if rep, err = svc.Import(ctx, kd); err != nil || rep.Removed != 2 {
		t.Fatalf("folder gone: %+v, %v", rep, err)
	}
}

// TestImportTwiceAtOnce: two sessions opening the same workspace import its
// knowledge at the same time; each file's chunks end up there once.
func TestImportTwiceAtOnce(t *testing.T) {
	svc := memory.New(memory.Options{Store: openStore(t)})
	dir := t.TempDir()
	for i := range 20 {
		write(t, filepath.Join(dir, fmt.Sprintf("note%02d.md", i)), fmt.Sprintf("Note %d says the build server number %d is named heron%d.\n", i, i, i))
	}
	kd := memory.KnowledgeDir{Path: dir, Scope: ws, Prefix: "k:"}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := svc.Import(context.Background(), kd)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ms, err := svc.List([]string{ws}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]int{}
	for _, m := range ms {
		sources[m.Source]++
	}
	if len(ms) != 20 || len(sources) != 20 {
		t.Fatalf("%d chunks from %d files after two imports at once, want 20 from 20: %v", len(ms), len(sources), sources)
	}
	rep, err := svc.Import(context.Background(), kd)
	if err != nil || rep.Unchanged != 20 || rep.Added+rep.Updated+rep.Removed != 0 {
		t.Fatalf("a third import: %+v, %v", rep, err)
	}
}
