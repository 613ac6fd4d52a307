package loop

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// ArgsSchema is the JSON Schema of a tool's arguments of type T (see
// [Specified]), made as lenient as Zero's tools are: properties T does not
// name are allowed (the tools ignore them; memory_save keeps them as
// metadata), and null is not offered (a pointer field tells a missing
// argument from a zero one; null counts as missing). The object always has
// its properties key, which some endpoints want. opts are jsonschema-go's
// (types it should describe its own way); edit, when set, adds what the
// struct cannot say. A type jsonschema-go cannot describe is a programmer
// error: it panics.
func ArgsSchema[T any](opts *jsonschema.ForOptions, edit func(*jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[T](opts)
	if err != nil {
		panic(err)
	}
	lenient(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
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
