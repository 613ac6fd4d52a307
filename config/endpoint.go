package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ModelOverride is a profile's models.<role> in its agent.yaml: one more layer of settings,
// above every source of the configuration, for the agents of that profile. An empty field keeps
// the configured value.
type ModelOverride struct {
	Model, BaseURL string
	// APIKeyEnv is the NAME of the variable holding the key, never the key.
	APIKeyEnv string
	// ToolProtocol is the profile's tool_protocol (native, json, auto).
	ToolProtocol string

	Profile, Path string // the profile's name and highest agent.yaml (profiles.Profile.Path), for origins, notes and errors
	// Workspace is set when a workspace wrote the override (a profile in its .zero/agents):
	// the endpoint it chooses gets no key, and it cannot choose the key's variable.
	Workspace bool
}

// origin is where the override's values come from, as an origin reads.
func (o ModelOverride) origin() string { return fmt.Sprintf("profile %s (%s)", o.Profile, o.Path) }

// Endpoint is a model role resolved for one session: the configuration, then a profile's
// override ([ModelOverride]), then the model the session chose, each above the last.
type Endpoint struct {
	// Model is the role's settings as the model client gets them; Model.APIKeyEnv is KeyEnv.
	Model Model
	// KeyEnv is the variable the key is read from ("" = send no key), Key its value, "" when
	// none is sent.
	KeyEnv, Key string
	// ModelOrigin, URLOrigin and KeyEnvOrigin tell where Model.Model, Model.BaseURL and
	// KeyEnv came from: an [Effective.Origin], "profile NAME (PATH)", or, for the model,
	// "session" (chosen in the editor).
	ModelOrigin, URLOrigin, KeyEnvOrigin string
	// FromWorkspace is set when the workspace chose the endpoint (its config.yaml or a profile
	// of its .zero/agents): it never gets your key.
	FromWorkspace bool
	// Notes are what the user should be told: an override that wins over a flag or a variable,
	// one that is ignored.
	Notes []string
}

// The reasons [Effective.Endpoint] cannot give a usable endpoint.
var (
	// ErrNoModel: no source names a model for the role.
	ErrNoModel = errors.New("no model configured")
	// ErrNoKey: OpenAI's endpoint (no base_url) would get no API key.
	ErrNoKey = errors.New("no API key for OpenAI's endpoint")
)

// Endpoint resolves role ("chat", "utility" or "embedding") for a session of a profile:
// sessionModel (chosen in the editor; "" for none) over the profile's override o over the
// configuration. A workspace may be a repository anyone wrote, so it does not get to send your
// keys anywhere: an endpoint chosen by the workspace (its config.yaml or a profile in its
// .zero/agents) gets no key, and a workspace's profile cannot name the variable a key is read
// from (a note says it is ignored). The override's base_url and (where it counts) api_key_env
// are checked as config.yaml's are ([*Error] naming the profile's agent.yaml). It fails with [ErrNoModel] when no
// model is set and [ErrNoKey] when OpenAI's endpoint would get no key, returning what it
// resolved all the same.
func (e *Effective) Endpoint(role string, o ModelOverride, sessionModel string) (Endpoint, error) {
	var m Model
	switch role {
	case "chat":
		m = e.Models.Chat
	case "utility":
		m = e.Models.Utility
	case "embedding":
		m = e.Models.Embedding
	default:
		return Endpoint{}, fmt.Errorf("config: unknown model role %q", role)
	}
	key := "models." + role + "."
	for _, f := range []struct{ name, val string }{{"base_url", o.BaseURL}, {"api_key_env", o.APIKeyEnv}, {"tool_protocol", o.ToolProtocol}} {
		if f.val == "" || f.name == "api_key_env" && o.Workspace { // a workspace's is ignored, and noted below
			continue
		}
		if _, msg := leafByKey[key+f.name].validate(f.val); msg != "" {
			return Endpoint{}, &Error{File: o.Path, Key: key + f.name, Msg: msg + " (profile " + o.Profile + ")"}
		}
	}
	ep := Endpoint{
		Model: m, KeyEnv: m.APIKeyEnv,
		ModelOrigin: e.Origin(key + "model"), URLOrigin: e.Origin(key + "base_url"), KeyEnvOrigin: e.Origin(key + "api_key_env"),
		// A workspace's api_key_env stands only when it is yours or empty (no
		// key sent): Load ignores any other, keeping your value.
		FromWorkspace: strings.Contains(e.Origin(key+"base_url"), "project "),
	}
	switch {
	case sessionModel != "":
		ep.Model.Model, ep.ModelOrigin = sessionModel, "session"
	case o.Model != "":
		if origin := ep.ModelOrigin; strings.HasPrefix(origin, "flag") || strings.HasPrefix(origin, "env") {
			ep.Notes = append(ep.Notes, fmt.Sprintf("profile %s uses %s model %s from its agent.yaml, not %s from %s", o.Profile, role, o.Model, m.Model, origin))
		}
		ep.Model.Model, ep.ModelOrigin = o.Model, o.origin()
	}
	if o.BaseURL != "" {
		ep.Model.BaseURL, ep.URLOrigin, ep.FromWorkspace = o.BaseURL, o.origin(), o.Workspace
	}
	if o.ToolProtocol != "" {
		ep.Model.ToolProtocol = o.ToolProtocol
	}
	if o.APIKeyEnv != "" {
		if o.Workspace {
			ep.Notes = append(ep.Notes, fmt.Sprintf("profile %s (%s): models.%s.api_key_env is ignored: a workspace cannot choose which secret is sent", o.Profile, o.Path, role))
		} else {
			ep.KeyEnv, ep.KeyEnvOrigin = o.APIKeyEnv, o.origin()
		}
	}
	ep.Model.APIKeyEnv = ep.KeyEnv
	if ep.Model.Model == "" {
		return ep, ErrNoModel
	}
	if !ep.FromWorkspace && ep.KeyEnv != "" {
		getenv := e.getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		ep.Key = getenv(ep.KeyEnv) // as set, untrimmed
	}
	if ep.Model.BaseURL == "" && ep.Key == "" {
		return ep, ErrNoKey
	}
	return ep, nil
}
