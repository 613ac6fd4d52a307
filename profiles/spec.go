package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Model roles a profile's agent.yaml may override under models.
const (
	RoleChat      = "chat"
	RoleUtility   = "utility"
	RoleEmbedding = "embedding"
)

var modelRoles = []string{RoleChat, RoleUtility, RoleEmbedding}

// Spec is a profile's agent.yaml: Agent Zero's keys (title, description, context) plus Zero's
// model overrides, tool filter and sandbox settings. Unknown keys are errors, so a typo does not
// silently change nothing.
type Spec struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	// Context says when to use this profile; superiors see it in the call_subordinate tool prompt.
	Context string `yaml:"context"`
	// Models maps a role ("chat", "utility", "embedding") to the model this profile uses for it.
	Models  map[string]ModelOverride `yaml:"models"`
	Tools   ToolFilter               `yaml:"tools"`
	Sandbox SandboxSpec              `yaml:"sandbox"`
}

// ModelOverride replaces the configured model of one role for agents of the profile. An empty
// field keeps the configured value.
type ModelOverride struct {
	Model   string `yaml:"model"`
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv is the NAME of the environment variable holding the key, never the key itself,
	// so profile folders can be shared without leaking secrets.
	APIKeyEnv string `yaml:"api_key_env"`
}

// ToolFilter limits the tools an agent of the profile gets. Entries are tool names or path.Match
// patterns ("mcp_*").
type ToolFilter struct {
	Allow []string `yaml:"allow"` // empty = all tools
	Deny  []string `yaml:"deny"`
	// Workspace is the filter of a workspace's agent.yaml, which can only
	// take tools away from what the layers below allow: a tool must pass
	// both.
	Workspace *ToolFilter `yaml:"-"`
}

