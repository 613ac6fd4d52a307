package dirtyjson

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Canonical encodes v as deterministic, compact JSON: object keys sorted, no HTML escaping (so code
// stays readable when displayed), no trailing newline. Two values that Canonical maps to the same string
// are the same request, which is what repeat detection needs.
//
// Values produced by this package always encode. For anything encoding/json rejects (NaN, ±Inf,
// channels, funcs) it falls back to fmt's %v, which also prints maps in sorted key order.
func Canonical(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
