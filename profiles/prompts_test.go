package profiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLookupPriority(t *testing.T) {
	t.Parallel()
	high := mapFS("a.md", "high a", "main.md", `{{ include "a.md" }}|{{ include "b.md" }}|{{ include "c.md" }}`)
	mid := mapFS("a.md", "mid a", "b.md", "mid b")
	low := mapFS("a.md", "low a", "b.md", "low b", "c.md", "low c")
	tests := []struct {
		name string
		dirs []fs.FS
		file string
		want string
	}{
		{"first directory wins", []fs.FS{high, mid, low}, "a.md", "high a"},
		{"falls through to the next", []fs.FS{high, mid, low}, "b.md", "mid b"},
		{"reaches the last", []fs.FS{high, mid, low}, "c.md", "low c"},
		{"order matters", []fs.FS{low, mid, high}, "a.md", "low a"},
		{"includes use the whole list", []fs.FS{high, mid, low}, "main.md", "high a|mid b|low c"},
		{"nil directories are skipped", []fs.FS{nil, mid, nil, low}, "b.md", "mid b"},
		{"defaults come last", []fs.FS{mid}, "agent.system.main.specifics.md", ""},
		{"a directory can override a default", []fs.FS{mapFS("fw.msg_repeat.md", "again?")}, "fw.msg_repeat.md", "again?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New(tt.dirs...).Render(tt.file, nil)
			if err != nil {
				t.Fatalf("Render(%q): %v", tt.file, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func TestIncludeOriginal(t *testing.T) {
	t.Parallel()
	top := mapFS(
		"x.md", "top[{{ include original }}]",
		"role.md", "top role",
		"solo.md", "solo[{{include original}}]",
	)
	mid := mapFS(
		"x.md", "mid[{{include original}}]",
		"y.md", "mid y[{{ include original }}]",
	)
	low := mapFS(
		"x.md", "low {{v}} {{ include \"role.md\" }}",
		"y.md", "low y",
		"role.md", "low role",
		"z.md", `{{ include "y.md" }}`,
	)
	tests := []struct {
		name string
		file string
		want string
	}{
		{"chains through three directories", "x.md", "top[mid[low 1 top role]]"},
		{"starts below the file's own directory", "y.md", "mid y[low y]"},
		{"an included file extends from its own directory", "z.md", "mid y[low y]"},
		{"no original renders nothing", "solo.md", "solo[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := New(top, mid, low).Render(tt.file, map[string]any{"v": 1})
			if err != nil {
				t.Fatalf("Render(%q): %v", tt.file, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func TestIncludeOriginalExtendsDefault(t *testing.T) {
	t.Parallel()
	p := New(mapFS("agent.system.main.tips.md", "{{ include original }}- tip from the profile\n"))
	got, err := p.Render("agent.system.main.tips.md", map[string]any{"workdir_path": "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	def, err := New().Render("agent.system.main.tips.md", map[string]any{"workdir_path": "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	if want := def + "- tip from the profile\n"; got != want {
		t.Errorf("override = %q, want default + tip = %q", got, want)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	a := mapFS("agent.system.tool.b.md", "", "agent.system.tool.a.md", "", "other.md", "", "agent.system.tool.a.py", "")
	b := mapFS("agent.system.tool.a.md", "", "agent.system.tool.c.md", "")
	b["agent.system.tool.dir.md/inner.md"] = &fstest.MapFile{Data: nil}
	tests := []struct {
		name    string
		dirs    []fs.FS
		pattern string
		want    []string
	}{
		{
			"dedup and sort across dirs and defaults", []fs.FS{a, b}, "agent.system.tool.*.md",
			[]string{"agent.system.tool.a.md", "agent.system.tool.b.md", "agent.system.tool.behaviour.md",
				"agent.system.tool.c.md", "agent.system.tool.call_sub.md", "agent.system.tool.code_exe.md", "agent.system.tool.document_query.md", "agent.system.tool.input.md", "agent.system.tool.mcp_resources.md", "agent.system.tool.memory.md", "agent.system.tool.response.md", "agent.system.tool.search_engine.md", "agent.system.tool.skills.md", "agent.system.tool.text_editor.md", "agent.system.tool.todo.md", "agent.system.tool.vision_load.md"},
		},
		{"defaults only", nil, "agent.system.tool.*.md", []string{"agent.system.tool.behaviour.md", "agent.system.tool.call_sub.md", "agent.system.tool.code_exe.md", "agent.system.tool.document_query.md", "agent.system.tool.input.md", "agent.system.tool.mcp_resources.md", "agent.system.tool.memory.md", "agent.system.tool.response.md", "agent.system.tool.search_engine.md", "agent.system.tool.skills.md", "agent.system.tool.text_editor.md", "agent.system.tool.todo.md", "agent.system.tool.vision_load.md"}},
		{"exact name", []fs.FS{a}, "other.md", []string{"other.md"}},
		{"no match", []fs.FS{a}, "nothing.*", nil},
		{"bad pattern", []fs.FS{a}, "[", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(tt.dirs...)
			for range 2 { // the second call is served from the cache
				if diff := cmp.Diff(tt.want, p.Names(tt.pattern)); diff != "" {
					t.Errorf("Names(%q) (-want +got):\n%s", tt.pattern, diff)
				}
			}
		})
	}
}

func TestNamesReturnsACopy(t *testing.T) {
	t.Parallel()
	p := New()
	got := p.Names("fw.*.md")
	if len(got) == 0 {
		t.Fatal("no fw.*.md in the default set")
	}
	got[0] = "changed"
	if again := p.Names("fw.*.md"); again[0] == "changed" {
		t.Error("Names returned its cached slice; a caller's edit leaked into later results")
	}
}

// TestOSDirectory checks a real folder on disk, the way a profile is loaded, and that the
// Prompts keeps what it parsed: a Prompts is a snapshot.
func TestOSDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.system.main.role.md")
	if err := os.WriteFile(file, []byte("## Role\nI am {{agent_name}} from disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(os.DirFS(dir))
	got, err := p.Render("agent.system.main.role.md", map[string]any{"agent_name": "A3"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "## Role\nI am A3 from disk\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := os.WriteFile(file, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := p.Render("agent.system.main.role.md", map[string]any{"agent_name": "A3"})
	if err != nil || again != got {
		t.Errorf("second render = %q, %v; want the cached %q", again, err, got)
	}
}

func TestInvalidNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", ".", "../x.md", "/abs.md", "a//b.md"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := New().Render(name, nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("Render(%q) err = %v, want ErrNotFound", name, err)
			}
		})
	}
}

// failingFS returns an error other than "not exist", which must not be mistaken for a miss.
type failingFS struct{}

func (failingFS) Open(string) (fs.File, error) { return nil, fs.ErrPermission }

func TestReadErrorIsNotAMiss(t *testing.T) {
	t.Parallel()
	_, err := New(failingFS{}).Render("fw.msg_repeat.md", nil)
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("err = %v, want fs.ErrPermission", err)
	}
}

// TestConcurrentRender renders overlapping files from many goroutines on a fresh Prompts, so the
// race detector sees the first parse, the caches and the include resolution contend.
func TestConcurrentRender(t *testing.T) {
	t.Parallel()
	p := New(mapFS("agent.system.main.role.md", "role {{agent_name}}\n"))
	vars := standardVars()
	want, err := New(mapFS("agent.system.main.role.md", "role {{agent_name}}\n")).Render("agent.system.main.md", vars)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for range 20 {
				got, err := p.Render("agent.system.main.md", vars)
				if err != nil {
					errs <- err
					return
				}
				if got != want {
					errs <- errors.New("concurrent render differs from a sequential one")
					return
				}
				p.Names("agent.system.tool.*.md")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRenderDoesNotMutateVars(t *testing.T) {
	t.Parallel()
	vars := map[string]any{"message": "m"}
	if _, err := New().Render("fw.user_message.md", vars); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"message": "m"}, vars); diff != "" {
		t.Errorf("vars changed (-want +got):\n%s", diff)
	}
}

func TestDefaultFSIsEmbedded(t *testing.T) {
	t.Parallel()
	b, err := fs.ReadFile(DefaultFS(), "agent.system.main.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `include "agent.system.main.role.md"`) {
		t.Errorf("agent.system.main.md does not include the role:\n%s", b)
	}
}
