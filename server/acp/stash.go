package acp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// stashMinString is the shortest JSON string (quotes and escapes counted)
// that a long line sets aside.
const stashMinString = 1 << 10

// errStashDropped is a placeholder whose text was dropped before it was
// used: more long messages came than the stash holds.
var errStashDropped = errors.New("part of a long message was dropped before it was read: too many long messages at once; send it again")

// stash carries the long strings of a line longer than the SDK reads (up
// to MaxLineSize) around the SDK: the input filter replaces each by a
// placeholder, the SDK reads the short line, and the handlers that expect
// long text (session/prompt, the answer to fs/read_text_file) take the
// strings back. A placeholder holds a random per-connection prefix, so no
// text the client means can be mistaken for one. The stash keeps at most
// budget bytes: the oldest strings go first, and their placeholders then
// resolve to errStashDropped.
type stash struct {
	prefix string
	budget int

	mu    sync.Mutex
	next  uint64
	vals  map[string]string
	order []string // keys in the order they came, some already taken
	size  int
}

func newStash(budget int) *stash {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &stash{prefix: "\x00zero-stash-" + hex.EncodeToString(b[:]) + "-", budget: budget, vals: map[string]string{}}
}

// put keeps v and returns its placeholder.
func (s *stash) put(v string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.size+len(v) > s.budget && len(s.order) > 0 {
		k := s.order[0]
		s.order = s.order[1:]
		if old, ok := s.vals[k]; ok {
			s.size -= len(old)
			delete(s.vals, k)
		}
	}
	s.next++
	k := s.prefix + strconv.FormatUint(s.next, 10)
	s.vals[k] = v
	s.order = append(s.order, k)
	s.size += len(v)
	return k
}

// drop forgets the strings of keys.
func (s *stash) drop(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if v, ok := s.vals[k]; ok {
			s.size -= len(v)
			delete(s.vals, k)
		}
	}
	if len(s.vals) == 0 {
		s.order = nil
	}
}

// take returns the string p stands for, forgetting it, or p itself when p
// is no placeholder.
func (s *stash) take(p string) (string, error) {
	if !strings.HasPrefix(p, s.prefix) {
		return p, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vals[p]
	if !ok {
		return "", errStashDropped
	}
	delete(s.vals, p)
	s.size -= len(v)
	if len(s.vals) == 0 {
		s.order = nil
	}
	return v, nil
}

func (s *stash) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals) == 0
}

// shrink returns line with every string of at least stashMinString bytes
// (quotes and escapes counted) replaced by a placeholder, and the
// placeholders' keys. ok is false, and nothing is kept, when such a string
// is not a valid JSON string. Outside the strings it sets aside, line is
// copied as it is.
func (s *stash) shrink(line []byte) (small []byte, keys []string, ok bool) {
	var out bytes.Buffer
	last := 0
	for i := 0; i < len(line); {
		q := bytes.IndexByte(line[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end := stringEnd(line, start)
		if end < 0 {
			break // an unterminated string: left for the caller's check
		}
		if end-start >= stashMinString {
			var v string
			if err := json.Unmarshal(line[start:end], &v); err != nil {
				s.drop(keys)
				return nil, nil, false
			}
			k := s.put(v)
			keys = append(keys, k)
			out.Write(line[last:start])
			b, _ := json.Marshal(k)
			out.Write(b)
			last = end
		}
		i = end
	}
	out.Write(line[last:])
	return out.Bytes(), keys, true
}

// stringEnd returns the index just past the JSON string that opens at
// line[start], or -1.
func stringEnd(line []byte, start int) int {
	for i := start + 1; i < len(line); {
		j := bytes.IndexAny(line[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if line[i] == '\\' {
			i += 2
			continue
		}
		return i + 1
	}
	return -1
}

// resolve puts the stashed strings back into *v (a pointer to a decoded
// message) wherever a placeholder stands, and forgets them. It returns
// errStashDropped when one was dropped (the others are still put back).
func (s *stash) resolve(v any) error {
	if s.empty() {
		return nil
	}
	return s.walk(reflect.ValueOf(v))
}

func (s *stash) walk(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return s.walk(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		e := v.Elem()
		if e.Kind() == reflect.String {
			r, err := s.take(e.String())
			if r != e.String() && v.CanSet() {
				v.Set(reflect.ValueOf(r).Convert(e.Type()))
			}
			return err
		}
		return s.walk(e)
	case reflect.Struct:
		var first error
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if err := s.walk(v.Field(i)); err != nil && first == nil {
				first = err
			}
		}
		return first
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes (json.RawMessage): no strings
		}
		var first error
		for i := range v.Len() {
			if err := s.walk(v.Index(i)); err != nil && first == nil {
				first = err
			}
		}
		return first
	case reflect.Map:
		var first error
		it := v.MapRange()
		for it.Next() {
			val := it.Value()
			// Map values cannot be set in place: walk a copy, store it back.
			cp := reflect.New(val.Type()).Elem()
			cp.Set(val)
			if err := s.walk(cp); err != nil && first == nil {
				first = err
			}
			v.SetMapIndex(it.Key(), cp)
		}
		return first
	case reflect.String:
		r, err := s.take(v.String())
		if r != v.String() && v.CanSet() {
			v.SetString(r)
		}
		return err
	}
	return nil
}
