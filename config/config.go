package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/rootfs"
)

// Model configures one model role: which OpenAI-compatible endpoint and model to call, where its
// key comes from, how much it can read and how fast it may be called.
type Model struct {
	BaseURL       string `yaml:"base_url"`       // "" = OpenAI's
	Model         string `yaml:"model"`          // "" = not configured
	APIKeyEnv     string `yaml:"api_key_env"`    // NAME of the env var holding the key; "" = send no key
	ContextLength int    `yaml:"context_length"` // tokens the model reads; default: what the endpoint says, else 128000
	// MaxOutputTokens caps one answer of the model: 0 = the default (a quarter of the context, at
	// most 8192, for chat; 2048 for utility), -1 = send no cap.
	MaxOutputTokens int `yaml:"max_output_tokens"`
	// ToolProtocol is how the model calls tools: "native" (the API's tool calls), "json" (Agent
	// Zero's JSON object in the reply's text) or "auto" ("" too, the default: native where the
	// endpoint takes tools, else JSON).
	ToolProtocol string `yaml:"tool_protocol"`
	// Vision says whether the model sees images: "true", "false" or "auto" ("" too, the default:
	// what the endpoint's model list says, else on, and off once the endpoint refuses images).
	Vision    string        `yaml:"vision"`
	RateLimit RateLimit     `yaml:"rate_limit"`
	Timeouts  ModelTimeouts `yaml:"timeouts"`
	// Price is what the model charges, to cost the calls whose endpoint
	// reports no cost; see [Effective.Price].
	Price Price `yaml:"price"`
}

// Price is a model's price in a currency per million tokens: Input for
// prompt tokens, Output for completion tokens, Cached for the prompt tokens
// the provider's cache served (when unset, as Input). Unset (no source sets
// any of them): the cost is unknown, which is not free; a 0 that a source
// sets is free.
type Price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
	Cached float64 `yaml:"cached"`
}

// ModelTimeouts bound one model call: 0 = the default ([DefaultTimeouts]),
// [NoDeadline] (-1, or -1s) = no limit, as the model client (llm.Options)
// reads them. A file gives each as a duration ("90s", "5m") or, as before,
// a whole number of seconds.
type ModelTimeouts struct {
	Header time.Duration `yaml:"header"` // until the response headers (a local server may send them only with the first token)
	Idle   time.Duration `yaml:"idle"`   // between stream events; keep-alive bytes do not count
	Total  time.Duration `yaml:"total"`  // one whole call, retries included
}

// NoDeadline is the deadline that means none: -1 (second), as written in a file.
const NoDeadline = -time.Second

// DefaultTimeouts are the deadlines a 0 stands for: the model client's
// defaults (llm.DefaultHeaderTimeout and the others).
var DefaultTimeouts = ModelTimeouts{Header: 300 * time.Second, Idle: 300 * time.Second, Total: 30 * time.Minute}

// RateLimit caps the calls to one model per minute; 0 means no cap.
type RateLimit struct {
	Requests     int `yaml:"requests"`
	InputTokens  int `yaml:"input_tokens"`
	OutputTokens int `yaml:"output_tokens"`
}

// Models holds one [Model] per role.
//
// Utility (summaries, memory) takes every field that no source sets from Chat, so one endpoint
// and model serve both unless the user says otherwise. Embedding takes only BaseURL and
// APIKeyEnv from Chat when unset (embeddings are usually served by the same endpoint); its
// Model stays "" until configured, meaning "no embedding model".
type Models struct {
	Chat      Model `yaml:"chat"`
	Utility   Model `yaml:"utility"`
	Embedding Model `yaml:"embedding"`
}

