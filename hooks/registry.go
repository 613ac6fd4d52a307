package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Payload is what an extension point passes to its extensions. The engine defines one payload type per
// point; built-ins usually type-assert it to that concrete type.
type Payload interface {
	// ScriptInput is the JSON-serialisable view written to a script extension's stdin (under "payload").
	ScriptInput() any
	// ApplyScript applies a script's JSON answer (a non-empty JSON object from its stdout). The payload
	// decides which fields its point allows (e.g. "extras", "chunk", "tool_args", "block") and returns
	// an error for anything else. It should validate the whole answer before changing anything, so a
	// rejected answer leaves the payload as it was; [UnmarshalAnswer] helps with that.
	ApplyScript(answer json.RawMessage) error
}

// Func is a built-in (Go) extension. Its error stops [Set.Call] and is returned wrapped in an
// [*ExtensionError] (errors.Is and errors.As still reach the original).
type Func func(ctx context.Context, p Payload) error

// Registry holds the built-in extensions, registered by the engine at start-up. The zero value is not
// usable; call [NewRegistry]. A Registry is safe for concurrent use, though registering while
// [Resolve] runs leaves it unspecified whether the new built-in is seen.
type Registry struct {
	mu       sync.Mutex
	builtins map[string][]builtin // point -> extensions, in registration order
	declared map[string]bool      // points the engine calls besides Agent Zero's
}

type builtin struct {
	name string
	fn   Func
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{builtins: map[string][]builtin{}, declared: map[string]bool{}}
}

// Register adds the built-in fn under name at point. name must be a usable file name (non-empty, no
// path separator, not hidden, not ending in ".disabled") so that a script can override or disable it.
// Register panics on a duplicate point/name pair, an empty point, an invalid name or a nil fn: those
// are programmer errors.
func (r *Registry) Register(point, name string, fn Func) {
	switch {
	case point == "" || strings.ContainsAny(point, `/\`):
		panic(fmt.Sprintf("hooks: Register: invalid point %q", point))
	case !validName(name):
		panic(fmt.Sprintf("hooks: Register: invalid extension name %q at %s", name, point))
	case fn == nil:
		panic(fmt.Sprintf("hooks: Register: nil Func for %s/%s", point, name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.builtins[point] {
		if b.name == name {
			panic(fmt.Sprintf("hooks: Register: duplicate extension %s/%s", point, name))
		}
	}
	r.builtins[point] = append(r.builtins[point], builtin{name: name, fn: fn})
}

// Declare marks points the engine calls in addition to Agent Zero's (for example a tool's own
// "text_editor_write_before"), so that [Resolve] does not report their script folders as
// [ErrUnknownPoint]. Points with a registered built-in are known already.
func (r *Registry) Declare(points ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range points {
		r.declared[p] = true
	}
}

// snapshot copies the registry so Resolve works on a consistent view without holding the lock.
func (r *Registry) snapshot() (map[string][]builtin, map[string]bool) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := make(map[string][]builtin, len(r.builtins))
	for p, list := range r.builtins {
		b[p] = append([]builtin(nil), list...)
	}
	d := make(map[string]bool, len(r.declared))
	for p := range r.declared {
		d[p] = true
	}
	return b, d
}

func validName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		!strings.HasPrefix(name, ".") &&
		!strings.ContainsAny(name, `/\`) &&
		!strings.HasSuffix(name, disabledExt)
}
