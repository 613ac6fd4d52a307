package mcpclient

import (
	"strings"
	"testing"
)

// TestCheckSchema: a server's schema is offered as it is when it is a
// JSON Schema of an object within the bounds; anything else becomes any
// object, with the reason.
func TestCheckSchema(t *testing.T) {
	nested := func(levels int) string {
		return strings.Repeat(`{"type":"object","properties":{"a":`, levels) + `{}` + strings.Repeat(`}}`, levels)
	}
	for _, tt := range []struct {
		name, schema, why string // why: a part of the reason; "" when the schema is kept
	}{
		{"an object schema", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, ""},
		{"an ECMAScript pattern Go cannot compile", `{"type":"object","properties":{"q":{"type":"string","pattern":"^(?!tmp)"}}}`, ""},
		{"braces inside strings", `{"type":"object","description":"` + strings.Repeat("{[", 100) + `"}`, ""},
		{"a local $ref", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/s"}}}`, ""},
		{"nested as deep as allowed", nested(maxSchemaDepth/2 - 1), ""},
		{"missing", ``, "none"},
		{"blank", "  \n", "none"},
		{"invalid JSON", `{"type":"object",`, "not valid JSON"},
		{"two values", `{"type":"object"} {}`, "not valid JSON"},
		{"a string", `"object"`, "not a JSON object"},
		{"an array", `[{"type":"object"}]`, "not a JSON object"},
		{"null", `null`, `not "object"`},
		{"no type", `{"properties":{}}`, `not "object"`},
		{"an array's schema", `{"type":"array","items":{}}`, `not "object"`},
		{"a list of types", `{"type":["object","null"]}`, `not "object"`},
		{"properties that are not schemas", `{"type":"object","properties":{"x":5}}`, "not a JSON Schema"},
		{"an unknown type", `{"type":"object","properties":{"x":{"type":"str"}}}`, "not a JSON Schema"},
		{"a file $ref", `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`, "not a JSON Schema"},
		{"a remote $ref", `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`, "not a JSON Schema"},
		{"huge", `{"type":"object","description":"` + strings.Repeat("x", MaxSchema) + `"}`, "more than 16384"},
		{"deeply nested", nested(maxSchemaDepth), "levels deep"},
		{"very deeply nested, small", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "levels deep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, why := checkSchema([]byte(tt.schema))
			switch {
			case tt.why == "" && (why != "" || string(got) != tt.schema):
				t.Errorf("checkSchema(%.80s) = %s, %q; want it kept", tt.schema, got, why)
			case tt.why != "" && (string(got) != `{"type":"object"}` || !strings.Contains(why, tt.why)):
				t.Errorf("checkSchema(%.80s) = %s, %q; want any object because %q", tt.schema, got, why, tt.why)
			}
		})
	}
}
