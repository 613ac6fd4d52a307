package config

import (
	"math"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/yamlwalk"
	"go.yaml.in/yaml/v3"
)

// fileParser walks one file's yaml.Node tree with the shared walker ([yamlwalk]) and checks each
// value against the schema.
type fileParser struct {
	layer, path string
	w           yamlwalk.Walker
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
	p := &fileParser{layer: layer, path: path, out: map[string]setting{}, w: yamlwalk.Walker{File: path}}
	p.read(data)
	for _, e := range p.w.Errs {
		p.errs = append(p.errs, &Error{File: e.File, Line: e.Line, Key: e.Key, Msg: e.Msg})
	}
	return p
}

func (p *fileParser) read(data []byte) {
	root := p.w.Parse(data)
	if root == nil { // empty, comments only, null or malformed
		return
	}
	if root.Kind != yaml.MappingNode {
		p.fail(root.Line, "", "must be a mapping of keys such as models:, profile:, sandbox:, got "+describe(root))
		return
	}
	p.mapping(root, "")
}

func (p *fileParser) fail(line int, key, msg string) { p.w.Fail(line, key, msg) }

// mapping checks and records the entries of the section prefix.
func (p *fileParser) mapping(n *yaml.Node, prefix string) {
	p.w.Mapping(n, prefix, p.entry)
}

func (p *fileParser) entry(k, v *yaml.Node, key string) {
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
	case kindDuration:
		text := v.Value
		switch v.Tag {
		case "!!int": // seconds, in any of YAML's ways of writing a whole number
			var n int64
			if err := v.Decode(&n); err != nil {
				return nil, "must be a number of seconds that fits, got " + v.Value
			}
			text = strconv.FormatInt(n, 10)
		case "!!str":
		default:
			return nil, durationMsg + got()
		}
		d, msg := parseDuration(text)
		if msg != "" {
			return nil, msg
		}
		return l.validate(d)
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
	case kindDuration:
		return "a duration"
	case kindList:
		return "a list"
	case kindBool:
		return "true or false"
	}
	return "a single value"
}

// The walker's helpers, under the names this package uses.
var (
	describe = yamlwalk.Describe
	resolve  = yamlwalk.Resolve
	isNull   = yamlwalk.IsNull
)
