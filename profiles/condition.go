package profiles

// Condition is a compiled Python-style boolean expression, the language of
// the prompt templates' {{if}}: names, string and number literals, ==, !=,
// <, <=, >, >=, in, not in, and, or, not and parentheses. Memory filters
// (memory_load's filter, as Agent Zero writes them: area == 'solutions')
// use it too.
type Condition struct {
	src string
	e   expr
}

// CompileCondition parses src. The error names what is wrong in it.
func CompileCondition(src string) (*Condition, error) {
	e, err := parseExpr(src)
	if err != nil {
		return nil, err
	}
	return &Condition{src: src, e: e}, nil
}

// Eval reports whether the condition holds for vars. A name that is not in
// vars reads as None (falsy); comparing values that cannot be compared is
// an error wrapping [ErrEval].
func (c *Condition) Eval(vars map[string]any) (bool, error) {
	v, err := c.e.eval(vars)
	if err != nil {
		return false, err
	}
	return truthy(v), nil
}

// String returns the source of the condition.
func (c *Condition) String() string { return c.src }
