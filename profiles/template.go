package profiles

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// template is one prompt file parsed into a tree. It belongs to one Prompts instance and one of
// its directories, which is what lets include targets be resolved once and kept in the nodes.
type template struct {
	name  string
	dir   int  // index into Prompts.dirs
	json  bool // the file is a single ```json / ~~~json block
	nodes []*node
	// size is the length of the last output, used to size the next output buffer in one go.
	size atomic.Int64
}

type nodeKind uint8

const (
	nodeText nodeKind = iota
	nodeVar
	nodeIf
	nodeInclude
	nodeOriginal
)

type node struct {
	kind     nodeKind
	text     string // literal text, var name, or include target
	raw      string // the tag as written, output for a var the caller did not pass
	line     int
	inString bool // JSON templates: the tag sits between the quotes of a JSON string
	branches []branch
	// target caches what an include resolved to (notFound for a missing original), so a render
	// after the first does no lookups at all.
	target atomic.Pointer[template]
}

// branch is one arm of an if: cond is nil for {{else}}.
type branch struct {
	cond expr
	body []*node
}

type tokKind uint8

const (
	tokText tokKind = iota
	tokVar
	tokIf
	tokElif
	tokElse
	tokEndif
	tokInclude
	tokOriginal
)

type token struct {
	kind tokKind
	text string // text, var name, include target, or condition source
	raw  string
	line int
	cond expr
}

func (k tokKind) block() bool { return k == tokIf || k == tokElif || k == tokElse || k == tokEndif }

// parseTemplate turns a prompt file into a tree. Tags follow Agent Zero's helpers/files.py:
// {{name}}, {{if expr}}, {{endif}}, {{ include "file" }} and {{ include original }}; we add
// {{else}} and {{elif expr}}. Text that only looks like a tag ({{#each}}, a lone "{{") is kept
// literally, as Agent Zero keeps anything its patterns do not match.
func parseTemplate(name string, dir int, src string) (*template, error) {
	t := &template{name: name, dir: dir}
	body, firstLine := src, 1
	if inner, line, ok := jsonTemplateBody(src); ok {
		t.json, body, firstLine = true, inner, line
	}
	toks, err := lexTemplate(name, body, firstLine)
	if err != nil {
		return nil, err
	}
	trimStandalone(toks)
	if t.nodes, err = buildTree(name, toks); err != nil {
		return nil, err
	}
	if t.json {
		if _, err := markJSONStrings(name, t.nodes, false); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// jsonTemplateBody recognises Agent Zero's JSON templates (is_full_json_template): the whole
// file, give or take surrounding whitespace, is one fenced block tagged json. It returns the
// block's content and the line it starts on.
func jsonTemplateBody(src string) (string, int, bool) {
	lead := len(src) - len(strings.TrimLeft(src, " \t\r\n"))
	s := strings.TrimSpace(src)
	if len(s) < 8 {
		return "", 0, false
	}
	fence := s[:3]
	if fence != "```" && fence != "~~~" {
		return "", 0, false
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 || strings.TrimSpace(s[3:nl]) != "json" {
		return "", 0, false
	}
	rest := s[nl+1:]
	end := strings.LastIndex(rest, "\n"+fence)
	if end < 0 && strings.HasPrefix(rest, fence) {
		return "", 0, false // an empty block: nothing to render
	}
	if end < 0 || strings.TrimSpace(rest[end+1+len(fence):]) != "" {
		return "", 0, false
	}
	return rest[:end], strings.Count(src[:lead], "\n") + 2, true
}

func lexTemplate(name, src string, line int) ([]token, error) {
	var toks []token
	textStart, counted := 0, 0
	for i := 0; ; {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			break
		}
		start := i + j
		k := strings.Index(src[start+2:], "}}")
		if k < 0 {
			break
		}
		end := start + 2 + k
		line += strings.Count(src[counted:start], "\n")
		counted = start
		tok, ok, err := classifyTag(src[start+2 : end])
		if err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrSyntax, name, line, err)
		}
		if !ok {
			// Retry one byte on, so "{{{x}}}" still finds {{x}} as Agent Zero's plain string
			// replacement would.
			i = start + 1
			continue
		}
		if start > textStart {
			toks = append(toks, token{kind: tokText, text: src[textStart:start]})
		}
		tok.raw, tok.line = src[start:end+2], line
		toks = append(toks, tok)
		i, textStart = end+2, end+2
	}
	if textStart < len(src) {
		toks = append(toks, token{kind: tokText, text: src[textStart:]})
	}
	return toks, nil
}

// classifyTag reads the inside of {{…}}; ok is false for text that is not a tag at all.
func classifyTag(inner string) (tok token, ok bool, err error) {
	s := strings.TrimSpace(inner)
	switch {
	case s == "":
		return token{}, false, nil
	case s == "else":
		return token{kind: tokElse}, true, nil
	case s == "endif":
		return token{kind: tokEndif}, true, nil
	case s == "if" || s == "elif":
		return token{}, false, fmt.Errorf("{{%s}} needs a condition", s)
	case hasWord(s, "if"):
		return condToken(tokIf, s[2:])
	case hasWord(s, "elif"):
		return condToken(tokElif, s[4:])
	case hasWord(s, "else") && hasWord(strings.TrimSpace(s[4:]), "if"):
		return condToken(tokElif, strings.TrimSpace(s[4:])[2:])
	case hasWord(s, "include"):
		arg := strings.TrimSpace(s[len("include"):])
		if arg == "original" {
			return token{kind: tokOriginal}, true, nil
		}
		if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
			target := arg[1 : len(arg)-1]
			if target == "" || strings.ContainsAny(target, "\"'") {
				return token{}, false, fmt.Errorf("bad include %s", arg)
			}
			return token{kind: tokInclude, text: target}, true, nil
		}
		return token{}, false, nil
	case strings.ContainsAny(s, " \t\r\n{}"):
		return token{}, false, nil
	}
	return token{kind: tokVar, text: s}, true, nil
}

