package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// testPayload records which extensions ran (built-ins append their name to Seen; scripts answer
// {"seen": [...]}) and carries extras a script may add.
type testPayload struct {
	Extras map[string]string
	Seen   []string
}

func (p *testPayload) ScriptInput() any {
	return map[string]any{"extras": p.Extras, "seen": p.Seen}
}

func (p *testPayload) ApplyScript(answer json.RawMessage) error {
	var extras map[string]string
	var seen []string
	if err := UnmarshalAnswer(answer, map[string]any{"extras": &extras, "seen": &seen}); err != nil {
		return err
	}
	if p.Extras == nil && len(extras) > 0 {
		p.Extras = map[string]string{}
	}
	for k, v := range extras {
		p.Extras[k] = v
	}
	p.Seen = append(p.Seen, seen...)
	return nil
}

// mark is a built-in that records its name in the payload.
func mark(name string) Func {
	return func(_ context.Context, p Payload) error {
		tp := p.(*testPayload)
		tp.Seen = append(tp.Seen, name)
		return nil
	}
}

// writeScript writes an executable #!/bin/sh script dir/point/file.
func writeScript(t *testing.T, dir, point, file, body string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, point, file), "#!/bin/sh\n"+body+"\n", 0o755)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := writeFileMode(path, content, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func mkScript(path, content string) error { return writeFileMode(path, content, 0o755) }

func writeFileMode(path, content string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), mode)
}

// warnings collects what OnWarning reports.
type warnings struct {
	mu   sync.Mutex
	list []Warning
}

func (w *warnings) add(x Warning) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, x)
}

func (w *warnings) get() []Warning {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}

func mustResolve(t *testing.T, reg *Registry, layers []Layer, opts Options) *Set {
	t.Helper()
	s, err := Resolve(reg, layers, opts)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return s
}