// Sandbox configures where the agent's commands run.
type Sandbox struct {
	Backend string  `yaml:"backend"` // "auto" (default: docker when an engine is reachable, else local), "docker", "local"
	Image   string  `yaml:"image"`   // default "kalilinux/kali-rolling"
	Network string  `yaml:"network"` // docker network mode, default "bridge"
	Memory  string  `yaml:"memory"`  // docker memory limit such as "512m" or "4g"; "" = the default, 4g
	CPUs    float64 `yaml:"cpus"`    // 0 = no limit
	Pids    int     `yaml:"pids"`    // 0 = the default, 4096
	User    string  `yaml:"user"`    // "" = the workspace's owner; "root" to opt in
	// Hide lists more paths (absolute, or ~/…) that the agent's commands
	// must not see, besides the built-in list of credential folders and
	// sockets; a workspace may add to it, never remove.
	Hide []string `yaml:"hide"`
	// Provision is the first-start script of a docker image ("" = the
	// default: a Python venv at /opt/venv that the shells activate).
	Provision string `yaml:"provision"`
	// Timeouts of a command, in seconds (Agent Zero's 30/15/180/5), and of
	// the output runtime that reads more of it (90/45/300/5).
	Timeouts       Timeouts `yaml:"timeouts"`
	OutputTimeouts Timeouts `yaml:"output_timeouts"`
}

// Timeouts say how long a command may stay silent before the model gets
// its output so far: FirstOutput before any output, BetweenOutput after
// some, Max in all; Dialog is the silence after which a last line that looks
// like a question ends the wait. A file writes them as durations ("30s",
// "3m") or as whole seconds (30).
type Timeouts struct {
	FirstOutput   time.Duration `yaml:"first_output"`
	BetweenOutput time.Duration `yaml:"between_output"`
	Max           time.Duration `yaml:"max"`
	Dialog        time.Duration `yaml:"dialog"`
}

// Limits bound the agent loop. Each means what the engine's loop.Limits field of the same name
// means, so the values are passed as they are: a 0 of subordinate_depth or critical_retries is
// none there too (loop takes them as *int, nil being its own default), and models.chat's
// context_length is loop.Limits.ContextTokens, where 0 is the default as here.
type Limits struct {
	Misformat        int `yaml:"misformat"`         // malformed replies in a row before giving up; default 3, at least 1
	Repeat           int `yaml:"repeat"`            // identical replies in a row before giving up; default 3, at least 1
	SubordinateDepth int `yaml:"subordinate_depth"` // how deep call_subordinate may nest; default 5, 0 = no delegation
	CriticalRetries  int `yaml:"critical_retries"`  // retries after an unexpected error per monologue; default 1
	// Tokens and Cost are a run's budget: its model calls' total tokens, and
	// their cost where known (in the prices' currency); a run that reached
	// either ends with stop reason "budget". 0 = no limit.
	Tokens int     `yaml:"tokens"`
	Cost   float64 `yaml:"cost"`
}

// Config is the whole configuration. Its yaml tags are the keys of the config files; the dotted
// key of a field joins them, e.g. "models.chat.rate_limit.requests".
type Config struct {
	Models   Models  `yaml:"models"`
	Profile  string  `yaml:"profile"` // default "agent0"
	Sandbox  Sandbox `yaml:"sandbox"`
	Approval string  `yaml:"approval"` // "sandbox" (default: auto in a container, ask for commands on the host), "auto", "ask"
	Limits   Limits  `yaml:"limits"`
	Memory   Memory  `yaml:"memory"`
	Search   Search  `yaml:"search"`
	// DocumentQuery configures the document_query tool.
	DocumentQuery DocumentQuery `yaml:"document_query"`
}

// Search configures the search_engine tool.
type Search struct {
	URL string `yaml:"url"` // a SearXNG-compatible endpoint; "" = not configured
	// Timeout bounds one search; 0 = the default, 20s. A file gives a duration ("20s") or, as
	// before, a whole number of seconds.
	Timeout time.Duration `yaml:"timeout"`
}

// DocumentQuery configures the document_query tool.
type DocumentQuery struct {
	// AllowPrivate lets it fetch URLs of loopback, private and link-local
	// addresses (an intranet wiki); off, a model cannot make Zero, on this
	// machine, reach the services only this machine reaches.
	AllowPrivate bool `yaml:"allow_private"`
	// Timeout bounds one fetch; 0 = the default, 60s. A file gives a duration ("60s") or, as
	// before, a whole number of seconds.
	Timeout time.Duration `yaml:"timeout"`
}

