package mcp

import (
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

const onThisMachine = "on this machine (confined by bubblewrap when it is installed)"

// zero_start and zero_run offer the profiles that fit the backend: the
// hacker profile, written for the Docker backend's Kali container (its
// agent.yaml says sandbox.backend: docker), only where commands may run in
// a container. The description names agent0 as the default and says the
// profile named "default" is not.
func TestProfilesFitTheBackend(t *testing.T) {
	env := newEnv(t, nil)
	for _, tt := range []struct {
		backend string
		hacker  bool
	}{
		{"", true},
		{"docker", true},
		{"auto", true},
		{"local", false},
	} {
		f, err := newFace(Options{Manager: env.Manager, Catalog: env.Catalog, Backend: tt.backend})
		if err != nil {
			t.Fatal(err)
		}
		tools := advertised(t, f)
		for _, name := range []string{"zero_start", "zero_run"} {
			p := tools[name].In["properties"].(map[string]any)["profile"].(map[string]any)
			ids, desc := anyStrings(p["enum"]), p["description"].(string)
			if slices.Contains(ids, "hacker") != tt.hacker || strings.Contains(desc, "hacker") != tt.hacker {
				t.Errorf("backend %q: %s offers %v: %s; want hacker offered: %v", tt.backend, name, ids, desc, tt.hacker)
			}
			if ids[0] != "agent0" || !slices.Contains(ids, "default") || !slices.Contains(ids, "developer") {
				t.Errorf("backend %q: %s offers %v", tt.backend, name, ids)
			}
			if !strings.Contains(desc, "Default: agent0 (") || !strings.Contains(desc, "default (The base prompts") ||
				!strings.Contains(desc, "despite its name, not the default") {
				t.Errorf("the description must name agent0 as the default and say \"default\" is not: %s", desc)
			}
		}
		if err := f.checkProfile("hacker"); (err == nil) != tt.hacker {
			t.Errorf("backend %q: checkProfile(hacker) = %v", tt.backend, err)
		}
	}
}

// A profile that is not offered is refused with the reason; the default
// profile is offered whatever it is, since a session without a profile
// gets it.
func TestProfileNotOffered(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) {
		f.opts.Backend, f.opts.Sandbox = "local", onThisMachine
		f.newMCPServer()
	})
	_, res := call(t, r.c, "zero_start", map[string]any{"message": "scan", "workspace": env.Workspace, "profile": "hacker"})
	if !res.IsError || !strings.Contains(text(res), "profile: hacker is written for the docker sandbox") || !strings.Contains(text(res), onThisMachine) {
		t.Errorf("zero_start with hacker on the local backend = %q", text(res))
	}
	if len(env.Manager.List()) != 0 {
		t.Error("a session was created")
	}
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "code", "workspace": env.Workspace, "profile": "developer"})
	mustOK(t, res)
	if s, _ := env.Manager.Get(out["session"].(string)); s.Spec().Profile != "developer" {
		t.Errorf("profile = %q", s.Spec().Profile)
	}

	f := &face{opts: Options{Backend: "local", Catalog: server.StaticCatalog{ProfileList: []server.Choice{{ID: "hacker", Backend: "docker"}, {ID: "developer"}}}}}
	if got := profileIDs(f.offeredProfiles()); !slices.Equal(got, []string{"hacker", "developer"}) {
		t.Errorf("with hacker the default, offered %v", got)
	}
}
