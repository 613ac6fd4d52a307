package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zeroagent/zero/rootfs"
)

// Diagnostic is a note about a file in a profile's folders that Zero does not use as Agent Zero
// would. The profile loads anyway; callers show diagnostics to the user (zero profiles, zero
// prompt, logs).
type Diagnostic struct {
	Path    string // the file or folder concerned
	Message string
}

// String returns "path: message".
func (d Diagnostic) String() string { return d.Path + ": " + d.Message }

// NativeVars are the prompt vars the engine passes to every render, supplied natively where Agent
// Zero used Python: variable plugins beside the prompts (workdir_path from
// agent.system.main.tips.py, agent_profiles from agent.system.tool.call_sub.py) and extensions
// that pass a prompt its vars (default_line_count, which the text editor plugin's
// _09_text_editor_config.py gives agent.system.tool.text_editor.md; in Zero the text_editor tool
// supplies it, so an agent lacks it only when it lacks the tool and its prompt).
//
// Some renders get more: agent.system.tools.md gets tools; fw.tool_not_found.md gets tool_name,
// tools (the names) and tools_prompt (the tools part of the system prompt, as Agent Zero passes
// it); fw.user_message.md and fw.intervention.md get message, system_message and attachments
// (empty lists). The environment text may use sandbox_isolation ("bubblewrap" or "none", local
// backend), sandbox_user (the user a profile's commands run as, when it chose one) and
// sandbox_image (the Docker image, when the caller passes it): each is passed only when known,
// so a prompt tests it with {{if}}.
var NativeVars = []string{
	"agent_name", "agent_number", "profile", "workdir_path", "sandbox", "os", "date_time",
	"agent_profiles", "default_line_count",
}

// pluginVars are the vars supplied by Agent Zero's own variable plugins, for plugins whose code
// does not spell them out in a dict literal.
var pluginVars = map[string][]string{
	"agent.system.main.tips.py":     {"workdir_path"},
	"agent.system.tool.call_sub.py": {"agent_profiles"},
}

var (
	pyReturnDict = regexp.MustCompile(`(?s)return\s*\{(.*?)\}`)
	pyDictKey    = regexp.MustCompile(`["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:`)
	// a0Path is Agent Zero's install folder, /a0, named as a path.
	a0Path = regexp.MustCompile(`(^|[^\w/.~-])/a0\b`)
)

// environmentFile is the prompt that describes where the agent runs.
const environmentFile = "agent.system.main.environment.md"

// promptDiagnostics reports, in dir (shown as dirPath), Agent Zero variable plugins (*.py beside
// the prompts) and an environment file that describes Agent Zero's runtime instead of Zero's.
func promptDiagnostics(dir fs.FS, dirPath string) []Diagnostic {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return nil // the folder went away since it was found; Prompts will just not see it
	}
	var out []Diagnostic
	for _, e := range entries {
		switch {
		case e.Type()&fs.ModeSymlink != 0 && escapes(dir, e.Name()):
			out = append(out, escapeDiagnostic(joinShown(dirPath, e.Name())))
		case e.IsDir():
		case path.Ext(e.Name()) == ".py":
			out = append(out, Diagnostic{
				Path:    joinShown(dirPath, e.Name()),
				Message: pluginMessage(dir, e.Name()),
			})
		case e.Name() == environmentFile:
			if msg := environmentMessage(dir); msg != "" {
				out = append(out, Diagnostic{Path: joinShown(dirPath, e.Name()), Message: msg})
			}
		}
	}
	return out
}

// environmentMessage reports an environment prompt that places the agent in Agent Zero's
// runtime, with the framework in /a0 (Agent Zero's own files add a Kali Linux Docker
// container): nothing in Zero is at /a0, and commands run where the sandbox backend in force
// runs them. The file is still used as written, as every prompt file is; Zero's built-in
// environment text, which follows the backend, applies when the file is removed.
func environmentMessage(dir fs.FS) string {
	src, err := fs.ReadFile(dir, environmentFile)
	if err != nil || !a0Path.Match(src) {
		return ""
	}
	claim := "the framework in /a0"
	if bytes.Contains(bytes.ToLower(src), []byte("kali")) {
		claim += " and a Kali Linux Docker container"
	}
	return "Agent Zero's description of its own runtime (" + claim + "), which the model is told as " +
		"written; in Zero there is no /a0 and commands run where the sandbox backend in force runs " +
		"them (docker: a container of the configured image; local: the user's machine). Remove the " +
		"file to get Zero's environment text, which follows the sandbox, or write your own with " +
		`{{if sandbox == "docker"}}…{{else}}…{{endif}}`
}