// Allows reports whether tool passes the filter: it must match Allow (when Allow is not empty)
// and must not match Deny. Deny wins over Allow.
func (f ToolFilter) Allows(tool string) bool {
	if f.Workspace != nil && !f.Workspace.Allows(tool) {
		return false
	}
	if matchAny(f.Deny, tool) {
		return false
	}
	return len(f.Allow) == 0 || matchAny(f.Allow, tool)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// SandboxSpec holds the profile's sandbox settings.
type SandboxSpec struct {
	User string `yaml:"user"` // the user commands run as (docker backend), "" = default
	// Backend is the sandbox backend the profile is written for ("docker":
	// its prompts count on the container's tools and on a container between
	// the agent and the user's machine); "" fits any. The editor faces offer
	// a profile only where it fits.
	Backend string `yaml:"backend"`
}

// Backends a profile may be written for.
const (
	BackendDocker = "docker"
	BackendLocal  = "local"
)

// rawSpec mirrors Spec with pointers, so merging can tell a key that a layer sets (even to "")
// from one it leaves out. A key set to null counts as left out.
type rawSpec struct {
	Title       *string             `yaml:"title"`
	Description *string             `yaml:"description"`
	Context     *string             `yaml:"context"`
	Models      map[string]rawModel `yaml:"models"`
	Tools       *rawTools           `yaml:"tools"`
	Sandbox     *rawSandbox         `yaml:"sandbox"`
}

type rawModel struct {
	Model     *string `yaml:"model"`
	BaseURL   *string `yaml:"base_url"`
	APIKeyEnv *string `yaml:"api_key_env"`
}

type rawTools struct {
	Allow *[]string `yaml:"allow"`
	Deny  *[]string `yaml:"deny"`
}

type rawSandbox struct {
	User    *string `yaml:"user"`
	Backend *string `yaml:"backend"`
}

// parseSpec decodes one agent.yaml. file is the name used in errors (the file's path).
//
// yaml.v3's own errors name the line but not the key for a wrong type, so the document is first
// checked against rawSpec's shape node by node, which gives "file:line: key: problem" for every
// mistake at once; the checked document is then decoded with KnownFields(true).
func parseSpec(file string, data []byte) (rawSpec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return rawSpec{}, fmt.Errorf("%w: %s: %w", ErrInvalidSpec, file, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 { // an empty file sets nothing
		return rawSpec{}, nil
	}
	root := doc.Content[0]
	if isNull(root) {
		return rawSpec{}, nil
	}
	var problems []error
	checkNode(root, reflect.TypeFor[rawSpec](), "", func(n *yaml.Node, key, msg string) {
		where := key
		if where == "" {
			where = "document"
		}
		problems = append(problems, fmt.Errorf("%w: %s:%d: %s: %s", ErrInvalidSpec, file, n.Line, where, msg))
	})
	if len(problems) > 0 {
		return rawSpec{}, errors.Join(problems...)
	}
	var raw rawSpec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return rawSpec{}, fmt.Errorf("%w: %s: %w", ErrInvalidSpec, file, err)
	}
	if sb := raw.Sandbox; sb != nil && sb.Backend != nil {
		switch *sb.Backend {
		case "", BackendDocker, BackendLocal:
		default:
			return rawSpec{}, fmt.Errorf("%w: %s: sandbox.backend: want %s or %s, got %q", ErrInvalidSpec, file, BackendDocker, BackendLocal, *sb.Backend)
		}
	}
	return raw, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// checkNode reports every place where n does not fit type t. key is the dotted path of n.
func checkNode(n *yaml.Node, t reflect.Type, key string, report func(n *yaml.Node, key, msg string)) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isNull(n) {
		return // null leaves the value unset
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			report(n, key, "want a mapping, got "+describe(n))
			return
		}
		fields := map[string]reflect.Type{}
		var names []string
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			fields[name] = f.Type
			names = append(names, name)
		}
		for k, v := range pairs(n) {
			ft, ok := fields[k.Value]
			if !ok {
				report(k, join(key, k.Value), "unknown key (known keys: "+strings.Join(names, ", ")+")")
				continue
			}
			checkNode(v, ft, join(key, k.Value), report)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			report(n, key, "want a mapping, got "+describe(n))
			return
		}
		for k, v := range pairs(n) {
			if key == "models" && !slices.Contains(modelRoles, k.Value) {
				report(k, join(key, k.Value), "unknown model role (known roles: "+strings.Join(modelRoles, ", ")+")")
				continue
			}
			checkNode(v, t.Elem(), join(key, k.Value), report)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			report(n, key, "want a list, got "+describe(n))
			return
		}
		for i, v := range n.Content {
			checkNode(v, t.Elem(), fmt.Sprintf("%s[%d]", key, i), report)
		}
	case reflect.String:
		// Any scalar reads as text, so "user: 1000" works; only structure is a type error.
		if n.Kind != yaml.ScalarNode {
			report(n, key, "want a string, got "+describe(n))
		}
	}
}

// pairs yields the key and value nodes of a mapping node.
func pairs(n *yaml.Node) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !yield(n.Content[i], n.Content[i+1]) {
				return
			}
		}
	}
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value)
	default:
		return "an unexpected node"
	}
}

// merge applies the keys that higher sets over s. Models merge per role and then per field, so a
// project can change only the chat model's name and keep the base URL a lower layer gave it. A
// workspace's tool filter (workspace true) restricts the one below it instead of replacing it.
func (s *Spec) merge(higher rawSpec, workspace bool) {
	set(&s.Title, higher.Title)
	set(&s.Description, higher.Description)
	set(&s.Context, higher.Context)
	for role, m := range higher.Models {
		if s.Models == nil {
			s.Models = map[string]ModelOverride{}
		}
		o := s.Models[role]
		set(&o.Model, m.Model)
		set(&o.BaseURL, m.BaseURL)
		set(&o.APIKeyEnv, m.APIKeyEnv)
		s.Models[role] = o
	}
	if t := higher.Tools; t != nil {
		dst := &s.Tools
		if workspace {
			if s.Tools.Workspace == nil {
				s.Tools.Workspace = &ToolFilter{}
			}
			dst = s.Tools.Workspace
		}
		if t.Allow != nil {
			dst.Allow = slices.Clone(*t.Allow)
		}
		if t.Deny != nil {
			dst.Deny = slices.Clone(*t.Deny)
		}
	}
	if sb := higher.Sandbox; sb != nil {
		set(&s.Sandbox.User, sb.User)
		set(&s.Sandbox.Backend, sb.Backend)
	}
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
