package secrets

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MinMasked is the shortest value, in bytes once surrounding white space is
// trimmed, that is masked in free text (Agent Zero's min_length). A shorter
// value would mask ordinary words and numbers everywhere; it can still be
// substituted by [Set.Expand].
const MinMasked = 4

// Set is a set of named secret values. It is immutable and safe for
// concurrent use; the nil *Set is an empty set.
//
// A Set holds two kinds of value: the secrets the agent may use (from
// secrets.env files, see [Load]), which [Set.Expand] substitutes and
// [Set.Names] lists, and values that are only masked (Zero's own keys, see
// [Set.With]). Every value of either kind, and every value a later file
// or With replaced, is masked by [Set.Mask] and [Stream]: a Set never forgets
// a value it was given.
type Set struct {
	values map[string]string // the agent's secrets: NAME -> value
	names  []string          // sorted keys of values
	masked []named           // every value to mask, in the order given
	prompt []promptLine      // what the system prompt shows, see Prompt

	once sync.Once
	m    *matcher // built on first use; nil when nothing is masked
}

type named struct{ name, value string }

// Alias returns the placeholder the model writes for name:
// §§secret(NAME). Names are upper-cased, as Agent Zero does.
func Alias(name string) string { return aliasPrefix + strings.ToUpper(name) + ")" }

const aliasPrefix = "§§secret("

// With returns a Set that also masks value, shown as §§secret(NAME). It is
// meant for Zero's own keys (model API keys, the MCP token): value is not
// offered to the agent, so Expand does not substitute it and Names does not
// list it. (A user who wants the agent to use a key puts it in secrets.env.)
//
// name is upper-cased, and any byte outside [A-Z0-9_] becomes '_', so the
// placeholder is always a well-formed alias. An empty value changes
// nothing. s is not modified.
func (s *Set) With(name, value string) *Set {
	if value == "" {
		return s
	}
	n := &Set{masked: []named{{canonicalName(name), value}}}
	if s != nil {
		n.values, n.names, n.prompt = s.values, s.names, s.prompt
		n.masked = append(slices.Clip(s.masked), n.masked...)
	}
	return n
}

// canonicalName upper-cases name and replaces what an alias cannot hold.
func canonicalName(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if c != '_' && (c < 'A' || c > 'Z') && (c < '0' || c > '9' || i == 0) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// Names returns the names of the secrets the agent may use, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Expand returns a deep copy of v in which every §§secret(NAME) in a string
// is replaced by the secret's value. v is a JSON-like value: map[string]any,
// []any, string, map[string]string, []string, or a scalar (numbers, bools,
// nil), returned as it is; map keys are left alone. Names are matched
// without regard to case (Agent Zero upper-cases them), and an alias is
// replaced in one pass, so a value that itself contains an alias is not
// expanded again.
//
// An alias whose name is not a secret of the Set is left as it is and its
// name (upper-cased) is reported in missing, sorted and without repeats,
// so the caller can tell the model which names exist. v is never modified.
func (s *Set) Expand(v any) (out any, missing []string) {
	var miss map[string]bool
	out = walk(v, func(str string) string {
		return s.expandString(str, &miss)
	}, false)
	return out, slices.Sorted(maps.Keys(miss))
}

func (s *Set) expandString(str string, miss *map[string]bool) string {
	i := strings.Index(str, aliasPrefix)
	if i < 0 {
		return str
	}
	var b strings.Builder
	for i >= 0 {
		start := i + len(aliasPrefix)
		name, ok := aliasName(str[start:])
		if !ok {
			b.WriteString(str[:start])
			str = str[start:]
			i = strings.Index(str, aliasPrefix)
			continue
		}
		b.WriteString(str[:i])
		end := start + len(name) + 1
		key := strings.ToUpper(name)
		if value, ok := s.lookup(key); ok {
			b.WriteString(value)
		} else {
			b.WriteString(str[i:end])
			if *miss == nil {
				*miss = map[string]bool{}
			}
			(*miss)[key] = true
		}
		str = str[end:]
		i = strings.Index(str, aliasPrefix)
	}
	b.WriteString(str)
	return b.String()
}

func (s *Set) lookup(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.values[name]
	return v, ok
}

// aliasName reads NAME) at the start of rest: ALIAS_PATTERN's
// [A-Za-z_][A-Za-z0-9_]* followed by ')'.
func aliasName(rest string) (string, bool) {
	n := 0
	for n < len(rest) && isNameByte(rest[n], n == 0) {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != ')' {
		return "", false
	}
	return rest[:n], true
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || !first && '0' <= c && c <= '9'
}

// validName reports whether name matches [A-Za-z_][A-Za-z0-9_]*.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i], i == 0) {
			return false
		}
	}
	return true
}