func pluginMessage(dir fs.FS, name string) string {
	vars := slices.Clone(pluginVars[name])
	if src, err := fs.ReadFile(dir, name); err == nil {
		for _, m := range pyReturnDict.FindAllSubmatch(src, -1) {
			for _, k := range pyDictKey.FindAllSubmatch(m[1], -1) {
				vars = append(vars, string(k[1]))
			}
		}
	}
	slices.Sort(vars)
	vars = slices.Compact(vars)
	var native, missing []string
	for _, v := range vars {
		if slices.Contains(NativeVars, v) || v == "tools" {
			native = append(native, v)
		} else {
			missing = append(missing, v)
		}
	}
	msg := "Agent Zero variables plugin (Python), which Zero does not run"
	switch {
	case len(vars) == 0:
		msg += "; Zero provides these vars natively: " + strings.Join(NativeVars, ", ")
	default:
		if len(native) > 0 {
			msg += "; Zero provides " + strings.Join(native, ", ") + " natively"
		}
		if len(missing) > 0 {
			msg += fmt.Sprintf("; Zero does not provide %s, so {{%s}} stays in the prompt as written",
				strings.Join(missing, ", "), missing[0])
		}
	}
	return msg
}

// folderDiagnostics reports what in a profile folder besides agent.yaml and prompts/ Zero leaves
// unused: Agent Zero's agent.json, settings.json and plugins/, and Python tools and extensions.
func folderDiagnostics(f folder) []Diagnostic {
	var out []Diagnostic
	if f.has("agent.json") && !f.has("agent.yaml") {
		out = append(out, Diagnostic{
			Path:    f.layer.path(f.name, "agent.json"),
			Message: "Zero reads agent.yaml, not agent.json; write title, description and context into agent.yaml",
		})
	}
	if f.has("settings.json") {
		out = append(out, Diagnostic{
			Path:    f.layer.path(f.name, "settings.json"),
			Message: "Agent Zero per-profile settings, which Zero does not read; put model choices under models: in agent.yaml",
		})
	}
	if f.has("plugins") {
		out = append(out, Diagnostic{
			Path:    f.layer.path(f.name, "plugins"),
			Message: "Agent Zero plugin configuration, which Zero does not read",
		})
	}
	for _, sub := range []string{"tools", "extensions"} {
		if !f.has(sub) {
			continue
		}
		n := 0
		_ = fs.WalkDir(f.layer.fsys, path.Join(f.name, sub), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && path.Ext(d.Name()) == ".py" {
				n++
			}
			return nil // a folder that cannot be read holds nothing Zero would run either
		})
		if n > 0 {
			out = append(out, Diagnostic{
				Path:    f.layer.path(f.name, sub),
				Message: fmt.Sprintf("%d Agent Zero Python %s file(s), which Zero does not load", n, strings.TrimSuffix(sub, "s")),
			})
		}
	}
	return out
}

// joinShown joins a file name to a shown directory path, which is an OS path or a "builtin:" one.
func joinShown(dir, name string) string {
	if strings.HasPrefix(dir, builtinPathPrefix) {
		return dir + "/" + name
	}
	return filepath.Join(dir, name)
}

// escapes reports whether name in dir is a symbolic link that leads out of
// its folder, which the loader does not follow.
func escapes(dir fs.FS, name string) bool {
	_, err := fs.Stat(dir, name)
	return errors.Is(err, rootfs.ErrEscapes)
}

// escapeDiagnostic names a link the loader does not follow.
func escapeDiagnostic(file string) Diagnostic {
	return Diagnostic{Path: file, Message: "is a symbolic link out of its folder; it is not read (a prompt or agent.yaml must be a file in the folder, or a link that stays inside it)"}
}
