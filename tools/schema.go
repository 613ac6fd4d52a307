package tools

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/zeroagent/zero/loop"
)

// Each tool declares the JSON Schema of its arguments (loop.Specified),
// generated from its argument struct, the one source of the arguments'
// names, types, descriptions (the jsonschema tag) and required-ness (a
// field without omitempty is required). The struct is the one Execute
// decodes into, where it decodes; the tools that read call.Args themselves
// have one that says what they read.

// Arguments Agent Zero's tools take in more than one shape. They decode as
// any, and their schemas allow each shape (anyOf, not a list of types,
// which some OpenAI-compatible endpoints refuse).
type (
	// numberOrString is a number, or a string of one: models write
	// memory_load's "threshold": "0.7".
	numberOrString any
	// stringOrList is one string or a list of them: document_query's
	// document, memory_delete's ids.
	stringOrList any
	// boolOrString is true or "true": Agent Zero's prompts pass
	// call_subordinate's reset as a string.
	boolOrString any
)

var shapes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[numberOrString](): {AnyOf: []*jsonschema.Schema{{Type: "number"}, {Type: "string"}}},
	reflect.TypeFor[stringOrList](): {AnyOf: []*jsonschema.Schema{
		{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}},
	reflect.TypeFor[boolOrString](): {AnyOf: []*jsonschema.Schema{{Type: "boolean"}, {Type: "string"}}},
}

// argsSchema is the schema of arguments of type T (loop.ArgsSchema), with
// the shapes above.
func argsSchema[T any](edit func(*jsonschema.Schema)) json.RawMessage {
	return loop.ArgsSchema[T](&jsonschema.ForOptions{TypeSchemas: shapes}, edit)
}

// specOf is the spec of a tool without methods whose arguments are a T,
// computed once.
func specOf[T any](edit func(*jsonschema.Schema)) func() []loop.ToolSpec {
	return sync.OnceValue(func() []loop.ToolSpec {
		return []loop.ToolSpec{{Parameters: argsSchema[T](edit)}}
	})
}
