package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/mcpconf"
	"go.yaml.in/yaml/v3"
)

// fileParser walks one file's yaml.Node tree by hand: yaml.v3's own decoding errors carry a line
// but not the dotted key, and it would silently accept unknown keys.
type fileParser struct {
	layer, path string
	out         map[string]setting
	servers     map[string]mcpconf.Server // mcp_servers, read apart from the schema
	errs        []error
}

// parseFile reads one config file. It returns every valid value it found and every problem, so
// one run shows the user all that needs fixing.
func parseFile(layer, path string, data []byte) (map[string]setting, []error) {
	p := parse(layer, path, data)
	return p.out, p.errs
}

// parse reads one config file into a parser's results.
func parse(layer, path string, data []byte) *fileParser {
	p := &fileParser{layer: layer, path: path, out: map[string]setting{}}
	p.read(data)
	return p
}

func (p *fileParser) read(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // empty, or comments only
			return
		}
		p.syntaxError(data, err)
		return
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.syntaxError(data, err)
		return
	default:
		p.fail(next.Line, "", "holds a second YAML document (after ---); put everything in one")
		return
	}
	if len(doc.Content) == 0 {
		return
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return
	}
	if root.Kind != yaml.MappingNode {
		p.fail(root.Line, "", "must be a mapping of keys such as models:, profile:, sandbox:, got "+describe(root))
		return
	}
	p.mapping(root, "")
}

func (p *fileParser) fail(line int, key, msg string) {
	p.errs = append(p.errs, &Error{File: p.path, Line: line, Key: key, Msg: msg})
}

type pair struct{ k, v *yaml.Node }

// mapping checks and records the entries of the section prefix.
func (p *fileParser) mapping(n *yaml.Node, prefix string) {
	seen := map[string]int{} // name -> line of first occurrence
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, p.mergeSources(v, prefix)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			p.fail(k.Line, prefix, "keys must be plain names, got "+describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.fail(k.Line, join(prefix, k.Value), fmt.Sprintf("duplicate key (first set on line %d)", first))
			continue
		}
		seen[k.Value] = k.Line
		p.entry(k, v, prefix)
	}
	// YAML merge keys: explicit entries win over merged ones, and earlier merged maps over later.
	for _, m := range merged {
		if _, dup := seen[m.k.Value]; dup || m.k.Kind != yaml.ScalarNode {
			continue
		}
		seen[m.k.Value] = m.k.Line
		p.entry(m.k, m.v, prefix)
	}
}

// mergeSources lists the entries a "<<" key brings in: from one mapping or a list of them.
func (p *fileParser) mergeSources(v *yaml.Node, prefix string) []pair {
	v = resolve(v)
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, m := range v.Content {
			maps = append(maps, resolve(m))
		}
	}
	var out []pair
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			p.fail(m.Line, prefix, "<< must merge a mapping or a list of mappings, got "+describe(m))
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			out = append(out, pair{m.Content[i], m.Content[i+1]})
		}
	}
	return out
}

func (p *fileParser) entry(k, v *yaml.Node, prefix string) {
	key := join(prefix, k.Value)
	v = resolve(v)
	if key == "mcp_servers" {
		p.mcpServers(v)
		return
	}
	if children, ok := sections[key]; ok {
		switch {
		case isNull(v):
		case v.Kind == yaml.MappingNode:
			p.mapping(v, key)
		default:
			p.fail(v.Line, key, "must be a mapping ("+strings.Join(children, ", ")+"), got "+describe(v))
		}
		return
	}
	l, ok := leafByKey[key]
	if !ok {
		p.fail(k.Line, key, unknownKey(key))
		return
	}
	if isNull(v) { // "model:" with nothing after it: as if absent
		return
	}
	val, msg := l.fromNode(v)
	if msg != "" {
		p.fail(v.Line, key, msg)
		return
	}
	p.out[key] = setting{val: val, origin: p.layer + " " + p.path + ":" + strconv.Itoa(k.Line)}
}

// unknownKey explains an unknown key. A key that would hold an API key gets its own message:
// Zero keeps keys out of config files on purpose.
func unknownKey(key string) string {
	name := key[strings.LastIndexByte(key, '.')+1:]
	if strings.HasPrefix(key, "models.") {
		switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name)) {
		case "apikey", "key", "token", "apitoken", "secret":
			return `unknown key: config files hold no API keys; put the key in an environment variable and name that variable in api_key_env (default OPENAI_API_KEY)`
		}
	}
	return "unknown key" + didYouMean(key)
}

// fromNode parses a scalar node for this leaf (a list of scalars, or one
// scalar, for a list).
func (l *leaf) fromNode(v *yaml.Node) (any, string) {
	if l.kind == kindList {
		var list []string
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			it = resolve(it)
			if it.Kind != yaml.ScalarNode || isNull(it) {
				return nil, "must be a list of text values, got " + describe(it)
			}
			list = append(list, it.Value)
		}
		return l.validate(list)
	}
	if v.Kind != yaml.ScalarNode {
		return nil, "must be " + l.kindName() + ", got " + describe(v)
	}
	got := func() string {
		if l.secret {
			return ""
		}
		return ", got " + describe(v)
	}
	switch l.kind {
	case kindInt:
		switch v.Tag {
		case "!!int":
			var n int64
			if err := v.Decode(&n); err != nil || n < math.MinInt || n > math.MaxInt {
				return nil, "must be a number that fits in an int, got " + v.Value
			}
			return l.validate(int(n))
		case "!!float":
			return nil, "must be a whole number" + got()
		}
		return nil, "must be a number" + got()
	case kindBool:
		var b bool
		if v.Tag != "!!bool" || v.Decode(&b) != nil {
			return nil, "must be true or false" + got()
		}
		return l.validate(b)
	case kindFloat:
		if v.Tag != "!!int" && v.Tag != "!!float" {
			return nil, "must be a number" + got()
		}
		var f float64
		if err := v.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, "must be a finite number" + got()
		}
		return l.validate(f)
	}
	// Strings take any scalar as written, so `user: 1000` or `model: 3.5` mean what they say.
	return l.validate(v.Value)
}

func (l *leaf) kindName() string {
	switch l.kind {
	case kindInt:
		return "a whole number"
	case kindFloat:
		return "a number"
	case kindList:
		return "a list"
	case kindBool:
		return "true or false"
	}
	return "a single value"
}

// describe names what a node holds, for "got …" in messages.
func describe(n *yaml.Node) string {
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

// resolve follows aliases (*name) to the anchored node.
func resolve(n *yaml.Node) *yaml.Node {
	for range 100 { // yaml.v3 rejects alias cycles; the bound only guards against surprises
		if n.Kind != yaml.AliasNode || n.Alias == nil {
			return n
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

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

// syntaxError reports malformed YAML with the line yaml.v3 names and, read from the text, the
// dotted key being written there.
func (p *fileParser) syntaxError(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		line = lineOf(data, "*"+m[1])
	}
	p.fail(line, keyPathAt(data, line), "malformed YAML: "+msg)
}

var keyLine = regexp.MustCompile(`^( *)([A-Za-z0-9_<-]+)\s*:(\s|$)`)

// keyPathAt guesses the dotted key at a line of possibly malformed YAML from indentation alone:
// each "name:" line opens a level below the nearest less-indented one. It is a best effort for
// error messages; "" when no key line precedes.
func keyPathAt(data []byte, line int) string {
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
