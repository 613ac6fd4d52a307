package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/zeroagent/zero/rootfs"
)

// Layer names, highest priority first. A profile's prompts, agent.yaml and diagnostics each say
// which layer they came from with one of these.
const (
	LayerProjectProfile = "project+profile"  // <workspace>/.zero/agents/<name>/
	LayerProject        = "project"          // <workspace>/.zero/prompts/   (prompts only)
	LayerUserProfile    = "user+profile"     // <userDir>/agents/<name>/
	LayerUser           = "user"             // <userDir>/prompts/           (prompts only)
	LayerBuiltinProfile = "built-in profile" // embedded agents/<name>/
	LayerBuiltin        = "built-in"         // embedded default prompts
)

// builtinPathPrefix starts the Path of everything that comes from the binary, so it cannot be
// mistaken for a file on disk.
const builtinPathPrefix = "builtin:"

//go:embed agents
var embeddedAgents embed.FS

var builtinAgents = sync.OnceValue(func() fs.FS {
	sub, err := fs.Sub(embeddedAgents, "agents")
	if err != nil {
		panic("profiles: embedded agents missing: " + err.Error()) // a build defect, not a runtime condition
	}
	return sub
})

// BuiltinFS returns the built-in profiles, one folder per profile in Agent Zero's layout
// (<name>/agent.yaml, <name>/prompts/*.md).
func BuiltinFS() fs.FS { return builtinAgents() }

// Profile is a resolved profile: its merged agent.yaml and the prompt lookup for its agents.
type Profile struct {
	Name string
	// Spec is the agent.yaml of every layer that has one, merged from the lowest layer up: a
	// higher layer's file replaces each key it sets (an explicit "" included, null excluded) and
	// keeps the others. models merge per role and then per field; tools.allow and tools.deny are
	// replaced as whole lists.
	Spec Spec
	// Layer and Path say where the highest agent.yaml was found, or the highest profile folder
	// when no layer has an agent.yaml. Built-in paths start with "builtin:".
	Layer, Path string
	// Prompts looks prompt files up for this profile, highest first: project+profile, project,
	// user+profile, user, built-in profile, built-in default.
	Prompts *Prompts
	// Diagnostics name what in the profile's folders Zero does not use, such as Agent Zero's
	// Python variable plugins. They are not errors: the profile works without those files.
	Diagnostics []Diagnostic
}

// Info describes a profile for listings and for the call_subordinate tool prompt.
type Info struct {
	// Name is the folder name, the value of call_subordinate's profile argument.
	Name string
	// Title, Description and Context are the merged agent.yaml values, as in [Profile.Spec].
	Title, Description, Context string
	// Backend is the merged sandbox.backend: the backend the profile is written for, "" any.
	Backend string
	// Layer and Path are those of [Profile].
	Layer, Path string
}

// Loader finds profiles across the project, user and built-in layers. It reads the disk on every
// call, so edits show up on the next Load; a Loader is safe for concurrent use.
type Loader struct {
	workspace string
	userDir   string
	builtin   fs.FS
}

// NewLoader returns a Loader for a workspace (its .zero folder holds the project layers) and a
// user configuration directory such as ~/.config/zero (its agents and prompts folders hold the
// user layers). workspace "" skips the project layers; userDir "" skips the user layers.
// Relative paths are taken from the process's working directory at each call.
func NewLoader(workspace, userDir string) *Loader {
	return &Loader{workspace: workspace, userDir: userDir, builtin: BuiltinFS()}
}

// layer is one place profiles or prompts are looked up in.
type layer struct {
	name    string
	fsys    fs.FS  // for profile layers the folder holding one folder per profile; else a prompts folder
	root    string // fsys's location as shown in paths
	profile bool   // whether fsys holds profile folders rather than prompt files
}

func (ly layer) path(elem ...string) string {
	if strings.HasPrefix(ly.root, builtinPathPrefix) {
		return ly.root + "/" + path.Join(elem...)
	}
	return filepath.Join(append([]string{ly.root}, elem...)...)
}

