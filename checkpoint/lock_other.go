//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package checkpoint

import (
	"context"
	"sync"
)

// storeLock lets Take, Changes and Restore run together and Prune alone.
// On this platform it holds only inside one process.
type storeLock struct{ mu sync.RWMutex }

func (s *Store) lock(ctx context.Context, exclusive bool) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if exclusive {
		s.lk.mu.Lock()
		return s.lk.mu.Unlock, nil
	}
	s.lk.mu.RLock()
	return s.lk.mu.RUnlock, nil
}
