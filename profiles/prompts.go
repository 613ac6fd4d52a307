package profiles

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed prompts/default
var embedded embed.FS

var defaultFS = sync.OnceValue(func() fs.FS {
	sub, err := fs.Sub(embedded, "prompts/default")
	if err != nil {
		panic("profiles: embedded prompts missing: " + err.Error()) // a build defect, not a runtime condition
	}
	return sub
})

// DefaultFS returns the built-in default prompt set, the last directory every [Prompts] searches.
// The file names and the vars each file uses are listed in the package documentation.
func DefaultFS() fs.FS { return defaultFS() }

// Prompts renders prompt files looked up in a list of directories, highest priority first, with
// the built-in default set always searched last. The first directory containing a name wins
// (Agent Zero's find_file_in_dirs).
//
// Each file is read and parsed once per Prompts and kept, as are include lookups and Names
// results: a Prompts is a snapshot of its directories, and picking up edited files means building
// a new one. A Prompts is safe for concurrent use.
type Prompts struct {
	dirs   []fs.FS
	found  sync.Map // findKey -> *template (notFound when no directory has it)
	parsed sync.Map // parsedKey -> *template
	names  sync.Map // pattern -> []string
}

type findKey struct {
	name string
	from int
}

type parsedKey struct {
	dir  int
	name string
}

// notFound marks a cached miss, so a missing "include original" is not searched for on every
// render.
var notFound = &template{name: "(not found)"}

// New returns a Prompts searching dirs in order and then [DefaultFS]. New() uses the defaults only.
// Nil directories are skipped.
func New(dirs ...fs.FS) *Prompts {
	p := &Prompts{dirs: make([]fs.FS, 0, len(dirs)+1)}
	for _, d := range dirs {
		if d != nil {
			p.dirs = append(p.dirs, d)
		}
	}
	p.dirs = append(p.dirs, DefaultFS())
	return p
}

// Render reads name (e.g. "agent.system.main.md"), processes includes and conditionals, and
// substitutes vars.
//
// A {{name}} placeholder whose var is absent from vars is left in the output as written, as Agent
// Zero does, except in a JSON template, where it becomes null (or nothing inside a JSON string)
// so the result stays valid JSON. For a JSON template (a file that is one ```json block) the
// result is the JSON without the fence.
//
// Errors wrap [ErrNotFound] (name or an included file is missing), [ErrSyntax], [ErrIncludeCycle]
// or [ErrEval], and name the file and line at fault.
func (p *Prompts) Render(name string, vars map[string]any) (string, error) {
	t, err := p.find(name, 0)
	if err != nil {
		return "", fmt.Errorf("render %q: %w", name, err)
	}
	if t == notFound {
		return "", fmt.Errorf("render %q: %w", name, ErrNotFound)
	}
	r := renderer{p: p, vars: vars}
	r.stack = r.stackBuf[:0]
	r.b.Grow(int(t.size.Load()) + 64)
	if err := r.render(t); err != nil {
		return "", fmt.Errorf("render %q: %w", name, err)
	}
	t.size.Store(int64(r.b.Len()))
	return r.b.String(), nil
}

