package tools

import (
	"encoding/json"
	"reflect"
	"slices"
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

// argsSchema is the schema of arguments of type T, made as lenient as the
// tools are: properties T does not name are allowed (the tools ignore
// them; memory_save keeps them as metadata), and null is not offered (a
// pointer field tells a missing argument from a zero one; null counts as
// missing). edit, when set, adds what the struct cannot say. A type
// jsonschema-go cannot describe is a programmer error.
func argsSchema[T any](edit func(*jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: shapes})
	if err != nil {
		panic(err)
	}
	lenient(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{} // some endpoints want the key
	}
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// lenient drops, from s and the schemas of its properties and items, the
// additionalProperties:false of a struct and the null of a pointer or a
// slice.
func lenient(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if a := s.AdditionalProperties; a != nil && a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	if i := slices.Index(s.Types, "null"); i >= 0 && len(s.Types) == 2 {
		s.Type, s.Types = s.Types[1-i], nil
	}
	for _, p := range s.Properties {
		lenient(p)
	}
	lenient(s.Items)
}

// specOf is the spec of a tool without methods whose arguments are a T,
// computed once.
func specOf[T any](edit func(*jsonschema.Schema)) func() []loop.ToolSpec {
	return sync.OnceValue(func() []loop.ToolSpec {
		return []loop.ToolSpec{{Parameters: argsSchema[T](edit)}}
	})
}