// Memory configures Agent Zero's memory: recalling memories into the prompt
// and memorizing what a conversation taught, both with the utility model.
// It works without an embedding model (by keywords); models.embedding adds
// search by meaning.
type Memory struct {
	Recall         bool `yaml:"recall"`          // default true
	RecallInterval int  `yaml:"recall_interval"` // turns between recalls; default 3
	Memorize       bool `yaml:"memorize"`        // default true
	Consolidation  bool `yaml:"consolidation"`   // merge new memories with similar ones; default true
}

// Default values, exported so help texts can quote them.
const (
	DefaultAPIKeyEnv        = "OPENAI_API_KEY"
	DefaultContextLength    = 128000
	DefaultProfile          = "agent0"
	DefaultSandboxBackend   = "auto"
	DefaultImage            = "kalilinux/kali-rolling"
	DefaultNetwork          = "bridge"
	DefaultApproval         = "sandbox"
	DefaultMisformat        = 3
	DefaultRepeat           = 3
	DefaultSubordinateDepth = 5
	DefaultCriticalRetries  = 1
)

// Defaults returns the configuration used when no source sets anything. Utility and embedding
// fields are empty here: Load fills them from chat (see [Models]).
func Defaults() Config {
	return Config{
		Models: Models{Chat: Model{
			APIKeyEnv:     DefaultAPIKeyEnv,
			ContextLength: DefaultContextLength,
		}},
		Profile: DefaultProfile,
		Sandbox: Sandbox{Backend: DefaultSandboxBackend, Image: DefaultImage, Network: DefaultNetwork,
			Timeouts:       Timeouts{FirstOutput: 30 * time.Second, BetweenOutput: 15 * time.Second, Max: 3 * time.Minute, Dialog: 5 * time.Second},
			OutputTimeouts: Timeouts{FirstOutput: 90 * time.Second, BetweenOutput: 45 * time.Second, Max: 5 * time.Minute, Dialog: 5 * time.Second},
		},
		Approval: DefaultApproval,
		Memory:   Memory{Recall: true, RecallInterval: 3, Memorize: true, Consolidation: true},
		Limits: Limits{
			Misformat:        DefaultMisformat,
			Repeat:           DefaultRepeat,
			SubordinateDepth: DefaultSubordinateDepth,
			CriticalRetries:  DefaultCriticalRetries,
		},
	}
}

// Sources says where Load reads from. The zero value reads the process environment only.
type Sources struct {
	UserDir   string              // directory holding the user's config.yaml; "" = no user file
	Workspace string              // the workspace; its .zero/config.yaml is the project file; "" = none
	Getenv    func(string) string // nil = os.Getenv
	// Flags holds the flags the user actually set (flag.FlagSet.Visit), by dotted key, e.g.
	// {"models.chat.model": "gpt-4.1", "profile": "developer"}. An empty value is a value: it
	// overrides lower sources (--base-url "" picks OpenAI over $OPENAI_BASE_URL).
	Flags map[string]string
}

// UserFile is the user's config file inside userDir.
func UserFile(userDir string) string { return filepath.Join(userDir, "config.yaml") }

// ProjectFile is the project's config file inside workspace.
func ProjectFile(workspace string) string { return filepath.Join(workspace, ".zero", "config.yaml") }

// Effective is the merged configuration and where each value came from. It is not changed after
// Load, so it is safe for concurrent use.
type Effective struct {
	Config // the merged values, defaults filled in

	// MCPServers are the MCP servers of the user's config.yaml (mcp_servers),
	// by name; a workspace's are reported by Ignored and never started.
	MCPServers map[string]mcpconf.Server

	origins map[string]string // dotted key -> origin
	getenv  func(string) string
	files   []fileStatus // the files consulted, for Print
	ignored []Ignored    // the project's values that would have loosened policy
}