// Names lists the distinct prompt names matching a path.Match pattern across all dirs, sorted
// (e.g. "agent.system.tool.*.md"). A malformed pattern matches nothing.
func (p *Prompts) Names(pattern string) []string {
	if v, ok := p.names.Load(pattern); ok {
		return slices.Clone(v.([]string))
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return nil
	}
	var out []string
	for _, d := range p.dirs {
		matches, err := fs.Glob(d, pattern)
		if err != nil {
			continue
		}
		for _, m := range matches {
			if st, err := fs.Stat(d, m); err == nil && !st.IsDir() {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	p.names.Store(pattern, out)
	return slices.Clone(out)
}

// find returns the template for name from the first directory at or after index from that has
// it, or notFound.
func (p *Prompts) find(name string, from int) (*template, error) {
	key := findKey{name, from}
	if v, ok := p.found.Load(key); ok {
		return v.(*template), nil
	}
	if !fs.ValidPath(name) || name == "." {
		return nil, fmt.Errorf("invalid prompt name %q: %w", name, ErrNotFound)
	}
	for i := from; i < len(p.dirs); i++ {
		t, err := p.load(i, name)
		if err != nil {
			return nil, err
		}
		if t != nil {
			v, _ := p.found.LoadOrStore(key, t)
			return v.(*template), nil
		}
	}
	p.found.Store(key, notFound)
	return notFound, nil
}

// load parses name from directory i, or returns nil if the directory does not have it.
func (p *Prompts) load(i int, name string) (*template, error) {
	key := parsedKey{i, name}
	if v, ok := p.parsed.Load(key); ok {
		return v.(*template), nil
	}
	src, err := fs.ReadFile(p.dirs[i], name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	t, err := parseTemplate(name, i, string(src))
	if err != nil {
		return nil, err
	}
	// Two goroutines may parse the same file at once; both then use the one stored first, so
	// include cycle detection can compare templates by pointer.
	v, _ := p.parsed.LoadOrStore(key, t)
	return v.(*template), nil
}

type renderer struct {
	p     *Prompts
	vars  map[string]any
	b     strings.Builder
	stack []*template // files being rendered, outermost first
	// stackBuf backs stack for the usual shallow nesting, saving an allocation per render.
	stackBuf [8]*template
}

func (r *renderer) render(t *template) error {
	if slices.Contains(r.stack, t) {
		chain := make([]string, 0, len(r.stack)+1)
		for _, s := range r.stack[slices.Index(r.stack, t):] {
			chain = append(chain, s.name)
		}
		return fmt.Errorf("%w: %s", ErrIncludeCycle, strings.Join(append(chain, t.name), " -> "))
	}
	r.stack = append(r.stack, t)
	start := r.b.Len()
	err := r.nodes(t, t.nodes)
	r.stack = r.stack[:len(r.stack)-1]
	if err != nil {
		return err
	}
	if t.json && !json.Valid([]byte(r.b.String()[start:])) {
		return fmt.Errorf("%w: %s is a JSON template but its output is not valid JSON", ErrSyntax, t.name)
	}
	return nil
}

func (r *renderer) nodes(t *template, nodes []*node) error {
	for _, n := range nodes {
		switch n.kind {
		case nodeText:
			r.b.WriteString(n.text)
		case nodeVar:
			v, ok := r.vars[n.text]
			switch {
			case !t.json && ok:
				writeText(&r.b, v)
			case !t.json:
				r.b.WriteString(n.raw)
			case n.inString:
				writeJSONInString(&r.b, v)
			default:
				writeJSONValue(&r.b, v)
			}
		case nodeIf:
			for _, br := range n.branches {
				if br.cond != nil {
					v, err := br.cond.eval(r.vars)
					if err != nil {
						return fmt.Errorf("%s line %d: condition: %w", t.name, n.line, err)
					}
					if !truthy(v) {
						continue
					}
				}
				if err := r.nodes(t, br.body); err != nil {
					return err
				}
				break
			}
		case nodeInclude, nodeOriginal:
			if err := r.include(t, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *renderer) include(t *template, n *node) error {
	target := n.target.Load()
	if target == nil {
		var err error
		if n.kind == nodeOriginal {
			target, err = r.p.find(t.name, t.dir+1)
		} else {
			target, err = r.p.find(n.text, 0)
		}
		if err != nil {
			return r.includeErr(t, n, err)
		}
		n.target.Store(target)
	}
	if target == notFound {
		if n.kind == nodeOriginal {
			// Agent Zero renders a missing original as nothing: an override may extend a default
			// that a later version drops.
			return nil
		}
		return r.includeErr(t, n, ErrNotFound)
	}
	if !n.inString {
		if err := r.render(target); err != nil {
			return r.includeErr(t, n, err)
		}
		return nil
	}
	sub := renderer{p: r.p, vars: r.vars, stack: r.stack}
	if err := sub.render(target); err != nil {
		return r.includeErr(t, n, err)
	}
	writeJSONString(&r.b, sub.b.String(), false)
	return nil
}

func (r *renderer) includeErr(t *template, n *node, err error) error {
	what := fmt.Sprintf("include %q", n.text)
	if n.kind == nodeOriginal {
		what = "include original"
	}
	return fmt.Errorf("%s in %s line %d: %w", what, t.name, n.line, err)
}
