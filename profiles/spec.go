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

	"github.com/zeroagent/zero/yamlwalk"
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
	// ToolProtocol is how this profile's model calls tools: native, json or auto (the
	// configuration's models.<role>.tool_protocol); checked where the endpoint is resolved.
	ToolProtocol string `yaml:"tool_protocol"`
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
	Model        *string `yaml:"model"`
	BaseURL      *string `yaml:"base_url"`
	APIKeyEnv    *string `yaml:"api_key_env"`
	ToolProtocol *string `yaml:"tool_protocol"`
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
// The document is read by the walker config.yaml is read by ([yamlwalk]: null, aliases, <<
// merges, duplicate keys, malformed YAML) and checked against rawSpec's shape node by node, which
// gives "file:line: key: problem" for every mistake at once; the checked document is then decoded
// with KnownFields(true). Each problem is an error wrapping [ErrInvalidSpec] and a
// [*yamlwalk.Error].
func parseSpec(file string, data []byte) (rawSpec, error) {
	w := &yamlwalk.Walker{File: file}
	root := w.Parse(data)
	if root != nil {
		checkNode(w, root, reflect.TypeFor[rawSpec](), "")
	}
	if len(w.Errs) > 0 {
		problems := make([]error, len(w.Errs))
		for i, e := range w.Errs {
			problems[i] = fmt.Errorf("%w: %w", ErrInvalidSpec, e)
		}
		return rawSpec{}, errors.Join(problems...)
	}
	if root == nil { // an empty or null file sets nothing
		return rawSpec{}, nil
	}
	var raw rawSpec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return rawSpec{}, fmt.Errorf("%w: %s: %w", ErrInvalidSpec, file, err)
	}
	return raw, nil
}

// checkNode reports every place where n does not fit type t. key is the dotted path of n.
func checkNode(w *yamlwalk.Walker, n *yaml.Node, t reflect.Type, key string) {
	report := func(n *yaml.Node, key, msg string) {
		if key == "" {
			key = "document"
		}
		w.Fail(n.Line, key, msg)
	}
	n = yamlwalk.Resolve(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if yamlwalk.IsNull(n) {
		return // null leaves the value unset
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			report(n, key, "must be a mapping, got "+yamlwalk.Describe(n))
			return
		}
		fields := map[string]reflect.Type{}
		var names []string
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			fields[name] = f.Type
			names = append(names, name)
		}
		w.Mapping(n, key, func(k, v *yaml.Node, key string) {
			ft, ok := fields[k.Value]
			if !ok {
				report(k, key, "unknown key (known keys: "+strings.Join(names, ", ")+")")
				return
			}
			checkNode(w, v, ft, key)
		})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			report(n, key, "must be a mapping, got "+yamlwalk.Describe(n))
			return
		}
		w.Mapping(n, key, func(k, v *yaml.Node, sub string) {
			if key == "models" && !slices.Contains(modelRoles, k.Value) {
				report(k, sub, "unknown model role (known roles: "+strings.Join(modelRoles, ", ")+")")
				return
			}
			checkNode(w, v, t.Elem(), sub)
		})
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			report(n, key, "must be a list, got "+yamlwalk.Describe(n))
			return
		}
		for i, v := range n.Content {
			item := fmt.Sprintf("%s[%d]", key, i)
			if yamlwalk.IsNull(v) { // an empty entry would match no tool, silently
				report(v, item, "must be a single value, got null")
				continue
			}
			checkNode(w, v, t.Elem(), item)
		}
	case reflect.String:
		// Any scalar reads as text, so "user: 1000" works; only structure is a type error.
		if n.Kind != yaml.ScalarNode {
			report(n, key, "must be a single value, got "+yamlwalk.Describe(n))
			return
		}
		if key == "sandbox.backend" {
			switch n.Value {
			case "", BackendDocker, BackendLocal:
			default:
				report(n, key, fmt.Sprintf("must be %s or %s, got %q", BackendDocker, BackendLocal, n.Value))
			}
		}
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
		set(&o.ToolProtocol, m.ToolProtocol)
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