// Ignored lists the values the workspace's config file set that Load did
// not use because they would have loosened policy (see [Load]).
func (e *Effective) Ignored() []Ignored {
	if e == nil {
		return nil
	}
	return slices.Clone(e.ignored)
}

type fileStatus struct {
	layer string // "user" or "project"
	path  string
	found bool
}

// setting is one value from one source.
type setting struct {
	val    any // string, int or float64, matching the leaf's kind
	origin string
}

// Load reads the user file, the project file, the environment and the flags, and merges them per
// key: flags > environment > project > user > defaults. The project file belongs to the workspace,
// which may be a repository someone else wrote: its policy keys (approval, sandbox.backend,
// network, image, user, provision, memory, cpus, pids, the loop's limits, the models' rate limits,
// deadlines and api_key_env) count only when they make things stricter
// than the user's own settings, sandbox.hide only adds to the user's list, and what was dropped is
// reported by [Effective.Ignored]. A missing or empty file is fine. Every
// problem in every source is reported at once: the result is errors.Join of [*Error] values
// (each matching [ErrInvalid]), or an error wrapping the file system's error when a file exists
// but cannot be read.
func Load(src Sources) (*Effective, error) {
	getenv := src.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	e := &Effective{origins: map[string]string{}, getenv: getenv}
	vals := defaultSettings()
	set := map[string]bool{} // keys some source other than the defaults set
	apply := func(m map[string]setting) {
		for k, s := range m {
			vals[k] = s
			set[k] = true
		}
	}
	var errs []error

	for _, f := range []struct{ layer, dir, path string }{
		{"user", src.UserDir, UserFile(src.UserDir)},
		{"project", src.Workspace, ProjectFile(src.Workspace)},
	} {
		if f.dir == "" {
			continue
		}
		data, err := readConfig(f.layer, f.dir, f.path)
		if errors.Is(err, rootfs.ErrEscapes) {
			// A workspace's config.yaml that links out of the workspace
			// is not read: its target could be any file of yours.
			e.ignored = append(e.ignored, Ignored{Key: "config.yaml", Value: "a symbolic link out of the workspace", Origin: "project " + f.path,
				Kept: "your own configuration", Why: "such links are not followed"})
			e.files = append(e.files, fileStatus{layer: f.layer, path: f.path})
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			e.files = append(e.files, fileStatus{layer: f.layer, path: f.path})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("config: read %s file: %w", f.layer, err)
		}
		e.files = append(e.files, fileStatus{layer: f.layer, path: f.path, found: true})
		fp := parse(f.layer, f.path, data)
		m := fp.out
		if f.layer == "project" {
			e.ignored = tighten(m, vals)
			// A workspace's MCP servers would start programs on this
			// machine: they are reported, never started.
			for _, name := range slices.Sorted(maps.Keys(fp.servers)) {
				s := fp.servers[name]
				e.ignored = append(e.ignored, Ignored{Key: "mcp_servers." + name, Value: cmp.Or(s.Command, s.URL), Origin: s.Origin,
					Kept: "no server", Why: "a workspace's MCP servers go in its .mcp.json, which starts them once you trust the workspace (zero trust); or configure them in your own config.yaml"})
			}
		} else {
			e.MCPServers = fp.servers
		}
		apply(m)
		errs = append(errs, fp.errs...)
	}

	m, eerrs := fromEnv(getenv)
	apply(m)
	errs = append(errs, eerrs...)

	m, ferrs := fromFlags(src.Flags)
	apply(m)
	errs = append(errs, ferrs...)

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	inheritFromChat(vals, set)

	rv := reflect.ValueOf(&e.Config).Elem()
	for _, l := range leaves {
		s := vals[l.key]
		rv.FieldByIndex(l.index).Set(reflect.ValueOf(s.val))
		e.origins[l.key] = s.origin
	}
	return e, nil
}

