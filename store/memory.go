package store

import (
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Memory is one entry of the agent's memory (Agent Zero's memory
// documents): a text in an area ("main", "fragments", "solutions"), with
// metadata, in a scope: the user's own memory ("") or a workspace's (its
// path).
type Memory struct {
	ID      string // given by SaveMemories: 10 letters and digits
	Scope   string
	Area    string
	Text    string
	Meta    map[string]any // JSON-compatible values
	Created time.Time      // set by SaveMemories when zero
	Source  string         // the knowledge file a chunk comes from, or ""
}

// MemoryFilter selects memories for [Store.ListMemories].
type MemoryFilter struct {
	Scopes []string // nil: every scope
	Area   string   // "": every area
	Source string   // "": any source
	Limit  int      // 0: no limit
}

const memoryColumns = `uid, scope, area, text, meta, created, source`

// newMemoryID returns a random id like Agent Zero's (letters and digits).
func newMemoryID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [10]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// bumpScope counts a write to scope's memory (see memory_scopes).
func bumpScope(b *batch, scope string) error {
	_, err := b.exec(`INSERT INTO memory_scopes (scope, version) VALUES (?, 1)
		ON CONFLICT (scope) DO UPDATE SET version = version + 1`, scope)
	return err
}

// SaveMemories stores ms in one transaction, after every write queued
// before, and returns them with their ids (and times) set.
func (s *Store) SaveMemories(ms []Memory) ([]Memory, error) {
	out := make([]Memory, len(ms))
	metas := make([][]byte, len(ms))
	for i, m := range ms {
		if m.Area == "" {
			return nil, fmt.Errorf("save memory: no area")
		}
		m.ID = newMemoryID()
		if m.Created.IsZero() {
			m.Created = time.Now()
		}
		raw, err := json.Marshal(cmpMeta(m.Meta))
		if err != nil {
			return nil, fmt.Errorf("save memory: metadata: %w", err)
		}
		out[i], metas[i] = m, raw
	}
	if len(out) == 0 {
		return out, nil
	}
	err := s.do(op{name: "save memories", apply: func(b *batch) error {
		return saveMemories(b, out, metas)
	}})
	if err != nil {
		return nil, fmt.Errorf("save memories: %w", err)
	}
	return out, nil
}

func saveMemories(b *batch, ms []Memory, metas [][]byte) error {
	scopes := map[string]bool{}
	for i, m := range ms {
		if _, err := b.exec(`INSERT INTO memories (uid, scope, area, text, meta, created, source) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Scope, m.Area, m.Text, metas[i], m.Created.UnixNano(), m.Source); err != nil {
			return err
		}
		scopes[m.Scope] = true
	}
	for sc := range scopes {
		if err := bumpScope(b, sc); err != nil {
			return err
		}
	}
	return nil
}

func cmpMeta(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// UpdateMemory replaces the text and metadata of the memory id (its
// vectors go: the text they stood for changed). It fails with an error
// wrapping [ErrNotFound] when there is no such memory.
func (s *Store) UpdateMemory(id, text string, meta map[string]any) error {
	raw, err := json.Marshal(cmpMeta(meta))
	if err != nil {
		return fmt.Errorf("update memory: metadata: %w", err)
	}
	err = s.do(op{name: "update memory", apply: func(b *batch) error {
		rowid, scope, err := memoryRow(b, id)
		if err != nil {
			return err
		}
		if _, err := b.exec(`UPDATE memories SET text = ?, meta = ? WHERE id = ?`, text, raw, rowid); err != nil {
			return err
		}
		if _, err := b.exec(`DELETE FROM memory_vectors WHERE id = ?`, rowid); err != nil {
			return err
		}
		return bumpScope(b, scope)
	}})
	if err != nil {
		return fmt.Errorf("update memory %q: %w", id, err)
	}
	return nil
}

// memoryRow returns the row id and scope of the memory uid, or ErrNotFound.
func memoryRow(b *batch, uid string) (rowid int64, scope string, err error) {
	row, err := b.queryRow(`SELECT id, scope FROM memories WHERE uid = ?`, uid)
	if err != nil {
		return 0, "", err
	}
	if err := row.Scan(&rowid, &scope); errors.Is(err, sql.ErrNoRows) {
		return 0, "", ErrNotFound
	} else if err != nil {
		return 0, "", err
	}
	return rowid, scope, nil
}

// DeleteMemories deletes the memories with ids that exist and returns them.
func (s *Store) DeleteMemories(ids []string) ([]Memory, error) {
	found, err := s.GetMemories(ids)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var gone []Memory
	err = s.do(op{name: "delete memories", apply: func(b *batch) error {
		gone = gone[:0]
		scopes := map[string]bool{}
		for _, m := range found {
			res, err := b.exec(`DELETE FROM memories WHERE uid = ?`, m.ID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				gone = append(gone, m)
				scopes[m.Scope] = true
			}
		}
		for sc := range scopes {
			if err := bumpScope(b, sc); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return nil, fmt.Errorf("delete memories: %w", err)
	}
	return gone, nil
}

// GetMemories returns the memories with ids that exist, in the order of
// ids (one query per 500 ids).
func (s *Store) GetMemories(ids []string) ([]Memory, error) {
	byID := make(map[string]Memory, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		found, err := s.queryMemories("get memories", `SELECT `+memoryColumns+` FROM memories WHERE uid IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, m := range found {
			byID[m.ID] = m
		}
	}
	var out []Memory
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			out = append(out, m)
			delete(byID, id) // an id given twice comes once
		}
	}
	return out, nil
}

