package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/zeroagent/zero/memory"
)

// importCommand imports folders of documents into a scope's memory as
// knowledge (zero memory import DIR...).
func importCommand(ctx context.Context, svc *memory.Service, scope string, dirs []string, stdout, stderr io.Writer) int {
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "zero memory import: want the folder to import")
		return 2
	}
	code := 0
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			return 2
		}
		// Imported by hand: named apart from the knowledge folders Zero syncs.
		rep, err := svc.Import(ctx, memory.KnowledgeDir{Path: abs, Scope: scope, Prefix: "import:" + abs + "/"})
		if err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %d added, %d updated, %d removed, %d unchanged (%d chunks)\n", d, rep.Added, rep.Updated, rep.Removed, rep.Unchanged, rep.Chunks)
		for _, s := range rep.Skipped {
			fmt.Fprintln(stderr, "skipped", s)
		}
	}
	return code
}
