// Package yamlwalk reads the YAML of Zero's settings files (config.yaml, a
// profile's agent.yaml, a skill's SKILL.md front matter) node by node, so
// that every problem is told as "file:line: key: what is wrong", all of
// them at once: yaml.v3's own decoding names a line but not the dotted key,
// and would accept unknown keys silently.
//
// It is the one place that says how such a file reads:
//
//   - null is a scalar YAML resolves to !!null: an empty value ("key:"),
//     ~, null, Null, NULL, or the !!null tag (short or long form,
//     !<tag:yaml.org,2002:null>) on one of those. A key set to null counts
//     as absent. A quoted "" or 'null' is text, not null, and a !!null tag
//     on anything else ("!!null x") is an error.
//   - aliases (*name) read as the anchored node; << merge keys bring in a
//     mapping or a list of mappings, explicit entries winning over merged
//     ones and earlier merged mappings over later ones;
//   - a key given twice is an error naming the line it was first set on;
//     keys must be plain scalars;
//   - malformed YAML is reported at the line yaml.v3 names, with the dotted
//     key read from the indentation around it; a second document (after
//     ---) is an error.
//
// What each key means and which values it takes is the schema's business:
// the caller walks the mappings with [Walker.Mapping] and reports its own
// problems with [Walker.Fail].
package yamlwalk

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is one problem of a settings file, located so a person (or an
// editor, as a diagnostic) can go straight to it.
type Error struct {
	File string // the file, as the user knows it; "" when the caller names it otherwise
	Line int    // 1-based line in File; 0 when YAML could not say
	Key  string // dotted key, e.g. "limits.repeat"; "" when it cannot be told
	Msg  string // what is wrong
}

// Error formats the problem as "<file>:<line>: <key>: <msg>" ("line
// <line>: …" without a file), leaving out whatever is unknown.
func (e *Error) Error() string {
	var parts []string
	where := e.File
	if e.Line > 0 {
		if where == "" {
			where = "line " + strconv.Itoa(e.Line)
		} else {
			where += ":" + strconv.Itoa(e.Line)
		}
	}
	for _, s := range []string{where, e.Key, e.Msg} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// Walker reads one file and collects its problems.
type Walker struct {
	File string
	// Offset is added to every line: the line of File before the YAML
	// starts (a SKILL.md's front matter starts below its --- line).
	Offset int
	// Errs are the problems found so far, in the order found.
	Errs []*Error
}

// Fail records a problem at a line of the YAML (0: unknown).
func (w *Walker) Fail(line int, key, msg string) {
	if line > 0 {
		line += w.Offset
	}
	w.Errs = append(w.Errs, &Error{File: w.File, Line: line, Key: key, Msg: msg})
}

// Parse reads data as one YAML document and returns its root node, aliases
// followed, or nil when the document is empty, only comments, null or
// broken (the problem is recorded).
func (w *Walker) Parse(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) { // EOF: empty, or comments only
			w.syntaxError(data, err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		w.syntaxError(data, err)
		return nil
	default:
		w.Fail(next.Line, "", "holds a second YAML document (after ---); put everything in one")
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	if !w.nullsOK(doc.Content[0]) {
		return nil
	}
	root := Resolve(doc.Content[0])
	if IsNull(root) {
		return nil
	}
	return root
}

// nullSpellings are the scalars YAML 1.2's core schema resolves to null.
var nullSpellings = []string{"", "~", "null", "Null", "NULL"}

// nullsOK reports a !!null tag on a value that is not null ("!!null x"),
// anywhere in the tree, and whether there was none.
func (w *Walker) nullsOK(n *yaml.Node) bool {
	ok := true
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if depth > 10000 { // yaml.v3 bounds the depth far below this; only a guard
			return
		}
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && !isNullSpelling(n.Value) {
			w.Fail(n.Line, "", "!!null tags a value that is not null ("+strconv.Quote(n.Value)+"); write ~ or nothing for null, or drop the tag")
			ok = false
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return ok
}

func isNullSpelling(s string) bool {
	for _, v := range nullSpellings {
		if s == v {
			return true
		}
	}
	return false
}

// IsNull reports whether n (an alias is followed) is null: an empty value,
// ~, null, Null, NULL, or one of those tagged !!null. A quoted "" is text.
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && isNullSpelling(n.Value)
}

// Resolve follows aliases (*name) to the anchored node.
func Resolve(n *yaml.Node) *yaml.Node {
	for range 100 { // yaml.v3 rejects alias cycles; the bound only guards against surprises
		if n == nil || n.Kind != yaml.AliasNode || n.Alias == nil {
			return n
		}
		n = n.Alias
	}
	return n
}

// Join makes the dotted key of name under prefix.
func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Describe names what a node holds, for "got …" in messages: "a mapping",
// "a list", a quoted text or the scalar as written.
func Describe(n *yaml.Node) string {
	n = Resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!str" || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "a " + n.Tag
}

// Mapping calls each for every entry of the mapping n (whose dotted key is
// prefix) in order, with the value's aliases followed and the entry's
// dotted key: first the entries written in n, then those its << merge keys
// bring in that n does not set itself. A key that is not a plain scalar or
// is given twice is a problem, and its entry is skipped.
func (w *Walker) Mapping(n *yaml.Node, prefix string, each func(k, v *yaml.Node, key string)) {
	type pair struct{ k, v *yaml.Node }
	seen := map[string]int{} // name -> line of first occurrence
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			for _, m := range w.mergeSources(v, prefix) {
				for j := 0; j+1 < len(m.Content); j += 2 {
					merged = append(merged, pair{m.Content[j], m.Content[j+1]})
				}
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.Fail(k.Line, prefix, "keys must be plain names, got "+Describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			w.Fail(k.Line, Join(prefix, k.Value), "duplicate key (first set on line "+strconv.Itoa(first+w.Offset)+")")
			continue
		}
		seen[k.Value] = k.Line
		each(k, Resolve(v), Join(prefix, k.Value))
	}
	// Explicit entries win over merged ones, and earlier merged maps over later.
	for _, m := range merged {
		if _, dup := seen[m.k.Value]; dup || m.k.Kind != yaml.ScalarNode {
			continue
		}
		seen[m.k.Value] = m.k.Line
		each(m.k, Resolve(m.v), Join(prefix, m.k.Value))
	}
}

// mergeSources lists the mappings a "<<" key brings in: one mapping or a
// list of them.
func (w *Walker) mergeSources(v *yaml.Node, prefix string) []*yaml.Node {
	v = Resolve(v)
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, m := range v.Content {
			maps = append(maps, Resolve(m))
		}
	default:
		maps = []*yaml.Node{v} // reported below
	}
	out := maps[:0]
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			w.Fail(m.Line, prefix, "<< must merge a mapping or a list of mappings, got "+Describe(m))
			continue
		}
		out = append(out, m)
	}
	return out
}

var (
	yamlLine      = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	unknownAnchor = regexp.MustCompile(`^unknown anchor '(.+)' referenced$`)
)

// lineOf is the 1-based line of the first occurrence of s in data, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// syntaxError reports malformed YAML with the line yaml.v3 names and, read
// from the text, the dotted key being written there.
func (w *Walker) syntaxError(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		line = lineOf(data, "*"+m[1])
	}
	w.Fail(line, KeyPathAt(data, line), "malformed YAML: "+msg)
}

var keyLine = regexp.MustCompile(`^( *)([A-Za-z0-9_<-]+)\s*:(\s|$)`)

// KeyPathAt guesses the dotted key at a line of possibly malformed YAML
// from indentation alone: each "name:" line opens a level below the
// nearest less-indented one. It is a best effort for error messages; ""
// when no key line precedes.
func KeyPathAt(data []byte, line int) string {
	if line <= 0 {
		return ""
	}
	type level struct {
		indent int
		name   string
	}
	var stack []level
	for i, text := range strings.Split(string(data), "\n") {
		if i >= line {
			break
		}
		m := keyLine.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{indent, m[2]})
	}
	names := make([]string, len(stack))
	for i, l := range stack {
		names[i] = l.name
	}
	return strings.Join(names, ".")
}
