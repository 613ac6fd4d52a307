package profiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// layerSources maps each on-disk layer to its folder in testdata/layers and to where it goes in a
// test's workspace or user directory.
var layerSources = map[string]struct{ src, dst string }{
	LayerProjectProfile: {"workspace/.zero/agents", "ws/.zero/agents"},
	LayerProject:        {"workspace/.zero/prompts", "ws/.zero/prompts"},
	LayerUserProfile:    {"user/agents", "user/agents"},
	LayerUser:           {"user/prompts", "user/prompts"},
}

// layeredLoader returns a Loader over a copy of the given layers of testdata/layers. The built-in
// profile layer is testdata/layers/builtin when listed, else empty; the built-in default prompts
// are always the real ones.
func layeredLoader(t *testing.T, layers ...string) *Loader {
	t.Helper()
	root := t.TempDir()
	builtin := fs.FS(fstest.MapFS{})
	for _, ly := range layers {
		if ly == LayerBuiltinProfile {
			builtin = os.DirFS("testdata/layers/builtin")
			continue
		}
		s, ok := layerSources[ly]
		if !ok {
			t.Fatalf("unknown layer %q", ly)
		}
		if err := os.CopyFS(filepath.Join(root, s.dst), os.DirFS(filepath.Join("testdata/layers", s.src))); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLoader(filepath.Join(root, "ws"), filepath.Join(root, "user"))
	l.builtin = builtin
	return l
}

var allLayers = []string{LayerProjectProfile, LayerProject, LayerUserProfile, LayerUser, LayerBuiltinProfile}

// TestLayerPrecedence renders two files of the probe profile with different subsets of the
// layers present: layer.md, which each layer has and none includes further, and
// agent.system.main.solving.md, which each layer extends with {{ include original }} down to the
// built-in default.
func TestLayerPrecedence(t *testing.T) {
	t.Parallel()
	defaultSolving, err := New().Render("agent.system.main.solving.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layers []string
		winner string // layer.md
		chain  string // agent.system.main.solving.md before the default's text
	}{
		{"all six layers", allLayers, LayerProjectProfile,
			"project+profile solving\nproject solving\nuser+profile solving\nuser solving\nbuilt-in profile solving\n"},
		{"project prompts beat the user profile", []string{LayerProject, LayerUserProfile, LayerUser, LayerBuiltinProfile}, LayerProject,
			"project solving\nuser+profile solving\nuser solving\nbuilt-in profile solving\n"},
		{"user profile beats user prompts", []string{LayerUserProfile, LayerUser, LayerBuiltinProfile}, LayerUserProfile,
			"user+profile solving\nuser solving\nbuilt-in profile solving\n"},
		{"user prompts beat the built-in profile", []string{LayerUser, LayerBuiltinProfile}, LayerUser,
			"user solving\nbuilt-in profile solving\n"},
		{"built-in profile alone", []string{LayerBuiltinProfile}, LayerBuiltinProfile,
			"built-in profile solving\n"},
		{"gaps are skipped", []string{LayerProjectProfile, LayerUser}, LayerProjectProfile,
			"project+profile solving\nuser solving\n"},
		{"project profile over the built-in one", []string{LayerProjectProfile, LayerBuiltinProfile}, LayerProjectProfile,
			"project+profile solving\nbuilt-in profile solving\n"},
		{"user profile alone", []string{LayerUserProfile}, LayerUserProfile,
			"user+profile solving\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := layeredLoader(t, tt.layers...).Load("probe")
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Prompts.Render("layer.md", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.winner {
				t.Errorf("layer.md = %q, want %q", got, tt.winner)
			}
			got, err = p.Prompts.Render("agent.system.main.solving.md", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.chain+defaultSolving, got); diff != "" {
				t.Errorf("include original chain (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProjectAndUserPromptsApplyToEveryProfile checks the two prompts-only layers reach a profile
// that has no folder of its own there, built-in or not.
func TestProjectAndUserPromptsApplyToEveryProfile(t *testing.T) {
	t.Parallel()
	l := layeredLoader(t, LayerProject, LayerUser)
	l.builtin = BuiltinFS()
	for _, name := range []string{"default", "developer"} {
		p, err := l.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Prompts.Render("agent.system.main.solving.md", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, "project solving\nuser solving\n## Solving tasks") {
			t.Errorf("%s: solving prompt = %q", name, got)
		}
	}
}

func TestSpecMerge(t *testing.T) {
	t.Parallel()
	builtinSpec := Spec{
		Title: "Probe", Description: "built-in description", Context: "built-in context",
		Models: map[string]ModelOverride{
			"chat":    {Model: "builtin-chat", BaseURL: "http://127.0.0.1:1/v1"},
			"utility": {Model: "builtin-utility"},
		},
		Tools:   ToolFilter{Deny: []string{"input"}},
		Sandbox: SandboxSpec{User: "builtin"},
	}
	userOverBuiltin := Spec{
		Title: "User probe", Description: "built-in description", Context: "",
		Models: map[string]ModelOverride{
			"chat":    {Model: "user-chat", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "USER_KEY"},
			"utility": {Model: "builtin-utility"},
		},
		Tools:   ToolFilter{Allow: []string{"response", "code_execution_tool"}, Deny: []string{"input"}},
		Sandbox: SandboxSpec{User: "builtin"},
	}
	all := userOverBuiltin
	all.Description = "project description"
	all.Models = map[string]ModelOverride{
		"chat":      {Model: "user-chat", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "USER_KEY"},
		"utility":   {Model: "builtin-utility"},
		"embedding": {Model: "project-embed"},
	}
	// The project's tools (deny: []) cannot clear the user's deny of
	// "input": a workspace's filter only restricts.
	all.Tools = ToolFilter{Allow: []string{"response", "code_execution_tool"}, Deny: []string{"input"}, Workspace: &ToolFilter{Deny: []string{}}}
	// The project's sandbox.user ("1000") is dropped: a workspace cannot
	// choose who commands run as.

	tests := []struct {
		name      string
		layers    []string
		want      Spec
		wantLayer string
		wantPath  string // relative to the loader's root, or a builtin: path
	}{
		{"built-in only", []string{LayerBuiltinProfile}, builtinSpec, LayerBuiltinProfile, "builtin:agents/probe/agent.yaml"},
		{"user over built-in", []string{LayerUserProfile, LayerBuiltinProfile}, userOverBuiltin, LayerUserProfile, "user/agents/probe/agent.yaml"},
		{"all three", allLayers, all, LayerProjectProfile, "ws/.zero/agents/probe/agent.yaml"},
		{"project alone", []string{LayerProjectProfile}, Spec{
			Description: "project description",
			Models:      map[string]ModelOverride{"embedding": {Model: "project-embed"}},
			Tools:       ToolFilter{Workspace: &ToolFilter{Deny: []string{}}},
		}, LayerProjectProfile, "ws/.zero/agents/probe/agent.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := layeredLoader(t, tt.layers...)
			p, err := l.Load("probe")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Spec); diff != "" {
				t.Errorf("Spec (-want +got):\n%s", diff)
			}
			if slices.Contains(tt.layers, LayerUserProfile) && p.Spec.Tools.Allows("input") {
				t.Error("the workspace's agent.yaml gave back a tool the user's profile denies")
			}
			if slices.Contains(tt.layers, LayerProjectProfile) &&
				!slices.ContainsFunc(p.Diagnostics, func(d Diagnostic) bool { return strings.Contains(d.Message, "sandbox.user") }) {
				t.Errorf("no diagnostic says the project's sandbox.user is ignored: %v", p.Diagnostics)
			}
			wantPath := tt.wantPath
			if !strings.HasPrefix(wantPath, builtinPathPrefix) {
				wantPath = filepath.Join(filepath.Dir(l.workspace), filepath.FromSlash(wantPath))
			}
			if p.Layer != tt.wantLayer || p.Path != wantPath {
				t.Errorf("Layer, Path = %q, %q; want %q, %q", p.Layer, p.Path, tt.wantLayer, wantPath)
			}
		})
	}
}

// TestFolderWithoutAgentYAML checks that a folder of prompts alone makes a profile exist, and that
// Layer and Path then point at the highest agent.yaml below it, or at the folder.
func TestFolderWithoutAgentYAML(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, name := range []string{"developer", "bare"} {
		dir := filepath.Join(ws, ".zero", "agents", name, "prompts")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "agent.system.main.specifics.md"), []byte("project "+name+"\n{{ include original }}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLoader(ws, "")
	tests := []struct {
		name, layer, path, title, specifics string
	}{
		{"developer", LayerBuiltinProfile, "builtin:agents/developer/agent.yaml", "Developer", "project developer\n## Specialisation: software developer"},
		{"bare", LayerProjectProfile, filepath.Join(ws, ".zero", "agents", "bare"), "", "project bare\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := l.Load(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Layer != tt.layer || p.Path != tt.path || p.Spec.Title != tt.title {
				t.Errorf("Layer, Path, Title = %q, %q, %q; want %q, %q, %q", p.Layer, p.Path, p.Spec.Title, tt.layer, tt.path, tt.title)
			}
			got, err := p.Prompts.Render("agent.system.main.specifics.md", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tt.specifics) {
				t.Errorf("specifics = %q, want prefix %q", got, tt.specifics)
			}
		})
	}
}

func TestSpecErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		profile string
		want    []string // each must appear in the error
	}{
		{"unknown-key", []string{":2: descripton: unknown key (known keys: title, description, context, models, tools, sandbox)"}},
		{"unknown-nested", []string{":4: models.chat.modle: unknown key (known keys: model, base_url, api_key_env, tool_protocol)"}},
		{"unknown-role", []string{":2: models.chta: unknown model role (known roles: chat, utility, embedding)"}},
		{"title-list", []string{":1: title: must be a single value, got a list"}},
		{"allow-string", []string{`:2: tools.allow: must be a list, got "response"`}},
		{"sandbox-scalar", []string{`:1: sandbox: must be a mapping, got "root"`}},
		{"root-list", []string{":1: document: must be a mapping, got a list"}},
		{"syntax", []string{":2: title.context: malformed YAML: mapping values are not allowed in this context"}},
		{"two-problems", []string{":3: tools.deny: must be a list, got a mapping", ":5: sandbox.uid: unknown key (known keys: user, backend)"}},
		{"sandbox-backend", []string{`:3: sandbox.backend: must be docker or local, got "kali"`}},
	}
	l := NewLoader("", "testdata/bad")
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			t.Parallel()
			_, err := l.Load(tt.profile)
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Load(%q) error = %v, want ErrInvalidSpec", tt.profile, err)
			}
			file := filepath.Join("testdata/bad/agents", tt.profile, "agent.yaml")
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error does not name %s:\n%v", file, err)
			}
			for _, w := range tt.want {
				if strings.HasPrefix(w, ":") {
					w = file + w // the line comes right after the file name
				}
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestAgentZeroProfileAsUserProfile copies testdata/reviewer, a profile folder in Agent Zero's
// layout with a Python variables plugin, into a user directory as a user would.
func TestAgentZeroProfileAsUserProfile(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	if err := os.CopyFS(filepath.Join(user, "agents", "reviewer"), os.DirFS("testdata/reviewer")); err != nil {
		t.Fatal(err)
	}
	p, err := NewLoader(t.TempDir(), user).Load("reviewer")
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := Spec{
		Title:       "Reviewer",
		Description: "Test profile in Agent Zero's folder layout, used by profile_test.go.",
		Context:     "Use this agent to review a change and report problems.",
	}
	if diff := cmp.Diff(wantSpec, p.Spec); diff != "" {
		t.Errorf("Spec (-want +got):\n%s", diff)
	}
	if p.Layer != LayerUserProfile || p.Path != filepath.Join(user, "agents", "reviewer", "agent.yaml") {
		t.Errorf("Layer, Path = %q, %q", p.Layer, p.Path)
	}
	wantDiags := []Diagnostic{{
		Path:    filepath.Join(user, "agents", "reviewer", "prompts", "agent.system.main.tips.py"),
		Message: "Agent Zero variables plugin (Python), which Zero does not run; Zero provides workdir_path natively",
	}}
	if diff := cmp.Diff(wantDiags, p.Diagnostics); diff != "" {
		t.Errorf("Diagnostics (-want +got):\n%s", diff)
	}

	vars := standardVars()
	vars["agent_profiles"] = "- reviewer: review changes\n"
	sys := systemPrompt(t, p.Prompts, vars)
	tips, err := New().Render("agent.system.response_tool_tips.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	additions, err := New().Render("agent.system.main.communication_additions.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		want string
		in   bool
	}{
		{"code reviewer agent named A0", true},             // role overridden
		{"autonomous agent of the Zero framework", false},  // default role gone
		{"flags missing tests and unchecked errors", true}, // specifics
		{"answer with one json object only", true},         // communication overridden
		{additions, true},                             // ... and includes Zero's additions
		{"list findings by severity", true},           // response tool overridden
		{tips, true},                                  // ... and includes Zero's tips
		{"7 before reporting, rerun the tests", true}, // solving extends the default
		{"### call_subordinate", true},                // Zero's other tools stay
		{"- reviewer: review changes", true},          // agent_profiles provided natively
		{"work inside /home/dev/project", true},       // workdir_path provided natively
		{"/never/used", false},                        // the plugin does not run
		{"{{", false},
	} {
		if got := strings.Contains(sys, tt.want); got != tt.in {
			t.Errorf("system prompt contains %q = %v, want %v", tt.want, got, tt.in)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	files := map[string]string{
		"agents/a0/agent.json":                            `{"title": "saved from the web UI"}`,
		"agents/a0/settings.json":                         `{"chat_model_name": "gpt-4.1"}`,
		"agents/a0/plugins/_memory/config.json":           `{}`,
		"agents/a0/prompts/agent.system.tool.call_sub.py": "class P(VariablesPlugin):\n    def get_variables(self, file, backup_dirs=None, **kwargs):\n        return build()\n",
		"agents/a0/prompts/agent.system.main.extra.py":    "class P(VariablesPlugin):\n    def get_variables(self, file, backup_dirs=None, **kwargs):\n        return {\"team_name\": 'x', 'date_time': now()}\n",
		"agents/a0/prompts/helper.py":                     "print('no plugin here')\n",
		"agents/a0/tools/ping.py":                         "pass\n",
		"agents/a0/extensions/agent_init/_10_hi.py":       "pass\n",
		"agents/a0/extensions/agent_init/_20_hi.py":       "pass\n",
		"agents/a0/extensions/README.md":                  "not python\n",
		"prompts/agent.system.datetime.py":                "return {'date_time': 1}\n",
	}
	for name, content := range files {
		p := filepath.Join(user, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewLoader("", user).Load("a0")
	if err != nil {
		t.Fatal(err)
	}
	at := func(rel string) string { return filepath.Join(user, filepath.FromSlash(rel)) }
	const plugin = "Agent Zero variables plugin (Python), which Zero does not run"
	want := []Diagnostic{
		{at("agents/a0/agent.json"), "Zero reads agent.yaml, not agent.json; write title, description and context into agent.yaml"},
		{at("agents/a0/settings.json"), "Agent Zero per-profile settings, which Zero does not read; put model choices under models: in agent.yaml"},
		{at("agents/a0/plugins"), "Agent Zero plugin configuration, which Zero does not read"},
		{at("agents/a0/tools"), "1 Agent Zero Python tool file(s), which Zero does not load"},
		{at("agents/a0/extensions"), "2 Agent Zero Python extension file(s), which Zero does not load"},
		{at("agents/a0/prompts/agent.system.main.extra.py"), plugin + "; Zero provides date_time natively; Zero does not provide team_name, so {{team_name}} stays in the prompt as written"},
		{at("agents/a0/prompts/agent.system.tool.call_sub.py"), plugin + "; Zero provides agent_profiles natively"},
		{at("agents/a0/prompts/helper.py"), plugin + "; Zero provides these vars natively: " + strings.Join(NativeVars, ", ")},
		{at("prompts/agent.system.datetime.py"), plugin + "; Zero provides date_time natively"},
	}
	if diff := cmp.Diff(want, p.Diagnostics); diff != "" {
		t.Errorf("Diagnostics (-want +got):\n%s", diff)
	}
	if got, want := p.Diagnostics[0].String(), at("agents/a0/agent.json")+": Zero reads agent.yaml"; !strings.HasPrefix(got, want) {
		t.Errorf("String() = %q, want prefix %q", got, want)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	l := layeredLoader(t, LayerProjectProfile, LayerUserProfile, LayerUser)
	l.builtin = BuiltinFS()
	ws, user := l.workspace, l.userDir
	// A project folder without agent.yaml for a built-in profile, a user profile in Agent Zero's
	// layout, and entries that are not profiles.
	if err := os.MkdirAll(filepath.Join(ws, ".zero", "agents", "developer", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(user, "agents", "reviewer"), os.DirFS("testdata/reviewer")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".zero", "agents", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "agents", "notes.txt"), []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{
		{Name: "agent0", Title: "Agent 0", Layer: LayerBuiltinProfile, Path: "builtin:agents/agent0/agent.yaml"},
		{Name: "default", Title: "Default", Layer: LayerBuiltinProfile, Path: "builtin:agents/default/agent.yaml"},
		{Name: "developer", Title: "Developer", Layer: LayerBuiltinProfile, Path: "builtin:agents/developer/agent.yaml"},
		{Name: "hacker", Title: "Hacker", Backend: BackendDocker, Layer: LayerBuiltinProfile, Path: "builtin:agents/hacker/agent.yaml"},
		{Name: "probe", Title: "User probe", Description: "project description", Layer: LayerProjectProfile, Path: filepath.Join(ws, ".zero", "agents", "probe", "agent.yaml")},
		{Name: "researcher", Title: "Researcher", Layer: LayerBuiltinProfile, Path: "builtin:agents/researcher/agent.yaml"},
		{Name: "reviewer", Title: "Reviewer", Description: "Test profile in Agent Zero's folder layout, used by profile_test.go.",
			Context: "Use this agent to review a change and report problems.", Layer: LayerUserProfile, Path: filepath.Join(user, "agents", "reviewer", "agent.yaml")},
	}
	// Descriptions and contexts of the built-ins are prose checked elsewhere.
	ignoreProse := func(infos []Info) []Info {
		out := slices.Clone(infos)
		for i := range out {
			if strings.HasPrefix(out[i].Path, builtinPathPrefix) {
				out[i].Description, out[i].Context = "", ""
			}
		}
		return out
	}
	if diff := cmp.Diff(want, ignoreProse(got)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

// TestListReportsBadProfiles keeps the good profiles listed when some agent.yaml files are bad.
func TestListReportsBadProfiles(t *testing.T) {
	t.Parallel()
	infos, err := NewLoader("", "testdata/bad").List()
	if !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("List error = %v, want ErrInvalidSpec", err)
	}
	for _, name := range []string{"unknown-key", "syntax", "two-problems"} {
		if !strings.Contains(err.Error(), filepath.Join("testdata/bad/agents", name, "agent.yaml")) {
			t.Errorf("error does not name %s's agent.yaml:\n%v", name, err)
		}
	}
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	if diff := cmp.Diff([]string{"agent0", "default", "developer", "hacker", "researcher"}, names); diff != "" {
		t.Errorf("listed profiles (-want +got):\n%s", diff)
	}
}

func TestBadNames(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	// A real folder the bad names could reach if they were joined to a path.
	if err := os.MkdirAll(filepath.Join(ws, ".zero", "agents", "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := NewLoader(ws, t.TempDir())
	tests := []struct {
		name, why string
	}{
		{"", "the name is empty"},
		{".", "relative directory"},
		{"..", "relative directory"},
		{"../agents", "path separator"},
		{"sub/deeper", "path separator"},
		{`sub\deeper`, "path separator"},
		{"/etc", "path separator"},
		{".zero", "hidden"},
		{"bad\x00name", "control character"},
		{"nope", `no folder "nope" in ` + filepath.Join(ws, ".zero", "agents")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := l.Load(tt.name)
			if !errors.Is(err, ErrNoProfile) || p != nil {
				t.Fatalf("Load(%q) = %v, %v; want ErrNoProfile", tt.name, p, err)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Load(%q) error %q does not say %q", tt.name, err, tt.why)
			}
		})
	}
}

func TestNoWorkspaceNoUser(t *testing.T) {
	t.Parallel()
	p, err := NewLoader("", "").Load("default")
	if err != nil {
		t.Fatal(err)
	}
	if p.Layer != LayerBuiltinProfile || p.Path != "builtin:agents/default/agent.yaml" || len(p.Diagnostics) != 0 {
		t.Errorf("default = %q %q %v", p.Layer, p.Path, p.Diagnostics)
	}
	// default has no prompt folder of its own: its prompts are the default set.
	for _, name := range New().Names("*") {
		want, err1 := New().Render(name, fileVars[name])
		got, err2 := p.Prompts.Render(name, fileVars[name])
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("%s differs from the default set: %v %v", name, err1, err2)
		}
	}
}

func TestToolFilterAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		filter ToolFilter
		tool   string
		want   bool
	}{
		{"empty allows all", ToolFilter{}, "code_execution_tool", true},
		{"allow list admits", ToolFilter{Allow: []string{"response", "input"}}, "input", true},
		{"allow list excludes", ToolFilter{Allow: []string{"response"}}, "input", false},
		{"deny excludes", ToolFilter{Deny: []string{"input"}}, "input", false},
		{"deny wins over allow", ToolFilter{Allow: []string{"input"}, Deny: []string{"input"}}, "input", false},
		{"pattern in allow", ToolFilter{Allow: []string{"mcp_*"}}, "mcp_github_search", true},
		{"pattern in deny", ToolFilter{Deny: []string{"mcp_*"}}, "mcp_github_search", false},
		{"empty allow list from yaml allows all", ToolFilter{Allow: []string{}}, "input", true},
		{"bad pattern matches only itself", ToolFilter{Allow: []string{"["}}, "[", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.filter.Allows(tt.tool); got != tt.want {
				t.Errorf("%+v.Allows(%q) = %v, want %v", tt.filter, tt.tool, got, tt.want)
			}
		})
	}
}

func TestFormatProfileList(t *testing.T) {
	t.Parallel()
	got := FormatProfileList([]Info{
		{Name: "developer", Context: "Use for code.", Description: "ignored"},
		{Name: "agent0", Description: "Falls back to\n  the description."},
		{Name: "bare"},
	})
	want := "- developer: Use for code.\n- agent0: Falls back to the description.\n- bare\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLoadSeesEdits checks that a Loader reads the disk on each Load, so a new profile needs no
// restart.
func TestLoadSeesEdits(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	l := NewLoader("", user)
	if _, err := l.Load("late"); !errors.Is(err, ErrNoProfile) {
		t.Fatalf("Load before creating = %v, want ErrNoProfile", err)
	}
	if err := os.MkdirAll(filepath.Join(user, "agents", "late"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "agents", "late", "agent.yaml"), []byte("title: Late\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := l.Load("late")
	if err != nil || p.Spec.Title != "Late" {
		t.Fatalf("Load after creating = %+v, %v", p, err)
	}
}
