package checkpoint

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Prune deletes the manifests whose ids are not in keep, and the objects
// that no remaining manifest names. The newest manifest of each root (the
// one roots/ names, which the next Take uses as its stat cache) is always
// kept, with its objects. Leftover temporary files are removed too. It
// returns how many manifests and objects it deleted and the bytes freed.
//
// Prune waits for running Takes, Changes and Restores (of any process) to
// end, and they wait for it.
func (s *Store) Prune(keep []string) (manifests, objects int, freed int64, err error) {
	unlock, err := s.lock(context.Background(), true)
	if err != nil {
		return 0, 0, 0, err
	}
	defer unlock()

	keepSet := map[string]bool{}
	for _, id := range keep {
		if validID(id) {
			keepSet[id] = true
		}
	}
	if des, err := os.ReadDir(filepath.Join(s.dir, "roots")); err == nil {
		for _, de := range des {
			b, err := os.ReadFile(filepath.Join(s.dir, "roots", de.Name()))
			if err != nil {
				continue
			}
			var ix rootIndex
			if json.Unmarshal(b, &ix) == nil && validID(ix.Manifest) {
				keepSet[ix.Manifest] = true
			}
		}
	}

	// The objects the kept manifests name. A kept manifest that cannot be
	// read stops the prune: its objects cannot be told apart.
	live := map[[32]byte]bool{}
	for id := range keepSet {
		es, err := s.loadManifest(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, 0, err
		}
		for i := range es {
			if es[i].Kind == kFile {
				live[es[i].Hash] = true
			}
		}
	}

	mdir := filepath.Join(s.dir, "manifests")
	des, err := os.ReadDir(mdir)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, de := range des {
		id := de.Name()
		if !validID(id) || keepSet[id] {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(mdir, id)); err == nil {
			manifests++
			freed += fi.Size()
		}
	}

	odir := filepath.Join(s.dir, "objects")
	subs, err := os.ReadDir(odir)
	if err != nil {
		return manifests, 0, freed, err
	}
	for _, sub := range subs {
		if !sub.IsDir() || len(sub.Name()) != 2 {
			continue
		}
		des, err := os.ReadDir(filepath.Join(odir, sub.Name()))
		if err != nil {
			continue
		}
		for _, de := range des {
			var h [32]byte
			if n, err := hex.Decode(h[:], []byte(sub.Name()+de.Name())); err != nil || n != 32 {
				continue
			}
			if live[h] {
				continue
			}
			fi, err := de.Info()
			if err != nil {
				continue
			}
			if err := os.Remove(filepath.Join(odir, sub.Name(), de.Name())); err == nil {
				objects++
				freed += fi.Size()
			}
		}
	}

	// Nothing is being written now: whatever is in tmp/ is left over.
	tdir := filepath.Join(s.dir, "tmp")
	if des, err := os.ReadDir(tdir); err == nil {
		for _, de := range des {
			fi, err := de.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if err := os.Remove(filepath.Join(tdir, de.Name())); err == nil || errors.Is(err, fs.ErrNotExist) {
				freed += fi.Size()
			}
		}
	}
	return manifests, objects, freed, nil
}
