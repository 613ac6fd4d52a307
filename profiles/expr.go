package profiles

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// expr is a parsed {{if}} condition. Conditions are parsed once with their template and
// evaluated on every render, so evaluation allocates nothing for the usual name/literal/compare
// shapes.
type expr interface {
	eval(vars map[string]any) (any, error)
}

type (
	litExpr  struct{ v any }
	nameExpr struct{ name string }
	notExpr  struct{ x expr }
	negExpr  struct{ x expr }
	andExpr  struct{ l, r expr }
	orExpr   struct{ l, r expr }
	// cmpExpr is a Python comparison chain: a < b <= c means a < b and b <= c.
	cmpExpr struct {
		operands []expr
		ops      []string
	}
)

func (e litExpr) eval(map[string]any) (any, error) { return e.v, nil }

// A name that is not among the vars is nil, which is falsy. Agent Zero's simpleeval raises
// instead and the whole {{if}} block is then left in the output unprocessed; a missing var
// reading as "not set" is what a template author means far more often.
func (e nameExpr) eval(vars map[string]any) (any, error) { return vars[e.name], nil }

func (e notExpr) eval(vars map[string]any) (any, error) {
	v, err := e.x.eval(vars)
	if err != nil {
		return nil, err
	}
	return !truthy(v), nil
}

func (e negExpr) eval(vars map[string]any) (any, error) {
	v, err := e.x.eval(vars)
	if err != nil {
		return nil, err
	}
	n, ok := toNumber(v)
	if !ok {
		return nil, fmt.Errorf("%w: cannot negate %s", ErrEval, typeName(v))
	}
	if n.isInt {
		if n.i == math.MinInt64 {
			return -float64(n.i), nil
		}
		return -n.i, nil
	}
	return -n.f, nil
}

func (e andExpr) eval(vars map[string]any) (any, error) {
	l, err := e.l.eval(vars)
	if err != nil || !truthy(l) {
		return false, err
	}
	r, err := e.r.eval(vars)
	if err != nil {
		return nil, err
	}
	return truthy(r), nil
}

func (e orExpr) eval(vars map[string]any) (any, error) {
	l, err := e.l.eval(vars)
	if err != nil {
		return nil, err
	}
	if truthy(l) {
		return true, nil
	}
	r, err := e.r.eval(vars)
	if err != nil {
		return nil, err
	}
	return truthy(r), nil
}

func (e cmpExpr) eval(vars map[string]any) (any, error) {
	l, err := e.operands[0].eval(vars)
	if err != nil {
		return nil, err
	}
	for i, op := range e.ops {
		r, err := e.operands[i+1].eval(vars)
		if err != nil {
			return nil, err
		}
		ok, err := compare(op, l, r)
		if err != nil {
			return nil, err
		}
		if !ok {
			return false, nil
		}
		l = r
	}
	return true, nil
}

// compare applies one comparison operator with Python's rules: equality between different kinds
// is false rather than an error, while ordering them is an error.
func compare(op string, l, r any) (bool, error) {
	switch op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "in":
		return contains(r, l)
	case "not in":
		in, err := contains(r, l)
		return !in, err
	}
	c, err := order(l, r)
	if err != nil {
		return false, fmt.Errorf("%s %s %s: %w", typeName(l), op, typeName(r), err)
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	default: // ">="
		return c >= 0, nil
	}
}

func equal(l, r any) bool {
	if l == nil || r == nil {
		return l == nil && r == nil
	}
	if ln, ok := toNumber(l); ok {
		rn, ok := toNumber(r)
		return ok && ln.cmp(rn) == 0 && !ln.isNaN() && !rn.isNaN()
	}
	if ls, ok := toString(l); ok {
		rs, ok := toString(r)
		return ok && ls == rs
	}
	if lb, ok := toBool(l); ok {
		rb, ok := toBool(r)
		return ok && lb == rb
	}
	return reflect.DeepEqual(l, r)
}

