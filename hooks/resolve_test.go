//go:build unix

package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// file is one entry of a test layout: layer index (0 = highest), point, file name, and whether it
// is executable.
type file struct {
	layer int
	point string
	name  string
	exec  bool
}

// buildLayers creates three layers (high, mid, low) under a temp dir and the given files.
func buildLayers(t *testing.T, files []file) []Layer {
	t.Helper()
	root := t.TempDir()
	layers := []Layer{
		{Name: "high", Dir: filepath.Join(root, "high")},
		{Name: "mid", Dir: filepath.Join(root, "mid")},
		{Name: "low", Dir: filepath.Join(root, "low")},
	}
	for _, f := range files {
		mode := os.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		writeFile(t, filepath.Join(layers[f.layer].Dir, f.point, f.name), "#!/bin/sh\n", mode)
	}
	return layers
}

func TestResolveMerge(t *testing.T) {
	t.Parallel()
	const pt = MessageLoopStart
	type ext struct{ Name, Layer, File string } // File: base name of the script, "" for built-ins
	tests := []struct {
		name     string
		builtins []string
		files    []file
		want     []ext
	}{
		{
			name:     "name order across built-ins and scripts",
			builtins: []string{"_30_c", "_10_a"},
			files: []file{
				{2, pt, "_20_b.sh", true},
				{0, pt, "_05_z.py", true},
				{1, pt, "_15_m", true},
			},
			want: []ext{
				{"_05_z", "high", "_05_z.py"}, {"_10_a", "built-in", ""}, {"_15_m", "mid", "_15_m"},
				{"_20_b", "low", "_20_b.sh"}, {"_30_c", "built-in", ""},
			},
		},
		{
			name:     "script overrides a built-in of the same name",
			builtins: []string{"_10_iteration_no", "_20_other"},
			files:    []file{{2, pt, "_10_iteration_no.sh", true}},
			want:     []ext{{"_10_iteration_no", "low", "_10_iteration_no.sh"}, {"_20_other", "built-in", ""}},
		},
		{
			name: "higher layer overrides a lower layer's script",
			files: []file{
				{2, pt, "_20_x.sh", true},
				{0, pt, "_20_x.py", true},
				{1, pt, "_20_x.rb", true},
			},
			want: []ext{{"_20_x", "high", "_20_x.py"}},
		},
		{
			name:     "disabled removes a built-in and a lower layer's script",
			builtins: []string{"_10_iteration_no", "_50_keep"},
			files: []file{
				{2, pt, "_20_b.sh", true},
				{1, pt, "_10_iteration_no.disabled", false},
				{0, pt, "_20_b.disabled", false},
			},
			want: []ext{{"_50_keep", "built-in", ""}},
		},
		{
			name:     "script above a disabled marker wins",
			builtins: []string{"_10_a"},
			files: []file{
				{1, pt, "_10_a.disabled", false},
				{0, pt, "_10_a.sh", true},
			},
			want: []ext{{"_10_a", "high", "_10_a.sh"}},
		},
		{
			name:  "disabled marker below a script changes nothing",
			files: []file{{0, pt, "_20_b.sh", true}, {2, pt, "_20_b.disabled", false}},
			want:  []ext{{"_20_b", "high", "_20_b.sh"}},
		},
		{
			name:  "disabled marker beside its script in one layer wins",
			files: []file{{1, pt, "_20_b.sh", true}, {1, pt, "_20_b.disabled", false}, {2, pt, "_20_b.sh", true}},
		},
		{
			name: "hidden files, backups and folders are ignored",
			files: []file{
				{0, pt, ".hidden.sh", true},
				{0, pt, "_20_b.sh~", true},
				{0, pt, "lib/_30_helper.sh", true},
				{1, pt, "_40_d.sh", true},
			},
			want: []ext{{"_40_d", "mid", "_40_d.sh"}},
		},
		{
			name:     "other points are separate",
			builtins: []string{"_10_a"},
			files:    []file{{0, SystemPrompt, "_10_a.disabled", false}},
			want:     []ext{{"_10_a", "built-in", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry()
			for _, b := range tt.builtins {
				reg.Register(pt, b, mark(b))
			}
			var ws warnings
			s := mustResolve(t, reg, buildLayers(t, tt.files), Options{OnWarning: ws.add})
			var got []ext
			for _, in := range s.Extensions(pt) {
				got = append(got, ext{in.Name, in.Layer, filepath.Base(in.Path)})
				if in.Path == "" {
					got[len(got)-1].File = ""
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Extensions(%s) (-want +got):\n%s", pt, diff)
			}
			var names []string
			for _, e := range tt.want {
				names = append(names, e.Name)
			}
			if diff := cmp.Diff(names, s.Names(pt)); diff != "" {
				t.Errorf("Names(%s) (-want +got):\n%s", pt, diff)
			}
			if s.Has(pt) != (len(tt.want) > 0) {
				t.Errorf("Has(%s) = %v, want %v", pt, s.Has(pt), len(tt.want) > 0)
			}
			if w := ws.get(); len(w) > 0 {
				t.Errorf("unexpected warnings: %v", w)
			}
		})
	}
}

func TestResolveWarnings(t *testing.T) {
	t.Parallel()
	const pt = ToolExecuteBefore
	type warn struct {
		Point, Extension, File string
		Err                    error
	}
	tests := []struct {
		name    string
		files   []file
		extra   func(t *testing.T, layers []Layer) // more setup
		declare []string
		want    []warn
		names   []string // resolved at pt
	}{
		{
			name:  "non-executable file is reported once and skipped",
			files: []file{{0, pt, "_20_x.sh", false}, {1, pt, "_20_x.sh", true}, {2, pt, "README.md", false}},
			want: []warn{
				{pt, "_20_x", "_20_x.sh", ErrNotExecutable},
				{pt, "README", "README.md", ErrNotExecutable},
			},
			names: []string{"_20_x"},
		},
		{
			name:  "two scripts with one name in a layer keep the first",
			files: []file{{0, pt, "_20_x.py", true}, {0, pt, "_20_x.sh", true}},
			want:  []warn{{pt, "_20_x", "_20_x.sh", ErrDuplicateName}},
			names: []string{"_20_x"},
		},
		{
			name:  "unknown point folder",
			files: []file{{1, "tool_execute_befor", "_20_x.sh", true}},
			want:  []warn{{"tool_execute_befor", "", "tool_execute_befor", ErrUnknownPoint}},
		},
		{
			name:    "declared point is known",
			files:   []file{{1, "text_editor_write_before", "_20_x.sh", true}},
			declare: []string{"text_editor_write_before"},
		},
		{
			name: "executable outside a point folder",
			extra: func(t *testing.T, layers []Layer) {
				writeFile(t, filepath.Join(layers[0].Dir, "_10_oops.sh"), "#!/bin/sh\n", 0o755)
				writeFile(t, filepath.Join(layers[0].Dir, "README.md"), "docs", 0o644)
			},
			want: []warn{{"", "", "_10_oops.sh", ErrMisplaced}},
		},
		{
			name: "broken symlink",
			extra: func(t *testing.T, layers []Layer) {
				dir := filepath.Join(layers[0].Dir, pt)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "_30_link")); err != nil {
					t.Fatal(err)
				}
			},
			want: []warn{{pt, "_30_link", "_30_link", ErrNotExecutable}},
		},
		{
			name: "symlink to a script is a script",
			extra: func(t *testing.T, layers []Layer) {
				target := writeFile(t, filepath.Join(layers[2].Dir, "elsewhere", "real.sh"), "#!/bin/sh\n", 0o755)
				dir := filepath.Join(layers[0].Dir, pt)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(dir, "_30_link.sh")); err != nil {
					t.Fatal(err)
				}
			},
			want:  []warn{{"elsewhere", "", "elsewhere", ErrUnknownPoint}},
			names: []string{"_30_link"},
		},
		{
			name: "layer that is a file",
			extra: func(t *testing.T, layers []Layer) {
				writeFile(t, layers[1].Dir, "not a dir", 0o644)
			},
			want: []warn{{"", "", "mid", nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			layers := buildLayers(t, tt.files)
			if tt.extra != nil {
				tt.extra(t, layers)
			}
			reg := NewRegistry()
			reg.Declare(tt.declare...)
			var ws warnings
			s := mustResolve(t, reg, layers, Options{OnWarning: ws.add})
			var got []warn
			for _, w := range ws.get() {
				g := warn{w.Point, w.Extension, filepath.Base(w.Path), nil}
				for _, want := range tt.want {
					if want.Err != nil && errors.Is(w.Err, want.Err) {
						g.Err = want.Err
					}
				}
				if w.Err == nil {
					t.Errorf("warning without Err: %v", w)
				}
				if !strings.Contains(w.Error(), w.Path) {
					t.Errorf("warning %q does not name the path %s", w.Error(), w.Path)
				}
				got = append(got, g)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\nall: %v", diff, ws.get())
			}
			if diff := cmp.Diff(tt.names, s.Names(pt)); diff != "" {
				t.Errorf("Names(%s) (-want +got):\n%s", pt, diff)
			}
		})
	}
}

func TestResolveNilRegistryAndEmptyLayers(t *testing.T) {
	t.Parallel()
	s := mustResolve(t, nil, []Layer{{Name: "empty"}, {Name: "missing", Dir: filepath.Join(t.TempDir(), "nope")}}, Options{})
	if got := s.ActivePoints(); got != nil {
		t.Errorf("ActivePoints() = %v, want none", got)
	}
}

func TestResolveActivePoints(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	reg.Register(SystemPrompt, "_10_main", mark("_10_main"))
	reg.Register(MonologueEnd, "_10_x", mark("_10_x"))
	layers := buildLayers(t, []file{{0, MonologueEnd, "_10_x.disabled", false}, {1, HistAddBefore, "_10_y.sh", true}})
	s := mustResolve(t, reg, layers, Options{})
	if diff := cmp.Diff([]string{HistAddBefore, SystemPrompt}, s.ActivePoints()); diff != "" {
		t.Errorf("ActivePoints() (-want +got):\n%s", diff)
	}
}
