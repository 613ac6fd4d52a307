package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zeroagent/zero/cut"
)

// permissive is the schema of a tool whose server's own cannot be offered:
// any object.
var permissive = json.RawMessage(`{"type":"object"}`)

// maxSchemaDepth bounds how deeply a server's schema may nest objects and
// arrays: real ones nest a few levels; a validator or an endpoint may
// recurse once per level.
const maxSchemaDepth = 32

// checkSchema returns a server's input schema when it can be offered to
// the model as it is, else permissive and why. A server may be careless or
// hostile, and its schema goes into every request: one too large, nested
// too deeply or not a JSON Schema of an object would bloat them or have
// the endpoint refuse them all.
func checkSchema(raw json.RawMessage) (json.RawMessage, string) {
	switch {
	case len(bytes.TrimSpace(raw)) == 0:
		return permissive, "it has none"
	case len(raw) > MaxSchema:
		return permissive, fmt.Sprintf("it is %d bytes, more than %d", len(raw), MaxSchema)
	case !json.Valid(raw):
		return permissive, "it is not valid JSON"
	case depth(raw) > maxSchemaDepth:
		return permissive, fmt.Sprintf("it nests more than %d levels deep", maxSchemaDepth)
	}
	var obj struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return permissive, "it is not a JSON object"
	}
	if obj.Type != "object" {
		return permissive, `its type is not "object"`
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return permissive, "it is not valid JSON"
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(nil)             // a $ref leads nowhere: not to a file, not to the network
	c.UseRegexpEngine(anyRegexp) // an ECMAScript pattern Go cannot compile is still a schema
	if err := c.AddResource("schema.json", doc); err != nil {
		return permissive, "it is not a JSON Schema: " + cut.Clip(err.Error(), 200)
	}
	if _, err := c.Compile("schema.json"); err != nil {
		return permissive, "it is not a JSON Schema: " + cut.Clip(err.Error(), 200)
	}
	return raw, ""
}

// depth is how deeply the valid JSON b nests objects and arrays.
func depth(b []byte) int {
	d, most := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// anyRegexp is a regexp engine that takes every pattern: the schema is
// checked, never used to validate here.
func anyRegexp(s string) (jsonschema.Regexp, error) { return pattern(s), nil }

type pattern string

func (p pattern) String() string        { return string(p) }
func (pattern) MatchString(string) bool { return true }
