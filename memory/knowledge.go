package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/zeroagent/zero/document"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/store"
)

// Knowledge import bounds: a knowledge folder may be a repository someone
// else wrote.
const (
	// ChunkTokens and ChunkOverlap size the pieces a document is cut into.
	ChunkTokens  = 400
	ChunkOverlap = 50
	// MaxKnowledgeFiles bounds the files one folder imports.
	MaxKnowledgeFiles = 10000
	// MaxKnowledgeDepth bounds how deep the folders go.
	MaxKnowledgeDepth = 16
)

// KnowledgeDir is a folder imported into a scope's memory.
type KnowledgeDir struct {
	Path  string // absolute
	Scope string // "" the user's memory, else a workspace
	// Prefix names the files' source apart from other folders of the scope
	// ("user:", "profile:researcher/", ".zero/knowledge/"); it must not be
	// empty, and no folder's may begin another's.
	Prefix string
	// Exclude are files (relative to Path) not to import: a trusted copy
	// of a workspace's folder has its symbolic links' targets as files.
	Exclude map[string]bool
}

// ImportReport says what an import did.
type ImportReport struct {
	Added, Updated, Removed, Unchanged int
	Chunks                             int      // chunks saved
	Skipped                            []string // files not imported, with why
}

// Import brings dir into its scope's memory as Agent Zero imports knowledge:
// each file's text, cut into chunks, in the area its first folder names
// (main, fragments or solutions; files at the top go to main), with the
// file's path as source. Each file is read once; it is parsed and saved
// again only when its SHA-256 changed since the last import, and the chunks
// of a file that is gone are removed.
// Symbolic links are not followed, hidden files and folders are skipped,
// and files Zero cannot read as text (binaries, too large) are reported in
// Skipped.
func (s *Service) Import(ctx context.Context, dir KnowledgeDir) (ImportReport, error) {
	var rep ImportReport
	if dir.Prefix == "" {
		return rep, errors.New("import knowledge: no source prefix")
	}
	defer s.importing()()
	known, err := s.st.KnowledgeFiles(dir.Scope)
	if err != nil {
		return rep, err
	}
	seen := map[string]bool{}
	root, err := os.OpenRoot(dir.Path)
	if errors.Is(err, fs.ErrNotExist) {
		root = nil // a folder that went away: everything it had goes
	} else if err != nil {
		return rep, fmt.Errorf("import %s: %w", dir.Path, err)
	}
	if root != nil {
		defer root.Close()
		files, skipped := knowledgeFiles(root.FS())
		rep.Skipped = append(rep.Skipped, skipped...)
		for _, rel := range files {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			if dir.Exclude[rel] {
				rep.Skipped = append(rep.Skipped, rel+": a symbolic link")
				continue
			}
			source := dir.Prefix + rel
			seen[source] = true
			content, err := readKnowledgeFile(root, rel)
			if err != nil {
				rep.Skipped = append(rep.Skipped, rel+": "+err.Error())
				continue
			}
			h := sha256.Sum256(content)
			sum := hex.EncodeToString(h[:])
			prev, had := known[source]
			if had && prev.Checksum == sum {
				rep.Unchanged++
				continue
			}
			text, err := document.Extract(rel, content, document.Options{})
			if err != nil {
				rep.Skipped = append(rep.Skipped, rel+": "+err.Error())
				if had { // it was imported; what it says now cannot be read
					if _, err := s.st.DeleteKnowledgeFile(dir.Scope, source); err != nil {
						return rep, err
					}
				}
				continue
			}
			chunks := document.Chunk(text, ChunkTokens, ChunkOverlap, llm.CountTokens)
			area := knowledgeArea(rel)
			ms := make([]Memory, len(chunks))
			for i, c := range chunks {
				ms[i] = Memory{Area: area, Text: c, Meta: map[string]any{"source": source, "knowledge_source": true, "chunk": i}}
			}
			if err := s.st.ReplaceKnowledgeFile(dir.Scope, store.KnowledgeFile{Path: source, Checksum: sum}, ms); err != nil {
				return rep, err
			}
			rep.Chunks += len(ms)
			if had {
				rep.Updated++
			} else {
				rep.Added++
			}
		}
	}
	for source := range known {
		if !seen[source] && strings.HasPrefix(source, dir.Prefix) {
			if _, err := s.st.DeleteKnowledgeFile(dir.Scope, source); err != nil {
				return rep, err
			}
			rep.Removed++
		}
	}
	if s.emb != nil && rep.Chunks > 0 {
		if _, err := s.Embed(ctx, []string{dir.Scope}); err != nil {
			s.log.Warn("memory: embedding imported knowledge failed; it is found by keywords", "err", err)
		}
	}
	return rep, nil
}

// knowledgeFiles lists the regular files of fsys, sorted, not following
// symbolic links, skipping hidden names, at most MaxKnowledgeFiles.
func knowledgeFiles(fsys fs.FS) (files, skipped []string) {
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped = append(skipped, p+": "+err.Error())
			return nil
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(p, "/") >= MaxKnowledgeDepth {
				skipped = append(skipped, p+": deeper than "+fmt.Sprint(MaxKnowledgeDepth)+" folders")
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() { // symbolic links, sockets, devices
			skipped = append(skipped, p+": not a regular file")
			return nil
		}
		if len(files) == MaxKnowledgeFiles {
			skipped = append(skipped, p+": more than "+fmt.Sprint(MaxKnowledgeFiles)+" files")
			return fs.SkipAll
		}
		files = append(files, p)
		return nil
	})
	slices.Sort(files)
	return files, skipped
}

// knowledgeArea is Agent Zero's: a file under main/, fragments/ or
// solutions/ goes to that area, any other to main.
func knowledgeArea(rel string) string {
	first, _, found := strings.Cut(rel, "/")
	if found {
		switch first {
		case AreaMain, AreaFragments, AreaSolutions:
			return first
		}
	}
	return AreaMain
}

// readKnowledgeFile reads a regular file of root (through the root: a link
// swapped in meanwhile cannot lead out of the folder), at most
// document.DefaultMaxBytes of it.
func readKnowledgeFile(root *os.Root, rel string) ([]byte, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > document.DefaultMaxBytes {
		return nil, fmt.Errorf("%w (%d bytes)", document.ErrTooLarge, fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, document.DefaultMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > document.DefaultMaxBytes {
		return nil, document.ErrTooLarge
	}
	return b, nil
}
