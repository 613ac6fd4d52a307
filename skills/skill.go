package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/yamlwalk"
	"go.yaml.in/yaml/v3"
)

// Limits of a skill. They keep a hostile or careless folder (a cloned repository, say) from
// costing much time, memory or context.
const (
	// SkillFile is the file that makes a folder a skill.
	SkillFile = "SKILL.md"
	// MaxFileSize is the largest SKILL.md read; a bigger one is skipped with a warning.
	MaxFileSize = 256 << 10
	// MaxName is the longest skill name, as the Agent Skills format has it.
	MaxName = 64
	// MaxDescription is the longest description, as the Agent Skills format has it.
	MaxDescription = 1024
	// MaxFiles is how many of a skill's other files [Catalog.Load] lists (Agent Zero's
	// max_files); [Loaded.More] says when there were more.
	MaxFiles = 100
	// MaxText caps the SKILL.md body shown by [Loaded.Text] (about 8k tokens): it goes into the
	// prompt of every turn while the skill is loaded. The rest stays readable in the file.
	MaxText = 32 << 10
)

// maxFileDepth is how deep a skill's files are listed (Agent Zero's max_depth).
const maxFileDepth = 10

// Skill is one skill as the catalog knows it: its front matter and where it lives.
type Skill struct {
	Name        string
	Description string
	Tags        []string
	Version     string
	// Dir is the skill's folder, absolute: where its scripts and references are.
	Dir string
	// Layer is the [Dir.Layer] the skill was found in.
	Layer string
}

// Loaded is a skill read in full by [Catalog.Load].
type Loaded struct {
	Skill
	// Body is SKILL.md after the front matter, trimmed.
	Body string
	// Files are the other files of the folder: paths relative to Dir with '/' separators, in
	// lexical order, at most [MaxFiles], without hidden files and dependency folders
	// (node_modules, venv, __pycache__).
	Files []string
	// More is set when the folder has more files than Files lists.
	More bool
}

// Text is the loaded skill as the agent reads it (Agent Zero's load_skill_for_agent): name,
// folder, metadata, description, the SKILL.md body (at most [MaxText] bytes of it) and the files.
func (l Loaded) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s\nPath: %s\n", l.Name, l.Dir)
	if l.Version != "" {
		fmt.Fprintf(&b, "Version: %s\n", l.Version)
	}
	if len(l.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", strings.Join(l.Tags, ", "))
	}
	if l.Description != "" {
		fmt.Fprintf(&b, "\nDescription:\n%s\n", l.Description)
	}
	body := l.Body
	if body == "" {
		body = "(empty)"
	}
	if len(body) > MaxText {
		cut := strings.LastIndexByte(body[:MaxText], '\n')
		if cut < MaxText/2 {
			cut = MaxText
			for cut > 0 && !utf8.RuneStart(body[cut]) {
				cut--
			}
		}
		body = fmt.Sprintf("%s\n[... %d more bytes of SKILL.md not shown: read the rest from %s/%s ...]",
			strings.TrimRight(body[:cut], "\n"), len(l.Body)-cut, l.Dir, SkillFile)
	}
	fmt.Fprintf(&b, "\nContent (SKILL.md body):\n%s\n\n", body)
	if len(l.Files) == 0 {
		b.WriteString("No additional files found.")
		return b.String()
	}
	b.WriteString("Files (relative to Path; read or run them with code_execution_tool):")
	for _, f := range l.Files {
		b.WriteString("\n- " + f)
	}
	if l.More {
		b.WriteString("\n- ... (more files not listed)")
	}
	return b.String()
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// frontMatter is what Zero reads of a SKILL.md's front matter; other keys are ignored.
type frontMatter struct {
	Name        string
	Description string
	// Tags are a YAML list of tags or one string of tags separated by commas or, without
	// commas, by spaces (as Agent Zero does); empty and null entries are dropped.
	Tags    []string
	Version string
}