func order(l, r any) (int, error) {
	if ln, ok := toNumber(l); ok {
		if rn, ok := toNumber(r); ok {
			return ln.cmp(rn), nil
		}
	}
	if ls, ok := toString(l); ok {
		if rs, ok := toString(r); ok {
			return strings.Compare(ls, rs), nil
		}
	}
	return 0, fmt.Errorf("%w: values cannot be ordered", ErrEval)
}

// contains implements Python's "needle in haystack" for strings (substring), lists (element) and
// maps (key).
func contains(haystack, needle any) (bool, error) {
	if hs, ok := toString(haystack); ok {
		ns, ok := toString(needle)
		if !ok {
			return false, fmt.Errorf("%w: %s in string", ErrEval, typeName(needle))
		}
		return strings.Contains(hs, ns), nil
	}
	rv := reflect.ValueOf(haystack)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := range rv.Len() {
			if equal(rv.Index(i).Interface(), needle) {
				return true, nil
			}
		}
		return false, nil
	case reflect.Map:
		for _, k := range rv.MapKeys() {
			if equal(k.Interface(), needle) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: in %s", ErrEval, typeName(haystack))
}

// number keeps integers exact and falls back to float64 only when a float is involved.
type number struct {
	i     int64
	f     float64
	isInt bool
}

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

func (n number) isNaN() bool { return !n.isInt && math.IsNaN(n.f) }

func (n number) cmp(o number) int {
	if n.isInt && o.isInt {
		switch {
		case n.i < o.i:
			return -1
		case n.i > o.i:
			return 1
		}
		return 0
	}
	a, b := n.float(), o.float()
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return number{i: int64(x), isInt: true}, true
	case int64:
		return number{i: x, isInt: true}, true
	case float64:
		return number{f: x}, true
	case bool, string, nil:
		return number{}, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return number{i: rv.Int(), isInt: true}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return number{f: float64(u)}, true
		}
		return number{i: int64(u), isInt: true}, true
	case reflect.Float32, reflect.Float64:
		return number{f: rv.Float()}, true
	}
	return number{}, false
}

func toString(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

func toBool(v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Bool {
		return rv.Bool(), true
	}
	return false, false
}

// truthy follows Python: nil, false, zero, and empty strings, lists and maps are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array, reflect.Chan:
		return rv.Len() > 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Pointer, reflect.Interface, reflect.Func:
		return !rv.IsNil()
	}
	return true
}