// walk returns a deep copy of v with f applied to its strings. When mask is
// set, f is also applied to map keys and to json.RawMessage text.
func walk(v any, f func(string) string, mask bool) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			if mask {
				k = f(k)
			}
			out[k] = walk(x, f, mask)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = walk(x, f, mask)
		}
		return out
	case map[string]string:
		if v == nil {
			return v
		}
		out := make(map[string]string, len(v))
		for k, x := range v {
			if mask {
				k = f(k)
			}
			out[k] = f(x)
		}
		return out
	case []string:
		if v == nil {
			return v
		}
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = f(x)
		}
		return out
	case json.RawMessage:
		if v == nil || !mask { // a value put into raw JSON could break it
			return v
		}
		return json.RawMessage(f(string(v)))
	}
	return v
}

// Mask returns text with every value of the Set replaced by its
// placeholder §§secret(NAME). Values shorter than MinMasked bytes are left
// alone (see MinMasked).
//
// Where occurrences of values overlap, the longest occurrence wins over
// those inside it, and occurrences that only overlap are each replaced by
// their placeholder, one after the other: no byte of any occurrence is left
// in clear. A value known under several names is shown under the first of
// the names the agent may use, else under the first of the others (in
// sorted order).
//
// Besides each value as it is, Mask finds the forms it takes in logs and
// terminals: JSON-escaped (with and without HTML escaping), Go-quoted, and
// with "\r\n" for "\n" (a PTY's line ends). See the package documentation
// for what it does not find.
//
// Mask makes one pass over text (an Aho–Corasick automaton) whatever the
// number of values, and returns text itself when nothing matched.
func (s *Set) Mask(text string) string {
	m := s.matcher()
	if m == nil || len(text) == 0 {
		return text
	}
	sc := scan{m: m}
	sc.feed(text)
	if len(sc.spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	sc.write(&b, text, 0, len(text), true)
	return b.String()
}

// Straddles reports whether a value of the Set may occur in a+sep+b other
// than wholly inside a or wholly inside b: whether two texts already masked
// need masking again once joined by sep (a value written half at the end
// of one message and half at the start of the next). It reads only sep and
// the bytes of a and b within reach of it (the longest form of a value less
// one byte), so it costs the same however long a and b are, and allocates
// nothing when it reports false. It may report true for a value wholly
// inside those bytes of a or b, which a masked text does not hold; masking
// the joined text is then merely redundant.
func (s *Set) Straddles(a, sep, b string) bool {
	m := s.matcher()
	if m == nil {
		return false
	}
	n := m.maxLen - 1
	sc := scan{m: m}
	sc.feed(a[len(a)-min(len(a), n):])
	sc.feed(sep)
	sc.feed(b[:min(len(b), n)])
	return len(sc.spans) > 0
}

// MaskValue returns a deep copy of v with [Set.Mask] applied to every
// string, map keys included. v is JSON-like, as for [Set.Expand]; a
// json.RawMessage is masked as text (its JSON-escaped values are found, see
// Mask). v is never modified.
func (s *Set) MaskValue(v any) any {
	if s.matcher() == nil {
		return walk(v, func(str string) string { return str }, true)
	}
	return walk(v, s.Mask, true)
}

// matcher returns the automaton for the Set's masked values, building it
// on first use; nil when no value is long enough to mask.
func (s *Set) matcher() *matcher {
	if s == nil {
		return nil
	}
	s.once.Do(func() {
		if pats := s.patterns(); len(pats) > 0 {
			s.m = newMatcher(pats, denseBudget)
		}
	})
	return s.m
}

// patterns returns what Mask looks for: every masked value long enough,
// in the forms it takes in logs and terminals, each with the name to show.
func (s *Set) patterns() []pattern {
	// The name shown for a value: agent-usable names first, then by name.
	type cand struct {
		name   string
		usable bool
	}
	better := func(a, b cand) bool {
		if a.usable != b.usable {
			return a.usable
		}
		return a.name < b.name
	}
	best := map[string]cand{}
	var order []string
	for _, nv := range s.masked {
		if len(strings.TrimSpace(nv.value)) < MinMasked {
			continue
		}
		c := cand{nv.name, s.values[nv.name] == nv.value}
		for _, form := range forms(nv.value) {
			old, ok := best[form]
			if !ok {
				order = append(order, form)
			}
			if !ok || better(c, old) {
				best[form] = c
			}
		}
	}
	pats := make([]pattern, len(order))
	for i, form := range order {
		pats[i] = pattern{text: form, name: best[form].name}
	}
	return pats
}

// forms returns value as it is and as it appears escaped in JSON (with
// and without HTML escaping, as encoding/json and log/slog write it) and
// in Go-quoted text, and all of these with "\r\n" for "\n".
func forms(value string) []string {
	out := []string{value}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	bases := []string{value}
	if strings.Contains(value, "\n") {
		bases = append(bases, strings.ReplaceAll(value, "\n", "\r\n"))
	}
	for _, v := range bases {
		add(v)
		add(jsonEscape(v, true))
		add(jsonEscape(v, false))
		q := strconv.Quote(v)
		add(q[1 : len(q)-1])
	}
	return out
}

// jsonEscape returns v as encoding/json writes it inside a string.
func jsonEscape(v string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}
