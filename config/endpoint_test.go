package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEndpoint: a profile's override is one more layer above the
// configuration, and the session's model one above it; a workspace's
// endpoint gets no key and a workspace's profile cannot choose the key's
// variable.
func TestEndpoint(t *testing.T) {
	t.Parallel()
	user := ModelOverride{Profile: "dev", Path: "/u/agents/dev/agent.yaml"}
	project := ModelOverride{Profile: "dev", Path: "/w/.zero/agents/dev/agent.yaml", Workspace: true}
	with := func(o ModelOverride, f func(*ModelOverride)) ModelOverride { f(&o); return o }
	tests := []struct {
		name          string
		userFile      string
		projectFile   string
		env           []string
		flags         map[string]string
		role, session string
		o             ModelOverride
		want          Endpoint
		err           error
	}{
		{name: "configured", env: []string{"ZERO_MODEL", "m", "OPENAI_API_KEY", "sk"}, role: "chat", o: user,
			want: Endpoint{Model: Model{Model: "m", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY", Key: "sk",
				ModelOrigin: "env ZERO_MODEL", URLOrigin: "default", KeyEnvOrigin: "default"}},
		{name: "no model", env: []string{"OPENAI_API_KEY", "sk"}, role: "chat", o: user, err: ErrNoModel,
			want: Endpoint{Model: Model{APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "default", URLOrigin: "default", KeyEnvOrigin: "default"}},
		{name: "no key for OpenAI", env: []string{"ZERO_MODEL", "m"}, role: "chat", o: user, err: ErrNoKey,
			want: Endpoint{Model: Model{Model: "m", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "env ZERO_MODEL", URLOrigin: "default", KeyEnvOrigin: "default"}},
		{name: "the profile's model over a flag's, said", flags: map[string]string{"models.chat.model": "f", "models.chat.base_url": "http://h/v1"}, role: "chat",
			o: with(user, func(o *ModelOverride) { o.Model = "p" }),
			want: Endpoint{Model: Model{Model: "p", BaseURL: "http://h/v1", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "profile dev (/u/agents/dev/agent.yaml)", URLOrigin: "flag --base-url", KeyEnvOrigin: "default",
				Notes: []string{"profile dev uses chat model p from its agent.yaml, not f from flag --model"}}},
		{name: "the session's model over the profile's", flags: map[string]string{"models.chat.base_url": "http://h/v1"}, role: "chat", session: "s",
			o: with(user, func(o *ModelOverride) { o.Model = "p" }),
			want: Endpoint{Model: Model{Model: "s", BaseURL: "http://h/v1", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "session", URLOrigin: "flag --base-url", KeyEnvOrigin: "default"}},
		{name: "a user profile's endpoint and key variable", env: []string{"ZERO_MODEL", "m", "MY_KEY", "sk-mine"}, role: "utility",
			o: with(user, func(o *ModelOverride) { o.BaseURL, o.APIKeyEnv = "http://p/v1", "MY_KEY" }),
			want: Endpoint{Model: Model{Model: "m", BaseURL: "http://p/v1", APIKeyEnv: "MY_KEY", ContextLength: DefaultContextLength}, KeyEnv: "MY_KEY", Key: "sk-mine",
				ModelOrigin: "same as models.chat.model (env ZERO_MODEL)", URLOrigin: "profile dev (/u/agents/dev/agent.yaml)", KeyEnvOrigin: "profile dev (/u/agents/dev/agent.yaml)"}},
		{name: "a workspace profile's endpoint gets no key, nor its key variable", env: []string{"ZERO_MODEL", "m", "OPENAI_API_KEY", "sk", "MY_KEY", "sk-mine"}, role: "chat",
			o: with(project, func(o *ModelOverride) { o.BaseURL, o.APIKeyEnv = "http://p/v1", "MY_KEY" }),
			want: Endpoint{Model: Model{Model: "m", BaseURL: "http://p/v1", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "env ZERO_MODEL", URLOrigin: "profile dev (/w/.zero/agents/dev/agent.yaml)", KeyEnvOrigin: "default", FromWorkspace: true,
				Notes: []string{"profile dev (/w/.zero/agents/dev/agent.yaml): models.chat.api_key_env is ignored: a workspace cannot choose which secret is sent"}}},
		{name: "a workspace config's endpoint gets no key", projectFile: "models:\n  chat:\n    base_url: http://w/v1\n", env: []string{"ZERO_MODEL", "m", "OPENAI_API_KEY", "sk"}, role: "chat", o: user,
			want: Endpoint{Model: Model{Model: "m", BaseURL: "http://w/v1", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY",
				ModelOrigin: "env ZERO_MODEL", URLOrigin: "project $P:3", KeyEnvOrigin: "default", FromWorkspace: true}},
		{name: "a user profile's endpoint over a workspace config's gets the key", projectFile: "models:\n  chat:\n    base_url: http://w/v1\n", env: []string{"ZERO_MODEL", "m", "OPENAI_API_KEY", "sk"}, role: "chat",
			o: with(user, func(o *ModelOverride) { o.BaseURL = "http://p/v1" }),
			want: Endpoint{Model: Model{Model: "m", BaseURL: "http://p/v1", APIKeyEnv: "OPENAI_API_KEY", ContextLength: DefaultContextLength}, KeyEnv: "OPENAI_API_KEY", Key: "sk",
				ModelOrigin: "env ZERO_MODEL", URLOrigin: "profile dev (/u/agents/dev/agent.yaml)", KeyEnvOrigin: "default"}},
		{name: "embedding", userFile: "models:\n  embedding:\n    model: e\n", env: []string{"OPENAI_API_KEY", "sk"}, role: "embedding", o: ModelOverride{},
			want: Endpoint{Model: Model{Model: "e", APIKeyEnv: "OPENAI_API_KEY"}, KeyEnv: "OPENAI_API_KEY", Key: "sk",
				ModelOrigin: "user $U:3", URLOrigin: "same as models.chat.base_url (default)", KeyEnvOrigin: "same as models.chat.api_key_env (default)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, uf, pf := layout(t, tt.userFile, tt.projectFile)
			src.Getenv, src.Flags = env(tt.env...), tt.flags
			e, err := Load(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Endpoint(tt.role, tt.o, tt.session)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
			r := strings.NewReplacer("$U", uf, "$P", pf)
			tt.want.ModelOrigin, tt.want.URLOrigin = r.Replace(tt.want.ModelOrigin), r.Replace(tt.want.URLOrigin)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Endpoint (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndpointChecksTheOverride: a profile's base_url and api_key_env are
// checked as config.yaml's are; the message never repeats a pasted key.
func TestEndpointChecksTheOverride(t *testing.T) {
	t.Parallel()
	e, err := Load(Sources{Getenv: env("ZERO_MODEL", "m")})
	if err != nil {
		t.Fatal(err)
	}
	for o, want := range map[ModelOverride]string{
		{BaseURL: "localhost:11434", Profile: "dev", Path: "/u/agents/dev/agent.yaml"}: `/u/agents/dev/agent.yaml: models.chat.base_url: must be an http:// or https:// URL, got "localhost:11434" (profile dev)`,
		{APIKeyEnv: "sk-pasted key", Profile: "dev", Path: "/u/agents/dev/agent.yaml"}: "/u/agents/dev/agent.yaml: models.chat.api_key_env: must be the NAME of the environment variable",
		{ToolProtocol: "tools", Profile: "dev", Path: "/u/agents/dev/agent.yaml"}:      `/u/agents/dev/agent.yaml: models.chat.tool_protocol: must be one of "auto", "native", "json", got "tools"`,
	} {
		_, err := e.Endpoint("chat", o, "")
		if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "sk-pasted") {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
	// A workspace's api_key_env is ignored, whatever it holds: no error, a note.
	ep, err := e.Endpoint("chat", ModelOverride{APIKeyEnv: "sk-pasted key", BaseURL: "http://w/v1", Workspace: true}, "")
	if err != nil || len(ep.Notes) != 1 || strings.Contains(ep.Notes[0], "sk-pasted") {
		t.Errorf("a workspace's api_key_env: %v, notes %q", err, ep.Notes)
	}
	// A profile's tool_protocol wins over the configuration's.
	if ep, err := e.Endpoint("chat", ModelOverride{ToolProtocol: "json", BaseURL: "http://localhost:11434/v1", Profile: "dev", Path: "/u/agents/dev/agent.yaml"}, ""); err != nil || ep.Model.ToolProtocol != "json" {
		t.Errorf("a profile's tool_protocol: %v, %q", err, ep.Model.ToolProtocol)
	}
	if _, err := e.Endpoint("vision", ModelOverride{}, ""); err == nil {
		t.Error("an unknown role resolved")
	}
}
