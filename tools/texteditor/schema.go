package texteditor

import (
	"encoding/json"

	"github.com/zeroagent/zero/loop"
)

// argsSchema is the JSON Schema of a method's arguments of type T, as
// jsonschema-go generates it from T's fields (a field without omitempty
// is required), made as lenient as the tool is: properties T does not
// name are allowed (the tool ignores them), and null is not offered (a
// pointer field tells a missing argument from a zero one; null counts as
// missing): loop.ArgsSchema's rule, which package tools follows too.
func argsSchema[T any]() json.RawMessage { return loop.ArgsSchema[T](nil, nil) }