// inheritFromChat fills the utility and embedding fields no source set from chat's, recording
// where chat's value came from.
func inheritFromChat(vals map[string]setting, set map[string]bool) {
	for _, l := range leaves {
		role, field, ok := strings.Cut(strings.TrimPrefix(l.key, "models."), ".")
		if !ok || set[l.key] {
			continue
		}
		switch {
		case role == "utility" && strings.HasPrefix(field, "price.") &&
			set["models.utility.model"] && vals["models.utility.model"].val != vals["models.chat.model"].val:
			continue // another model: chat's price is not its price
		case role == "utility":
		case role == "embedding" && (field == "base_url" || field == "api_key_env"):
		default:
			continue
		}
		chatKey := "models.chat." + field
		chat := vals[chatKey]
		vals[l.key] = setting{val: chat.val, origin: "same as " + chatKey + " (" + chat.origin + ")"}
	}
}

// defaultSettings is Defaults() by dotted key, each with origin "default".
func defaultSettings() map[string]setting {
	d := reflect.ValueOf(Defaults())
	m := make(map[string]setting, len(leaves))
	for _, l := range leaves {
		m[l.key] = setting{val: d.FieldByIndex(l.index).Interface(), origin: "default"}
	}
	return m
}

// Origin tells where the value of a dotted key came from: "default", "user <path>:<line>",
// "project <path>:<line>", "env NAME", "flag --name", or, for a utility or embedding field
// taken from chat, "same as models.chat.<field> (<chat's origin>)". It returns "" for a key
// that is not a value (a section such as "models.chat", or an unknown key).
func (e *Effective) Origin(key string) string {
	if e == nil {
		return ""
	}
	return e.origins[key]
}

// APIKey returns the API key for a role ("chat", "utility" or "embedding"): the value of the
// environment variable that Models.<role>.APIKeyEnv names, read through Sources.Getenv. It is ""
// for an unknown role, an empty APIKeyEnv, or an unset variable. The key is read on each call
// and never stored in the Config, so printing or logging a Config cannot leak it.
func (e *Effective) APIKey(role string) string {
	if e == nil {
		return ""
	}
	var name string
	switch role {
	case "chat":
		name = e.Models.Chat.APIKeyEnv
	case "utility":
		name = e.Models.Utility.APIKeyEnv
	case "embedding":
		name = e.Models.Embedding.APIKeyEnv
	}
	if name == "" {
		return ""
	}
	return e.lookup(name)
}

// Price returns the price of a role's configured model ("chat", "utility"
// or "embedding"), and false when no source set any of its price keys (for
// utility, directly or as chat's, whose model it then is): the cost of its
// calls is unknown. An unset Cached is Input.
func (e *Effective) Price(role string) (Price, bool) {
	if e == nil {
		return Price{}, false
	}
	var p Price
	switch role {
	case "chat":
		p = e.Models.Chat.Price
	case "utility":
		p = e.Models.Utility.Price
	case "embedding":
		p = e.Models.Embedding.Price
	default:
		return Price{}, false
	}
	set := func(field string) bool {
		o := e.origins["models."+role+".price."+field]
		return o != "" && o != "default" && !strings.HasSuffix(o, "(default)")
	}
	if !set("input") && !set("output") && !set("cached") {
		return Price{}, false
	}
	if !set("cached") {
		p.Cached = p.Input
	}
	return p, true
}

// lookup reads an environment variable the way Load was told to.
func (e *Effective) lookup(name string) string {
	getenv := e.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return strings.TrimSpace(getenv(name))
}

// Keys returns every dotted key of a value, in the order Print shows them.
func Keys() []string {
	keys := make([]string, len(leaves))
	for i, l := range leaves {
		keys[i] = l.key
	}
	return slices.Clip(keys)
}

// maxConfigFile bounds a config.yaml.
const maxConfigFile = 4 << 20

// readConfig reads a layer's config.yaml: the user's as it is, a
// workspace's through an os.Root of the workspace, so that neither .zero
// nor the file may be a link out of it.
func readConfig(layer, dir, path string) ([]byte, error) {
	if layer != "project" {
		return os.ReadFile(path)
	}
	return rootfs.ReadFile(dir, ".zero", "config.yaml", maxConfigFile)
}
