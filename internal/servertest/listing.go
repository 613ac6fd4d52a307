package servertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// Listing is every file and folder under dir, .git included, by its
// slash-separated path: a file's content, or "/" for a folder (its path
// ending with "/"). Two listings are equal when the trees are, byte for
// byte (what an undo must leave).
func Listing(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			out[rel+"/"] = "/"
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// RequestText is a recorded request's messages as "role: content" lines.
func RequestText(r llmtest.Recorded) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(string(m.Role) + ": " + m.Content + "\n")
	}
	return b.String()
}
