package mcp

import (
	"encoding/json"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' schemas are generated from their argument and result structs,
// which are the one source of the fields' names, types, descriptions (the
// jsonschema tag) and required-ness (a field without omitempty is
// required). What a struct cannot say (bounds, enums of values known at
// run time) is set on the generated schema by the tool's definition.

// schemas caches the generated schema of each type (bind looks it up on
// every call).
var schemas sync.Map // reflect.Type → *jsonschema.Schema

// generated is the JSON schema of t as jsonschema-go generates it, shared:
// callers must not change it. A type it cannot describe is a programmer
// error.
func generated(t reflect.Type) *jsonschema.Schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*jsonschema.Schema)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		panic(err)
	}
	schemas.Store(t, s)
	return s
}

// schemaOf is a copy of t's generated schema, for a tool to complete.
func schemaOf(t reflect.Type) *jsonschema.Schema { return generated(t).CloneSchemas() }

// inputSchema is the input schema of a tool whose arguments are a T. It
// allows properties the struct does not name (jsonschema-go forbids them):
// clients add arguments of their own, such as Gemini CLI's
// wait_for_previous, and bind ignores them. A pointer field (used to tell
// a missing argument from false) is not nullable: null counts as missing.
func inputSchema[T any]() *jsonschema.Schema {
	s := schemaOf(reflect.TypeFor[T]())
	s.AdditionalProperties = nil
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{} // some clients want the key
	}
	for _, p := range s.Properties {
		if i := slices.Index(p.Types, "null"); i >= 0 && len(p.Types) == 2 {
			p.Type, p.Types = p.Types[1-i], nil
		}
	}
	return s
}

// outputSchema is the output schema of a tool whose structured result is
// a T, exactly as generated: what the handlers return is a T, so every
// result validates against it.
func outputSchema[T any]() *jsonschema.Schema {
	return schemaOf(reflect.TypeFor[T]())
}

// prop is the schema of the property name of object schema s; a missing
// one is a programmer error.
func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p := s.Properties[name]
	if p == nil {
		panic("schema has no property " + name)
	}
	return p
}

// required lists the required properties of the arguments dst points to.
func required(dst any) []string {
	return generated(reflect.TypeOf(dst).Elem()).Required
}

// raw is s as JSON; a schema that does not encode is a programmer error.
func raw(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// enum lists values as a schema's enum.
func enum[T any](values ...T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