// parse reads a SKILL.md: a UTF-8 BOM and CRLF line ends are accepted, blank lines may precede the
// opening --- fence, and the front matter must hold a valid name and description.
func parse(data []byte) (Skill, string, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ToValidUTF8(text, "\uFFFD")
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "---" {
			start = i
			break
		}
		if l != "" {
			break
		}
	}
	if start < 0 {
		return Skill{}, "", ErrNoFrontMatter
	}
	end := -1
	for i := start + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Skill{}, "", fmt.Errorf("%w: no closing --- line", ErrFrontMatter)
	}
	fm, err := decodeFrontMatter(strings.Join(lines[start+1:end], "\n"), start+1)
	if err != nil {
		return Skill{}, "", err
	}
	s := Skill{
		Name:        strings.TrimSpace(fm.Name),
		Description: strings.TrimSpace(fm.Description),
		Tags:        fm.Tags,
		Version:     strings.TrimSpace(fm.Version),
	}
	switch {
	case s.Name == "":
		return Skill{}, "", ErrNoName
	case len(s.Name) > MaxName || !nameRE.MatchString(s.Name):
		return Skill{}, "", fmt.Errorf("%w: %q", ErrName, cut.Head(s.Name, MaxName+1))
	case s.Description == "":
		return Skill{}, "", ErrNoDescription
	case utf8.RuneCountInString(s.Description) > MaxDescription:
		return Skill{}, "", ErrDescription
	}
	return s, strings.TrimSpace(strings.Join(lines[end+1:], "\n")), nil
}

// decodeFrontMatter decodes the YAML between the fences, which starts below line offset of the
// file. It is read by the walker config.yaml and agent.yaml are read by (package yamlwalk): a
// key set to null (nothing, ~, null, !!null) counts as absent, a duplicate key or malformed YAML
// is an error naming the file's line and the key. Only the keys Zero reads are looked at, and
// aliases are followed, never expanded: a "billion laughs" costs nothing.
func decodeFrontMatter(src string, offset int) (frontMatter, error) {
	var fm frontMatter
	w := &yamlwalk.Walker{Offset: offset}
	if root := w.Parse([]byte(src)); root == nil {
		// empty, only comments, or a problem the walker recorded
	} else if root.Kind != yaml.MappingNode {
		w.Fail(root.Line, "", "must be a mapping of keys to values, got "+yamlwalk.Describe(root))
	} else {
		w.Mapping(root, "", func(_, v *yaml.Node, key string) {
			switch key {
			case "name":
				fm.Name = text(w, v, key)
			case "description":
				fm.Description = text(w, v, key)
			case "version":
				fm.Version = text(w, v, key)
			case "tags":
				fm.Tags = tags(w, v, key)
			}
		})
	}
	if len(w.Errs) > 0 {
		errs := make([]error, len(w.Errs))
		for i, e := range w.Errs {
			errs[i] = e
		}
		return frontMatter{}, fmt.Errorf("%w: %w", ErrFrontMatter, errors.Join(errs...))
	}
	return fm, nil
}

// text reads a scalar as written ("version: 1.0" is "1.0"); null is "".
func text(w *yamlwalk.Walker, v *yaml.Node, key string) string {
	switch {
	case yamlwalk.IsNull(v):
		return ""
	case v.Kind != yaml.ScalarNode:
		w.Fail(v.Line, key, "must be a single value, got "+yamlwalk.Describe(v))
		return ""
	}
	return v.Value
}

// tags reads a list of tags or one string of them.
func tags(w *yamlwalk.Walker, v *yaml.Node, key string) []string {
	var parts []string
	switch {
	case yamlwalk.IsNull(v):
		return nil
	case v.Kind == yaml.ScalarNode:
		if strings.Contains(v.Value, ",") {
			parts = strings.Split(v.Value, ",")
		} else {
			parts = strings.Fields(v.Value)
		}
	case v.Kind == yaml.SequenceNode:
		for i, it := range v.Content {
			parts = append(parts, text(w, yamlwalk.Resolve(it), fmt.Sprintf("%s[%d]", key, i)))
		}
	default:
		w.Fail(v.Line, key, "must be a list of tags or a text of them, got "+yamlwalk.Describe(v))
		return nil
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// readSkillFile reads SKILL.md from the skill's folder r. A symbolic link is followed only while
// it stays inside the folder, and only a regular file of at most MaxFileSize bytes is read (a FIFO
// would block the open and the read forever; it is also opened non-blocking where that exists, in
// case it was swapped in since the check).
func readSkillFile(r *os.Root) ([]byte, error) {
	fi, err := r.Lstat(SkillFile)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = r.Stat(SkillFile); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: broken symbolic link", ErrNotRegular)
			}
			return nil, ErrEscapes
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > MaxFileSize {
		return nil, ErrTooLarge
	}
	f, err := r.OpenFile(SkillFile, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() { // replaced since the check
		return nil, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, ErrTooLarge
	}
	return data, nil
}
