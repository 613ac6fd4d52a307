package hooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds one script run when [Options.Timeout] is zero.
const DefaultTimeout = 10 * time.Second

const disabledExt = ".disabled"

// Options configures [Resolve] and the [Set] it returns. The zero value works.
type Options struct {
	// Timeout bounds each script run; 0 (or negative) means DefaultTimeout. A script still running
	// then is killed together with its whole process group, reported and skipped.
	Timeout time.Duration
	// OnWarning is called when a script fails, prints garbage, exits non-zero or times out (it is
	// then skipped), and, during Resolve, for files and folders that cannot take part (see the
	// sentinels in errors.go). It may be called from several goroutines at once when Call is.
	// nil ignores warnings (they are still logged).
	OnWarning func(Warning)
	// BaseEnv is the environment scripts inherit; nil means os.Environ(). The engine passes a
	// scrubbed copy so that its secrets (the model's API key) never reach a script.
	BaseEnv []string
	// Env is extra environment for scripts ("KEY=value"), added after BaseEnv, so it wins over
	// it. Scripts also get ZERO_HOOK_POINT and ZERO_HOOK_EXTENSION.
	Env []string
	// Logger receives debug records of script runs and a record per warning; nil discards them.
	// Payload contents and script output never go to the log.
	Logger *slog.Logger
}

// Warning describes a user extension that was skipped, or a file that cannot be an extension.
type Warning struct {
	Point     string // "" when the problem is not in a point directory
	Extension string // "" when the problem is not one extension
	Path      string // the file or directory concerned
	Err       error  // wraps one of the sentinels in errors.go, or a file-system error
}

// Error returns a message for people, naming the extension and its file.
func (w Warning) Error() string {
	var b strings.Builder
	b.WriteString("hooks: ")
	switch {
	case w.Point != "" && w.Extension != "":
		b.WriteString(w.Point + "/" + w.Extension + " (" + w.Path + ")")
	case w.Point != "":
		b.WriteString(w.Point + " (" + w.Path + ")")
	default:
		b.WriteString(w.Path)
	}
	if w.Err != nil {
		b.WriteString(": " + w.Err.Error())
	}
	return b.String()
}

// String is Error, so a Warning prints well with %v and %s.
func (w Warning) String() string { return w.Error() }

// Unwrap returns Err, so errors.Is(w, ErrScriptTimeout) works on a Warning used as an error.
func (w Warning) Unwrap() error { return w.Err }

// ExtensionError is what [Set.Call] returns when a built-in fails.
type ExtensionError struct {
	Point     string
	Extension string
	Err       error
}

// Error names the point and the extension before the built-in's own message.
func (e *ExtensionError) Error() string {
	return "hooks: " + e.Point + "/" + e.Extension + ": " + e.Err.Error()
}

// Unwrap returns the built-in's own error.
func (e *ExtensionError) Unwrap() error { return e.Err }

// Set is the resolved, ordered extension list of every point. It is immutable, and safe for
// concurrent use; a nil *Set is valid and has no extensions.
type Set struct {
	points map[string][]extension
	opts   Options
}

type extension struct {
	name  string
	layer string
	path  string // script file; "" for a built-in
	fn    Func   // built-in; nil for a script
}

// Info describes one resolved extension, for diagnostics such as `zero doctor`.
type Info struct {
	Name  string
	Layer string // a Layer.Name, or LayerBuiltin
	Path  string // the script's file; "" for a built-in
}

// decision is what the highest layer that mentions a name says about it.
type decision struct {
	disabled bool
	ext      extension
}

// Resolve scans the layers once and returns the merged, ordered extension list for every point.
//
// For each point the extensions of all layers plus the built-ins of reg (the lowest layer) are merged
// by name: the name in the highest layer wins, and a file NAME.disabled removes NAME from every lower
// layer (and from its own). Survivors run in byte order of their names, like Agent Zero's sorted file
// names. A script's name is its file name without its last extension ("_20_extras.sh" is
// "_20_extras"). Only executable regular files (or symlinks to them) are scripts; hidden files, names
// ending in "~" and directories inside a point directory are ignored; any other file is reported once
// through OnWarning and skipped. Missing layer directories are fine; unreadable ones are reported and
// skipped. reg may be nil.
//
// Resolve fails only when a layer's directory cannot be made absolute (scripts run with their own
// directory as working directory, so their paths must not be relative).
func Resolve(reg *Registry, layers []Layer, opts Options) (*Set, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Env = slices.Clone(opts.Env)
	opts.BaseEnv = slices.Clone(opts.BaseEnv)
	s := &Set{points: map[string][]extension{}, opts: opts}

	builtins, declared := reg.snapshot()
	decided := map[string]map[string]decision{} // point -> name -> highest layer's decision
	for _, l := range layers {
		if l.Dir == "" {
			continue
		}
		dir, err := filepath.Abs(l.Dir)
		if err != nil {
			return nil, fmt.Errorf("hooks: layer %s %q: %w", l.Name, l.Dir, err)
		}
		for point, found := range s.scanLayer(l.Name, dir, builtins, declared) {
			names := decided[point]
			if names == nil {
				names = map[string]decision{}
				decided[point] = names
			}
			for name, d := range found {
				if _, taken := names[name]; !taken {
					names[name] = d
				}
			}
		}
	}

	for point, list := range builtins {
		for _, b := range list {
			if _, taken := decided[point][b.name]; !taken {
				s.points[point] = append(s.points[point], extension{name: b.name, layer: LayerBuiltin, fn: b.fn})
			}
		}
	}
	for point, names := range decided {
		for _, d := range names {
			if !d.disabled {
				s.points[point] = append(s.points[point], d.ext)
			}
		}
	}
	for point, list := range s.points {
		slices.SortFunc(list, func(a, b extension) int { return cmp.Compare(a.name, b.name) })
		s.points[point] = slices.Clip(list)
	}
	return s, nil
}

