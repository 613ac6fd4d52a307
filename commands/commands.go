// Package commands reads the saved prompts people keep for coding agents
// and offers them as slash commands: Markdown files in Zero's own
// commands folder (~/.config/zero/commands, <workspace>/.zero/commands)
// and in Claude Code's (.claude/commands, ~/.claude/commands), with
// Claude Code's front matter (description, argument-hint, allowed-tools)
// and its $ARGUMENTS and $1…$9 in the body; and Gemini CLI's .toml
// commands (.gemini/commands: description, prompt, {{args}}).
//
// A command is text for the model, never something that runs: a line of
// Claude Code's format that would run a program on the host (!`cmd`) is
// not run; the expanded text asks the agent to run it itself, in its
// sandbox and under the approval policy. allowed-tools can only narrow
// what the agent may use for that message (the caller enforces it); it
// never approves anything.
//
// A workspace's folders are read through an [os.Root]: a link that leads
// out is skipped and named, a file is opened without blocking (a FIFO is
// not waited on) and read up to [MaxFile] bytes, a larger one is skipped
// and named.
package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/yamlwalk"
)

const (
	// MaxFile is the largest command file read; a larger one is skipped.
	MaxFile = 64 << 10
	// MaxCommands is how many commands one folder gives at most.
	MaxCommands = 200
	// MaxDepth is how deep subfolders are looked into (a/b/c.md is a:b:c).
	MaxDepth = 3
	// MaxEntries is how many folder entries one folder tree is looked
	// through at most, commands or not.
	MaxEntries = 2000
	// MaxDescription is how much of a description a face shows.
	MaxDescription = 300
)

// A Dir is one folder of commands.
type Dir struct {
	// Base is a folder that is the caller's (the workspace, the home
	// directory): links in its own path are followed.
	Base string
	// Sub is the commands folder inside Base, slash-separated
	// (".claude/commands"): it is resolved inside Base, so neither it nor
	// a link in it leads out.
	Sub string
	// Label is how the folder is named to the user ("~/.claude/commands").
	Label string
}

// A Command is one saved prompt.
type Command struct {
	Name         string   // "review", or "git:commit" for git/commit.md
	Description  string   // from the front matter, else the body's first line
	ArgumentHint string   // argument-hint, e.g. "[file] [focus]"
	AllowedTools []string // allowed-tools: what the agent may use for it ("" none: no narrowing)
	Source       string   // the file, as the user knows it (".claude/commands/review.md")
	Body         string   // the prompt, front matter removed
	// Gemini is a Gemini CLI command (.toml): {{args}} and !{command} in
	// its prompt, rather than Claude Code's $ARGUMENTS and !`command`.
	Gemini bool
}

// A Warning is a file that was not made a command, and why.
type Warning struct {
	Source string
	Reason string
}