// scopeWhere appends "scope IN (...)" for scopes (nil: none) to where.
func scopeWhere(where []string, args []any, scopes []string) ([]string, []any) {
	if scopes == nil {
		return where, args
	}
	if len(scopes) == 0 {
		return append(where, `0`), args
	}
	where = append(where, `scope IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(scopes)), ", ")+`)`)
	for _, sc := range scopes {
		args = append(args, sc)
	}
	return where, args
}

// ListMemories returns the memories f selects, the newest first.
func (s *Store) ListMemories(f MemoryFilter) ([]Memory, error) {
	where, args := scopeWhere(nil, nil, f.Scopes)
	if f.Area != "" {
		where, args = append(where, `area = ?`), append(args, f.Area)
	}
	if f.Source != "" {
		where, args = append(where, `source = ?`), append(args, f.Source)
	}
	q := `SELECT ` + memoryColumns + ` FROM memories`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	limit := -1
	if f.Limit > 0 {
		limit = f.Limit
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	return s.queryMemories("list memories", q, args...)
}

// CountMemories returns how many memories scopes hold (nil: all).
func (s *Store) CountMemories(scopes []string) (int, error) {
	where, args := scopeWhere(nil, nil, scopes)
	q := `SELECT count(*) FROM memories`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	var n int
	if err := s.r.QueryRow(q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count memories: %w", err)
	}
	return n, nil
}

// MatchMemories returns up to limit memories of scopes holding any of
// terms (words, matched by their stems), the best BM25 match first.
func (s *Store) MatchMemories(scopes []string, terms []string, limit int) ([]Memory, error) {
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	where, args := scopeWhere([]string{`memories_fts MATCH ?`}, []any{strings.Join(quoted, " OR ")}, scopes)
	q := `SELECT ` + prefixed("m.", memoryColumns) + ` FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid WHERE ` +
		strings.Join(where, ` AND `) + ` ORDER BY bm25(memories_fts) LIMIT ?`
	return s.queryMemories("match memories", q, append(args, limit)...)
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

func (s *Store) queryMemories(what, q string, args ...any) ([]Memory, error) {
	rows, err := s.r.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

func scanMemory(r interface{ Scan(...any) error }) (Memory, error) {
	var m Memory
	var meta []byte
	var created int64
	if err := r.Scan(&m.ID, &m.Scope, &m.Area, &m.Text, &meta, &created, &m.Source); err != nil {
		return Memory{}, err
	}
	m.Created = time.Unix(0, created)
	if err := json.Unmarshal(meta, &m.Meta); err != nil || m.Meta == nil {
		m.Meta = map[string]any{}
	}
	return m, nil
}

// SetMemoryVectors stores the embeddings of memories (by id) under the
// embedding model's name; memories deleted meanwhile are skipped.
func (s *Store) SetMemoryVectors(model string, vecs map[string][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	err := s.do(op{name: "set memory vectors", apply: func(b *batch) error {
		scopes := map[string]bool{}
		for id, v := range vecs {
			rowid, scope, err := memoryRow(b, id)
			if errors.Is(err, ErrNotFound) {
				continue // deleted meanwhile
			} else if err != nil {
				return err
			}
			if _, err := b.exec(`INSERT OR REPLACE INTO memory_vectors (id, model, vec) VALUES (?, ?, ?)`, rowid, model, EncodeVector(v)); err != nil {
				return err
			}
			scopes[scope] = true
		}
		for sc := range scopes {
			if err := bumpScope(b, sc); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("set memory vectors: %w", err)
	}
	return nil
}

// MemoryVersion returns the count of writes to scope's memory so far.
func (s *Store) MemoryVersion(scope string) (int64, error) {
	var v int64
	err := s.r.QueryRow(`SELECT version FROM memory_scopes WHERE scope = ?`, scope).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("memory version: %w", err)
	}
	return v, nil
}

// MemoryVectors calls fn with every vector of model in scope and returns
// the scope's version they are of, read in one transaction.
func (s *Store) MemoryVectors(scope, model string, fn func(id, area string, vec []float32)) (int64, error) {
	tx, err := s.r.Begin()
	if err != nil {
		return 0, fmt.Errorf("memory vectors: %w", err)
	}
	defer tx.Rollback()
	var version int64
	if err := tx.QueryRow(`SELECT version FROM memory_scopes WHERE scope = ?`, scope).Scan(&version); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("memory vectors: %w", err)
	}
	rows, err := tx.Query(`SELECT m.uid, m.area, v.vec FROM memory_vectors v JOIN memories m ON m.id = v.id
		WHERE m.scope = ? AND v.model = ? ORDER BY v.id`, scope, model)
	if err != nil {
		return 0, fmt.Errorf("memory vectors: %w", err)
	}
	defer rows.Close()
	var id, area string
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&id, &area, &raw); err != nil {
			return 0, fmt.Errorf("memory vectors: %w", err)
		}
		fn(id, area, DecodeVector(raw))
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("memory vectors: %w", err)
	}
	return version, nil
}

// MemoriesWithoutVector returns up to limit memories of scopes that have no
// vector of model yet, the oldest first.
func (s *Store) MemoriesWithoutVector(scopes []string, model string, limit int) ([]Memory, error) {
	where, args := scopeWhere([]string{`NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.id = memories.id AND v.model = ?)`}, []any{model}, scopes)
	q := `SELECT ` + memoryColumns + ` FROM memories WHERE ` + strings.Join(where, ` AND `) + ` ORDER BY id LIMIT ?`
	return s.queryMemories("memories without vector", q, append(args, limit)...)
}

// EncodeVector encodes v as float32 little endian.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector decodes what EncodeVector encoded.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// KnowledgeFile is a file imported into a scope's memory.
type KnowledgeFile struct {
	Path     string
	Checksum string
	Chunks   int
}

// KnowledgeFiles returns the files imported into scope, by path.
func (s *Store) KnowledgeFiles(scope string) (map[string]KnowledgeFile, error) {
	rows, err := s.r.Query(`SELECT path, checksum, chunks FROM knowledge_files WHERE scope = ?`, scope)
	if err != nil {
		return nil, fmt.Errorf("knowledge files: %w", err)
	}
	defer rows.Close()
	out := map[string]KnowledgeFile{}
	for rows.Next() {
		var f KnowledgeFile
		if err := rows.Scan(&f.Path, &f.Checksum, &f.Chunks); err != nil {
			return nil, fmt.Errorf("knowledge files: %w", err)
		}
		out[f.Path] = f
	}
	return out, rows.Err()
}

// ReplaceKnowledgeFile records f as imported into scope with chunks (their
// Source set to f.Path), replacing the chunks of an earlier import of it,
// in one transaction.
func (s *Store) ReplaceKnowledgeFile(scope string, f KnowledgeFile, chunks []Memory) error {
	ms := make([]Memory, len(chunks))
	metas := make([][]byte, len(chunks))
	now := time.Now()
	for i, m := range chunks {
		m.ID, m.Scope, m.Source = newMemoryID(), scope, f.Path
		if m.Created.IsZero() {
			m.Created = now
		}
		raw, err := json.Marshal(cmpMeta(m.Meta))
		if err != nil {
			return fmt.Errorf("import %s: metadata: %w", f.Path, err)
		}
		ms[i], metas[i] = m, raw
	}
	f.Chunks = len(ms)
	err := s.do(op{name: "import knowledge", apply: func(b *batch) error {
		if _, err := b.exec(`DELETE FROM memories WHERE scope = ? AND source = ?`, scope, f.Path); err != nil {
			return err
		}
		if err := saveMemories(b, ms, metas); err != nil {
			return err
		}
		if _, err := b.exec(`INSERT OR REPLACE INTO knowledge_files (scope, path, checksum, chunks, imported) VALUES (?, ?, ?, ?, ?)`,
			scope, f.Path, f.Checksum, f.Chunks, now.UnixNano()); err != nil {
			return err
		}
		return bumpScope(b, scope)
	}})
	if err != nil {
		return fmt.Errorf("import %s: %w", f.Path, err)
	}
	return nil
}

// DeleteKnowledgeFile removes the file at path from scope's knowledge with
// its chunks, returning how many chunks went.
func (s *Store) DeleteKnowledgeFile(scope, path string) (int, error) {
	var n int64
	err := s.do(op{name: "remove knowledge", apply: func(b *batch) error {
		res, err := b.exec(`DELETE FROM memories WHERE scope = ? AND source = ?`, scope, path)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if _, err := b.exec(`DELETE FROM knowledge_files WHERE scope = ? AND path = ?`, scope, path); err != nil {
			return err
		}
		return bumpScope(b, scope)
	}})
	if err != nil {
		return 0, fmt.Errorf("remove %s from knowledge: %w", path, err)
	}
	return int(n), nil
}

// Behaviour returns the behaviour rules of scope, "" when it has none.
func (s *Store) Behaviour(scope string) (string, error) {
	var rules string
	err := s.r.QueryRow(`SELECT rules FROM behaviour WHERE scope = ?`, scope).Scan(&rules)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("behaviour rules: %w", err)
	}
	return rules, nil
}

// SetBehaviour replaces the behaviour rules of scope ("" removes them).
func (s *Store) SetBehaviour(scope, rules string) error {
	err := s.do(op{name: "set behaviour", apply: func(b *batch) error {
		if rules == "" {
			_, err := b.exec(`DELETE FROM behaviour WHERE scope = ?`, scope)
			return err
		}
		_, err := b.exec(`INSERT OR REPLACE INTO behaviour (scope, rules, updated) VALUES (?, ?, ?)`, scope, rules, time.Now().UnixNano())
		return err
	}})
	if err != nil {
		return fmt.Errorf("set behaviour rules: %w", err)
	}
	return nil
}

// DeleteOtherVectors removes the vectors of scope's memories made by other
// embedding models than model (after a change of model, once everything is
// embedded again), returning how many went.
func (s *Store) DeleteOtherVectors(scope, model string) (int, error) {
	var n int64
	err := s.do(op{name: "delete old vectors", apply: func(b *batch) error {
		res, err := b.exec(`DELETE FROM memory_vectors WHERE model != ? AND id IN (SELECT id FROM memories WHERE scope = ?)`, model, scope)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	}})
	if err != nil {
		return 0, fmt.Errorf("delete old vectors: %w", err)
	}
	return int(n), nil
}