// layers lists the lookup places, highest priority first; the built-in default prompts are not
// among them because every Prompts searches them last anyway.
func (l *Loader) layers() []layer {
	out := make([]layer, 0, 5)
	// Every file is read through an os.Root (package rootfs), so that no
	// symbolic link in a folder leads out of it: prompt text loads before
	// any trust, and a link to ~/.aws/credentials or /proc/self/environ
	// would put that file into the model's request. A workspace's folders
	// are resolved inside the workspace (.zero itself may not be a link
	// out), and nothing in .zero/agents or .zero/prompts leaves that folder.
	// The user's agents folder may hold profiles linked in from elsewhere
	// (the user put those links there), but nothing inside a profile leaves
	// it: a profile may have been cloned from someone else's repository.
	if l.workspace != "" {
		agents := filepath.Join(l.workspace, ".zero", "agents")
		prompts := filepath.Join(l.workspace, ".zero", "prompts")
		out = append(out,
			layer{LayerProjectProfile, rootfs.FS(l.workspace, ".zero/agents"), agents, true},
			layer{LayerProject, rootfs.FS(l.workspace, ".zero/prompts"), prompts, false})
	}
	if l.userDir != "" {
		agents := filepath.Join(l.userDir, "agents")
		prompts := filepath.Join(l.userDir, "prompts")
		out = append(out,
			layer{LayerUserProfile, rootfs.PerEntry(agents), agents, true},
			layer{LayerUser, rootfs.FS(prompts, ""), prompts, false})
	}
	return append(out, layer{LayerBuiltinProfile, l.builtin, builtinPathPrefix + "agents", true})
}

// folder is one layer's folder for a profile.
type folder struct {
	layer   layer
	name    string
	entries []fs.DirEntry
}

func (f folder) has(name string) bool {
	return slices.ContainsFunc(f.entries, func(e fs.DirEntry) bool { return e.Name() == name })
}

// Load resolves the profile name across the layers. A profile exists if any layer has a folder
// for it; "default" always exists (its built-in folder holds only an agent.yaml, so its prompts
// are the default set). Load reads the folder listings and agent.yaml files only; prompt files
// are read when first rendered, so Load is cheap enough to call for every subordinate.
//
// Errors wrap [ErrNoProfile] for a missing profile or a name that cannot be one (empty, ".",
// "..", hidden, or containing a path separator), and [ErrInvalidSpec] for a bad agent.yaml.
func (l *Loader) Load(name string) (*Profile, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("load profile %q: %w", name, err)
	}
	layers := l.layers()
	folders, err := l.folders(layers, name)
	if err != nil {
		return nil, fmt.Errorf("load profile %q: %w", name, err)
	}
	p := &Profile{Name: name}
	if p.Spec, p.Layer, p.Path, p.Diagnostics, err = mergeSpecs(folders); err != nil {
		return nil, fmt.Errorf("load profile %q: %w", name, err)
	}
	var dirs []fs.FS
	for _, ly := range layers {
		var (
			dir     fs.FS
			dirPath string
		)
		if ly.profile {
			i := slices.IndexFunc(folders, func(f folder) bool { return f.layer.name == ly.name })
			if i < 0 {
				continue
			}
			f := folders[i]
			p.Diagnostics = append(p.Diagnostics, folderDiagnostics(f)...)
			if !f.has("prompts") || !isDir(ly.fsys, path.Join(name, "prompts")) {
				continue
			}
			if dir, err = fs.Sub(ly.fsys, path.Join(name, "prompts")); err != nil {
				return nil, fmt.Errorf("load profile %q: %w", name, err)
			}
			dirPath = ly.path(name, "prompts")
		} else {
			if !isDir(ly.fsys, ".") {
				continue
			}
			dir, dirPath = ly.fsys, ly.root
		}
		dirs = append(dirs, dir)
		p.Diagnostics = append(p.Diagnostics, promptDiagnostics(dir, dirPath)...)
	}
	p.Prompts = New(dirs...)
	return p, nil
}

// folders returns name's folder in each profile layer that has one, highest first, or an error
// wrapping ErrNoProfile when none has.
func (l *Loader) folders(layers []layer, name string) ([]folder, error) {
	var out []folder
	var looked []string
	for _, ly := range layers {
		if !ly.profile {
			continue
		}
		looked = append(looked, ly.path())
		entries, err := fs.ReadDir(ly.fsys, name)
		if isMissing(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ly.path(name), err)
		}
		out = append(out, folder{layer: ly, name: name, entries: entries})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no folder %q in %s", ErrNoProfile, name, strings.Join(looked, ", "))
	}
	return out, nil
}

