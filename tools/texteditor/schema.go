package texteditor

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// argsSchema is the JSON Schema of a method's arguments of type T, as
// jsonschema-go generates it from T's fields (a field without omitempty
// is required), made as lenient as the tool is: properties T does not
// name are allowed (the tool ignores them), and null is not offered (a
// pointer field tells a missing argument from a zero one; null counts as
// missing). package tools has the same rule for its tools.
func argsSchema[T any]() json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // a programmer error
	}
	lenient(s)
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