func typeName(v any) string {
	if v == nil {
		return "None"
	}
	if _, ok := toNumber(v); ok {
		return "number"
	}
	if _, ok := toString(v); ok {
		return "string"
	}
	if _, ok := toBool(v); ok {
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// The condition grammar, loosest binding first (Python's precedence):
//
//	or    = and { "or" and }
//	and   = not { "and" not }
//	not   = "not" not | cmp
//	cmp   = unary { ("==" | "!=" | "<" | ">" | "<=" | ">=" | "in" | "not" "in") unary }
//	unary = "-" unary | atom
//	atom  = name | number | string | True | False | None | "(" or ")"
type exprParser struct {
	toks []exprTok
	pos  int
}

type exprTokKind int

const (
	tokEOF exprTokKind = iota
	tokName
	tokNumber
	tokString
	tokOp
)

type exprTok struct {
	kind exprTokKind
	text string // name, operator, or raw number
	str  string // decoded string literal
}

// parseExpr parses a condition; the error says what is wrong without the file context, which
// the template parser adds.
func parseExpr(src string) (expr, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	return e, nil
}

func (p *exprParser) peek() exprTok { return p.toks[p.pos] }

func (p *exprParser) next() exprTok {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *exprParser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tokName && t.text == w
}

func (p *exprParser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isWord("or") {
		p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = orExpr{l, r}
	}
	return l, nil
}

func (p *exprParser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isWord("and") {
		p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = andExpr{l, r}
	}
	return l, nil
}

func (p *exprParser) parseNot() (expr, error) {
	if p.isWord("not") {
		p.next()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return notExpr{x}, nil
	}
	return p.parseCmp()
}

func (p *exprParser) parseCmp() (expr, error) {
	first, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	c := cmpExpr{operands: []expr{first}}
	for {
		op, ok := p.cmpOp()
		if !ok {
			break
		}
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.operands = append(c.operands, r)
	}
	if len(c.ops) == 0 {
		return first, nil
	}
	return c, nil
}

func (p *exprParser) cmpOp() (string, bool) {
	t := p.peek()
	switch {
	case t.kind == tokOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="):
		p.next()
		return t.text, true
	case t.kind == tokName && t.text == "in":
		p.next()
		return "in", true
	case t.kind == tokName && t.text == "not" && p.toks[p.pos+1].kind == tokName && p.toks[p.pos+1].text == "in":
		p.pos += 2
		return "not in", true
	}
	return "", false
}

func (p *exprParser) parseUnary() (expr, error) {
	if t := p.peek(); t.kind == tokOp && t.text == "-" {
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if lit, ok := x.(litExpr); ok {
			// Fold literals so "-1" costs nothing at render time.
			v, err := negExpr{lit}.eval(nil)
			if err != nil {
				return nil, err
			}
			return litExpr{v}, nil
		}
		return negExpr{x}, nil
	}
	return p.parseAtom()
}

func (p *exprParser) parseAtom() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokEOF:
		return nil, fmt.Errorf("unexpected end of condition")
	case tokString:
		return litExpr{t.str}, nil
	case tokNumber:
		if i, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return litExpr{i}, nil
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t.text)
		}
		return litExpr{f}, nil
	case tokName:
		switch t.text {
		case "True", "true":
			return litExpr{true}, nil
		case "False", "false":
			return litExpr{false}, nil
		case "None", "null", "nil":
			return litExpr{nil}, nil
		case "and", "or", "not", "in":
			return nil, fmt.Errorf("unexpected %q", t.text)
		}
		return nameExpr{t.text}, nil
	case tokOp:
		if t.text == "(" {
			e, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if c := p.next(); c.kind != tokOp || c.text != ")" {
				return nil, fmt.Errorf("missing )")
			}
			return e, nil
		}
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

func lexExpr(src string) ([]exprTok, error) {
	var toks []exprTok
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			toks = append(toks, exprTok{kind: tokName, text: src[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_' ||
				src[j] == 'e' || src[j] == 'E' || (src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, exprTok{kind: tokNumber, text: strings.ReplaceAll(src[i:j], "_", "")})
			i = j
		case c == '"' || c == '\'':
			s, n, err := lexString(src[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, exprTok{kind: tokString, text: src[i : i+n], str: s})
			i += n
		case c == '(' || c == ')' || c == '-':
			toks = append(toks, exprTok{kind: tokOp, text: src[i : i+1]})
			i++
		case c == '=' || c == '!' || c == '<' || c == '>':
			if i+1 < len(src) && src[i+1] == '=' {
				toks = append(toks, exprTok{kind: tokOp, text: src[i : i+2]})
				i += 2
				continue
			}
			if c == '<' || c == '>' {
				toks = append(toks, exprTok{kind: tokOp, text: src[i : i+1]})
				i++
				continue
			}
			return nil, fmt.Errorf("unexpected %q (use == or !=)", src[i:i+1])
		default:
			return nil, fmt.Errorf("unexpected %q", string(rune(c)))
		}
	}
	return append(toks, exprTok{kind: tokEOF}), nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lexString decodes a quoted literal at the start of src and reports how many bytes it used.
func lexString(src string) (string, int, error) {
	q := src[0]
	var b strings.Builder
	for i := 1; i < len(src); i++ {
		c := src[i]
		switch c {
		case q:
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i >= len(src) {
				return "", 0, fmt.Errorf("unterminated string")
			}
			switch e := src[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			default:
				// Python keeps unknown escapes as written.
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}