func (w Warning) String() string { return w.Source + ": " + w.Reason }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Load reads the folders, the first that names a command winning over
// the later ones, and returns the commands sorted by name. Names in
// reserved (the face's own commands) are skipped with a warning.
func Load(reserved []string, dirs ...Dir) ([]Command, []Warning) {
	var out []Command
	var warns []Warning
	seen := map[string]string{}
	for _, d := range dirs {
		cmds, ws := load(d)
		warns = append(warns, ws...)
		for _, c := range cmds {
			switch {
			case slices.Contains(reserved, c.Name):
				warns = append(warns, Warning{c.Source, fmt.Sprintf("/%s is one of Zero's own commands, which wins", c.Name)})
			case seen[c.Name] != "":
				warns = append(warns, Warning{c.Source, fmt.Sprintf("/%s is already %s", c.Name, seen[c.Name])})
			default:
				seen[c.Name] = c.Source
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out, warns
}

// Find is the command called name in cmds.
func Find(cmds []Command, name string) (Command, bool) {
	i := slices.IndexFunc(cmds, func(c Command) bool { return c.Name == name })
	if i < 0 {
		return Command{}, false
	}
	return cmds[i], true
}

func load(d Dir) ([]Command, []Warning) {
	r, err := rootfs.Open(d.Base, d.Sub)
	if err != nil {
		if errors.Is(err, rootfs.ErrEscapes) {
			return nil, []Warning{{d.Label, "it is a link that leads out of its folder; Zero does not follow it"}}
		}
		return nil, nil // no such folder
	}
	defer r.Close()
	var cmds []Command
	var warns []Warning
	seen, full := 0, false
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		f, err := r.OpenFile(filepath.FromSlash(dir), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		entries, err := f.ReadDir(MaxEntries - seen + 1) // a huge folder is not read whole
		f.Close()
		if err != nil && len(entries) == 0 {
			return
		}
		seen += len(entries)
		if seen > MaxEntries && !full {
			full = true
			warns = append(warns, Warning{d.Label, fmt.Sprintf("only %d of its entries are looked at", MaxEntries)})
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range entries {
			if len(cmds) >= MaxCommands {
				warns = append(warns, Warning{d.Label, fmt.Sprintf("only its first %d commands are read", MaxCommands)})
				return
			}
			name := e.Name()
			rel := path.Join(dir, name)
			src := path.Join(d.Label, rel)
			if strings.HasPrefix(name, ".") {
				continue
			}
			if e.IsDir() {
				if depth+1 < MaxDepth && nameRE.MatchString(name) && seen <= MaxEntries {
					walk(rel, depth+1)
				}
				continue
			}
			ext := path.Ext(name)
			if ext != ".md" && ext != ".toml" {
				continue
			}
			c, err := readFile(r, rel)
			if err != nil {
				warns = append(warns, Warning{src, err.Error()})
				continue
			}
			c.Source = src
			c.Name = strings.ReplaceAll(strings.TrimSuffix(rel, ext), "/", ":")
			if !nameRE.MatchString(strings.ReplaceAll(c.Name, ":", "")) {
				warns = append(warns, Warning{src, "its name is not a command name (letters, digits, . _ -)"})
				continue
			}
			cmds = append(cmds, c)
		}
	}
	walk(".", 0)
	return cmds, warns
}

// readFile reads one command file inside r.
func readFile(r *os.Root, rel string) (Command, error) {
	f, err := r.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if rootfs.IsEscape(err) {
			return Command{}, errors.New("it is a link that leads out of its folder; Zero does not follow it")
		}
		return Command{}, errors.New(rootfs.Reason(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Command{}, err
	}
	if !fi.Mode().IsRegular() {
		return Command{}, errors.New("it is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return Command{}, errors.New(rootfs.Reason(err))
	}
	if len(data) > MaxFile {
		return Command{}, fmt.Errorf("it is larger than %d KiB", MaxFile>>10)
	}
	if path.Ext(rel) == ".toml" {
		return ParseTOML(data)
	}
	return Parse(data)
}

// ParseTOML reads a Gemini CLI command: description and prompt.
func ParseTOML(data []byte) (Command, error) {
	var raw struct {
		Description string `toml:"description"`
		Prompt      string `toml:"prompt"`
	}
	if _, err := toml.Decode(strings.ToValidUTF8(string(data), "\uFFFD"), &raw); err != nil {
		return Command{}, fmt.Errorf("malformed TOML: %v", err)
	}
	c := Command{Description: strings.TrimSpace(raw.Description), Body: strings.TrimSpace(raw.Prompt), Gemini: true}
	if c.Body == "" {
		return Command{}, errors.New("it has no prompt")
	}
	if c.Description == "" {
		line, _, _ := strings.Cut(c.Body, "\n")
		c.Description = strings.TrimSpace(line)
	}
	c.Description = cut.Line(c.Description, MaxDescription)
	return c, nil
}

// Parse reads a command file: optional YAML front matter between ---
// lines, then the prompt.
func Parse(data []byte) (Command, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ToValidUTF8(text, "\uFFFD")
	var c Command
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		fm, body, found := strings.Cut("\n"+rest, "\n---")
		if !found {
			return Command{}, errors.New("its front matter has no closing --- line")
		}
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		} else {
			body = ""
		}
		if err := c.front(fm); err != nil {
			return Command{}, err
		}
		text = body
	}
	c.Body = strings.TrimSpace(text)
	if c.Body == "" {
		return Command{}, errors.New("it has no prompt")
	}
	if c.Description == "" {
		line, _, _ := strings.Cut(c.Body, "\n")
		c.Description = strings.TrimSpace(strings.TrimLeft(line, "# "))
	}
	c.Description = cut.Line(c.Description, MaxDescription)
	c.ArgumentHint = cut.Line(c.ArgumentHint, 100)
	return c, nil
}

// front reads the front matter's keys Zero knows; others are ignored.
func (c *Command) front(src string) error {
	w := &yamlwalk.Walker{Offset: 1}
	root := w.Parse([]byte(src))
	if root != nil && root.Kind != yaml.MappingNode {
		w.Fail(root.Line, "", "must be a mapping of keys to values, got "+yamlwalk.Describe(root))
	} else if root != nil {
		w.Mapping(root, "", func(_, v *yaml.Node, key string) {
			switch key {
			case "description":
				c.Description = scalar(w, v, key)
			case "argument-hint":
				c.ArgumentHint = scalar(w, v, key)
			case "allowed-tools":
				c.AllowedTools = list(w, v, key)
			}
		})
	}
	if len(w.Errs) > 0 {
		if root == nil && c.flat(src) { // not YAML at all
			return nil
		}
		return fmt.Errorf("malformed front matter: %s", w.Errs[0].Error())
	}
	return nil
}

// flat reads front matter that is not YAML but plain "key: value" lines,
// as Claude Code's own examples write it (argument-hint: [file] [focus]);
// ok is false when a line is neither.
func (c *Command) flat(src string) bool {
	var fc Command
	for _, line := range strings.Split(src, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || key != strings.TrimSpace(key) || strings.ContainsAny(key, " \t") {
			return false
		}
		val = strings.TrimSpace(val)
		switch key {
		case "description":
			fc.Description = val
		case "argument-hint":
			fc.ArgumentHint = val
		case "allowed-tools":
			fc.AllowedTools = []string{}
			for _, t := range splitTools(strings.Trim(val, "[]")) {
				if t = strings.Trim(strings.TrimSpace(t), `"'`); t != "" {
					fc.AllowedTools = append(fc.AllowedTools, t)
				}
			}
		}
	}
	*c = fc
	return true
}

func scalar(w *yamlwalk.Walker, v *yaml.Node, key string) string {
	switch {
	case yamlwalk.IsNull(v):
		return ""
	case v.Kind == yaml.SequenceNode && key == "argument-hint":
		// argument-hint: [file] reads as a YAML list; Claude Code shows it as written.
		var parts []string
		for _, it := range v.Content {
			parts = append(parts, "["+yamlwalk.Resolve(it).Value+"]")
		}
		return strings.Join(parts, " ")
	case v.Kind != yaml.ScalarNode:
		w.Fail(v.Line, key, "must be a single value, got "+yamlwalk.Describe(v))
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// list reads allowed-tools: a YAML list, or one text separated by commas.
func list(w *yamlwalk.Walker, v *yaml.Node, key string) []string {
	var parts []string
	switch {
	case yamlwalk.IsNull(v):
		return nil
	case v.Kind == yaml.ScalarNode:
		parts = splitTools(v.Value)
	case v.Kind == yaml.SequenceNode:
		for _, it := range v.Content {
			it = yamlwalk.Resolve(it)
			if it.Kind != yaml.ScalarNode {
				w.Fail(it.Line, key, "must be a list of tool names, got "+yamlwalk.Describe(it))
				return nil
			}
			parts = append(parts, it.Value)
		}
	default:
		w.Fail(v.Line, key, "must be a list of tool names, got "+yamlwalk.Describe(v))
		return nil
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if out == nil {
		return []string{} // "allowed-tools:" given, naming nothing: nothing is allowed
	}
	return out
}

// splitTools splits "Bash(git add:*), Read" at the commas outside brackets.
func splitTools(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}