// scanLayer returns, per point directory found in dir, what this layer says about each name.
func (s *Set) scanLayer(layer, dir string, builtins map[string][]builtin, declared map[string]bool) map[string]map[string]decision {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		s.warn(Warning{Path: dir, Err: err})
		return nil
	}
	out := map[string]map[string]decision{}
	for _, e := range entries {
		if ignoredFile(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Stat(path)
		if err != nil {
			s.warn(Warning{Path: path, Err: err})
			continue
		}
		if !fi.IsDir() {
			if isExecutable(fi) {
				s.warn(Warning{Path: path, Err: ErrMisplaced})
			}
			continue
		}
		point := e.Name()
		if !IsPoint(point) && !declared[point] && len(builtins[point]) == 0 {
			s.warn(Warning{Point: point, Path: path, Err: ErrUnknownPoint})
		}
		if found := s.scanPoint(layer, point, path); len(found) > 0 {
			out[point] = found
		}
	}
	return out
}

func (s *Set) scanPoint(layer, point, dir string) map[string]decision {
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.warn(Warning{Point: point, Path: dir, Err: err})
		return nil
	}
	found := map[string]decision{}
	for _, e := range entries {
		file := e.Name()
		if ignoredFile(file) {
			continue
		}
		path := filepath.Join(dir, file)
		if name, ok := strings.CutSuffix(file, disabledExt); ok {
			// Disabling beats a script of the same name in this layer too, so renaming a script
			// to NAME.disabled and keeping a copy both switch it off.
			found[name] = decision{disabled: true}
			continue
		}
		name := scriptName(file)
		fi, err := os.Stat(path)
		if err != nil {
			s.warn(Warning{Point: point, Extension: name, Path: path, Err: fmt.Errorf("%w: %w", ErrNotExecutable, err)})
			continue
		}
		if fi.IsDir() {
			continue // helper folders of scripts
		}
		if !isExecutable(fi) {
			s.warn(Warning{Point: point, Extension: name, Path: path, Err: ErrNotExecutable})
			continue
		}
		if d, dup := found[name]; dup {
			if !d.disabled {
				s.warn(Warning{Point: point, Extension: name, Path: path,
					Err: fmt.Errorf("%w: %s is used", ErrDuplicateName, filepath.Base(d.ext.path))})
			}
			continue
		}
		found[name] = decision{ext: extension{name: name, layer: layer, path: path}}
	}
	return found
}

// scriptName drops the last extension: "_20_extras.sh" -> "_20_extras", "_20_extras" stays.
func scriptName(file string) string {
	if i := strings.LastIndexByte(file, '.'); i > 0 {
		return file[:i]
	}
	return file
}

// ignoredFile skips hidden files and editor backups, which are often still executable copies.
func ignoredFile(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~")
}

// warn reports w to OnWarning; the log gets it at warning level only when
// nobody else will show it.
func (s *Set) warn(w Warning) {
	level := slog.LevelWarn
	if s.opts.OnWarning != nil {
		level = slog.LevelDebug
	}
	s.opts.Logger.Log(context.Background(), level, "hook extension skipped", append(warnAttrs(w), "point", w.Point, "extension", w.Extension, "path", w.Path)...)
	if s.opts.OnWarning != nil {
		s.opts.OnWarning(w)
	}
}

// Has reports whether point has any extension, built-in or script.
func (s *Set) Has(point string) bool {
	return s != nil && len(s.points[point]) > 0
}

// Names returns the names of point's extensions in run order (nil when there are none).
func (s *Set) Names(point string) []string {
	if s == nil {
		return nil
	}
	var names []string
	for _, e := range s.points[point] {
		names = append(names, e.name)
	}
	return names
}

// Extensions returns point's extensions in run order with the layer each comes from.
func (s *Set) Extensions(point string) []Info {
	if s == nil {
		return nil
	}
	var infos []Info
	for _, e := range s.points[point] {
		infos = append(infos, Info{Name: e.name, Layer: e.layer, Path: e.path})
	}
	return infos
}

// ActivePoints returns the points that have at least one extension, sorted by name.
func (s *Set) ActivePoints() []string {
	if s == nil {
		return nil
	}
	var ps []string
	for p := range s.points {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