func condToken(kind tokKind, src string) (token, bool, error) {
	src = strings.TrimSpace(src)
	e, err := parseExpr(src)
	if err != nil {
		return token{}, false, fmt.Errorf("condition %q: %v", src, err)
	}
	return token{kind: kind, text: src, cond: e}, true, nil
}

func hasWord(s, w string) bool {
	if !strings.HasPrefix(s, w) || len(s) == len(w) {
		return false
	}
	c := s[len(w)]
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// trimStandalone removes the line of a block tag ({{if}}, {{elif}}, {{else}}, {{endif}}) that
// stands alone on its line, so conditional sections leave no blank lines behind. Agent Zero cuts
// out only the tag itself; the text is the same, the whitespace tidier.
func trimStandalone(toks []token) {
	type cut struct{ left, right bool }
	cuts := make([]cut, len(toks))
	for i, t := range toks {
		if !t.kind.block() {
			continue
		}
		before := i == 0
		if !before && toks[i-1].kind == tokText {
			p := toks[i-1].text
			nl := strings.LastIndexByte(p, '\n')
			before = isBlank(p[nl+1:]) && (nl >= 0 || i == 1)
		}
		after := i == len(toks)-1
		if !after && toks[i+1].kind == tokText {
			n := toks[i+1].text
			nl := strings.IndexByte(n, '\n')
			after = nl >= 0 && isBlank(n[:nl]) || nl < 0 && i+1 == len(toks)-1 && isBlank(n)
		}
		if before && after {
			if i > 0 {
				cuts[i-1].right = true
			}
			if i < len(toks)-1 {
				cuts[i+1].left = true
			}
		}
	}
	for i := range toks {
		if toks[i].kind != tokText {
			continue
		}
		s := toks[i].text
		if cuts[i].left {
			if nl := strings.IndexByte(s, '\n'); nl >= 0 {
				s = s[nl+1:]
			} else {
				s = ""
			}
		}
		if cuts[i].right {
			s = s[:strings.LastIndexByte(s, '\n')+1]
		}
		toks[i].text = s
	}
}

func isBlank(s string) bool { return strings.TrimLeft(s, " \t\r") == "" }

func buildTree(name string, toks []token) ([]*node, error) {
	var root []*node
	var open []*node // the ifs not yet closed, innermost last
	var sawElse []bool
	add := func(n *node) {
		if len(open) == 0 {
			root = append(root, n)
			return
		}
		top := open[len(open)-1]
		br := &top.branches[len(top.branches)-1]
		br.body = append(br.body, n)
	}
	for _, t := range toks {
		switch t.kind {
		case tokText:
			if t.text != "" {
				add(&node{kind: nodeText, text: t.text})
			}
		case tokVar:
			add(&node{kind: nodeVar, text: t.text, raw: t.raw, line: t.line})
		case tokInclude:
			add(&node{kind: nodeInclude, text: t.text, line: t.line})
		case tokOriginal:
			add(&node{kind: nodeOriginal, line: t.line})
		case tokIf:
			n := &node{kind: nodeIf, line: t.line, branches: []branch{{cond: t.cond}}}
			add(n)
			open, sawElse = append(open, n), append(sawElse, false)
		case tokElif, tokElse:
			if len(open) == 0 {
				return nil, fmt.Errorf("%w: %s line %d: %s without {{if}}", ErrSyntax, name, t.line, t.raw)
			}
			if sawElse[len(sawElse)-1] {
				return nil, fmt.Errorf("%w: %s line %d: %s after {{else}}", ErrSyntax, name, t.line, t.raw)
			}
			top := open[len(open)-1]
			top.branches = append(top.branches, branch{cond: t.cond})
			sawElse[len(sawElse)-1] = t.kind == tokElse
		case tokEndif:
			if len(open) == 0 {
				return nil, fmt.Errorf("%w: %s line %d: {{endif}} without {{if}}", ErrSyntax, name, t.line)
			}
			open, sawElse = open[:len(open)-1], sawElse[:len(sawElse)-1]
		}
	}
	if len(open) > 0 {
		n := open[len(open)-1]
		return nil, fmt.Errorf("%w: %s line %d: {{if}} is never closed with {{endif}}", ErrSyntax, name, n.line)
	}
	return root, nil
}

// markJSONStrings records for each tag of a JSON template whether it sits inside a JSON string,
// so rendering can write a whole JSON value outside strings and escaped text inside them. It
// returns whether the text after the nodes is inside a string.
func markJSONStrings(name string, nodes []*node, in bool) (bool, error) {
	for _, n := range nodes {
		switch n.kind {
		case nodeText:
			in = scanJSONQuotes(n.text, in)
		case nodeVar, nodeInclude, nodeOriginal:
			n.inString = in
		case nodeIf:
			end := in // a missing else leaves the state unchanged
			for i, br := range n.branches {
				got, err := markJSONStrings(name, br.body, in)
				if err != nil {
					return false, err
				}
				if i == 0 {
					end = got
				} else if got != end {
					return false, fmt.Errorf("%w: %s line %d: the branches of this {{if}} leave a JSON string open differently", ErrSyntax, name, n.line)
				}
			}
			if n.branches[len(n.branches)-1].cond != nil && end != in {
				return false, fmt.Errorf("%w: %s line %d: this {{if}} opens or closes a JSON string only when true", ErrSyntax, name, n.line)
			}
			in = end
		}
	}
	return in, nil
}

func scanJSONQuotes(s string, in bool) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		}
	}
	return in
}