// mergeSpecs merges the folders' agent.yaml files from the lowest up and says where the highest
// one (or else the highest folder) is. A workspace's agent.yaml cannot choose who commands run
// as (sandbox.user): that would loosen the sandbox, so it is dropped with a diagnostic.
func mergeSpecs(folders []folder) (spec Spec, layerName, where string, diags []Diagnostic, err error) {
	for _, f := range slices.Backward(folders) {
		if !f.has("agent.yaml") {
			continue
		}
		file := f.layer.path(f.name, "agent.yaml")
		data, err := fs.ReadFile(f.layer.fsys, path.Join(f.name, "agent.yaml"))
		if errors.Is(err, rootfs.ErrEscapes) {
			diags = append(diags, escapeDiagnostic(file))
			continue
		}
		if err != nil {
			return Spec{}, "", "", nil, fmt.Errorf("read %s: %w", file, err)
		}
		raw, err := parseSpec(file, data)
		if err != nil {
			return Spec{}, "", "", nil, err
		}
		if f.layer.name == LayerProjectProfile && raw.Sandbox != nil && raw.Sandbox.User != nil {
			diags = append(diags, Diagnostic{Path: file, Message: fmt.Sprintf(
				"sandbox.user %q is ignored: a workspace cannot choose who the agent's commands run as (set it in your own profile folder)", *raw.Sandbox.User)})
			raw.Sandbox.User = nil
		}
		spec.merge(raw, f.layer.name == LayerProjectProfile)
		layerName, where = f.layer.name, file
	}
	if where == "" {
		top := folders[0]
		layerName, where = top.layer.name, top.layer.path(top.name)
	}
	return spec, layerName, where, diags, nil
}

// List returns every profile visible from any layer, sorted by name, one Info per name with the
// merged agent.yaml values and the layer and path Load would report. A profile whose agent.yaml
// is invalid, or a layer that cannot be read, is left out and named in the returned error, which
// wraps the causes; the other profiles are still returned.
func (l *Loader) List() ([]Info, error) {
	layers := l.layers()
	var names []string
	var errs []error
	for _, ly := range layers {
		if !ly.profile {
			continue
		}
		entries, err := fs.ReadDir(ly.fsys, ".")
		if isMissing(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("list profiles: read %s: %w", ly.path(), err))
			continue
		}
		for _, e := range entries {
			if checkName(e.Name()) == nil && isDir(ly.fsys, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	infos := make([]Info, 0, len(names))
	for _, name := range names {
		folders, err := l.folders(layers, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("list profiles: %q: %w", name, err))
			continue
		}
		spec, layerName, where, _, err := mergeSpecs(folders)
		if err != nil {
			errs = append(errs, fmt.Errorf("list profiles: %q: %w", name, err))
			continue
		}
		infos = append(infos, Info{
			Name: name, Title: spec.Title, Description: spec.Description, Context: spec.Context,
			Backend: spec.Sandbox.Backend, Layer: layerName, Path: where,
		})
	}
	return infos, errors.Join(errs...)
}

// FormatProfileList renders the agent_profiles var of agent.system.tool.call_sub.md: one line per
// profile, "- name: context", with the description standing in for an empty context.
func FormatProfileList(infos []Info) string {
	var b strings.Builder
	for _, in := range infos {
		when := strings.Join(strings.Fields(in.Context), " ")
		if when == "" {
			when = strings.Join(strings.Fields(in.Description), " ")
		}
		b.WriteString("- ")
		b.WriteString(in.Name)
		if when != "" {
			b.WriteString(": ")
			b.WriteString(when)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkName rejects names that are not a single plain folder name, so a name from the model
// cannot reach outside the agents folders.
func checkName(name string) error {
	var why string
	switch {
	case name == "":
		why = "the name is empty"
	case name == "." || name == "..":
		why = "the name is a relative directory"
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, filepath.Separator):
		why = "the name contains a path separator"
	case strings.HasPrefix(name, "."):
		why = "hidden folders are not profiles"
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		why = "the name contains a control character"
	default:
		return nil
	}
	return fmt.Errorf("%w: invalid profile name %q: %s", ErrNoProfile, name, why)
}

// isMissing reports whether err means the folder is not there: absent, or a file where the folder
// would be.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// isDir follows symlinks, so a profile folder linked into agents/ counts.
func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}
