package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/mcpauth"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/trust"
)

// checkResult is what one doctor check found.
type checkResult struct {
	Name   string
	OK     bool   // false: the configured setup cannot work until fixed
	Note   bool   // true: fine, but worth knowing (ok stays true)
	Detail string // what was found
	Fix    string // how to fix it, when !ok or note
}

// Diagnose runs the doctor's checks, in order, on the assembly.
func Diagnose(ctx context.Context, a *App) []checkResult {
	conf := checkResult{Name: "configuration", OK: true, Detail: fmt.Sprintf("loaded (profile %s from %s)", a.Config.Profile, a.Config.Origin("profile"))}
	for _, ig := range a.Config.Ignored() {
		conf.Note, conf.Fix = true, "a workspace may only make these stricter; set them in your own config.yaml or with flags"
		conf.Detail += "; " + ig.String()
	}
	results := []checkResult{
		conf,
		checkModel(ctx, a),
		checkProfiles(a),
		checkSandbox(ctx, a),
		checkTrust(a),
		checkStore(a),
	}
	if r, ok := checkMCP(ctx, a); ok {
		results = append(results, r)
	}
	return results
}

// checkModel asks the chat endpoint for its models: it must answer, accept
// the key and list the configured model.
func checkModel(ctx context.Context, a *App) checkResult {
	r := checkResult{Name: "model endpoint"}
	p, err := a.Loader.Load(a.Config.Profile)
	if err != nil {
		r.Detail, r.Fix = err.Error(), "choose an existing profile (zero profiles)"
		return r
	}
	ep, err := a.endpoint("chat", p, "")
	switch {
	case errors.Is(err, ErrNoModel):
		r.Detail = "not configured: no chat model is set"
		r.Fix = "set ZERO_MODEL (or --model, or models.chat.model in " + config.UserFile(a.UserDir) +
			") to a model your endpoint serves, and OPENAI_BASE_URL for a server other than OpenAI's (for example http://localhost:11434/v1 for Ollama)"
		return r
	case errors.Is(err, ErrNoKey), err == nil && needsKey(ep):
		r.Detail, r.Fix = noKey(ep)
		return r
	}
	c, err := a.client("chat", p, "")
	if err != nil {
		r.Detail, r.Fix = err.Error(), "see zero config"
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ids, err := c.Models(ctx)
	var api *llm.APIError
	switch {
	case errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403):
		r.Detail, r.Fix = api.Error(), "check the key in the variable named by models.chat.api_key_env (zero config)"
	case err != nil:
		r.Detail, r.Fix = err.Error(), "check models.chat.base_url / OPENAI_BASE_URL and that the server runs"
	case len(ids) == 1 && ids[0] != c.Model():
		// A server that lists one model usually serves it under any name
		// (llama.cpp's server, llamafile, the scripted demo model): the
		// list is not proof of a mistake, and asking the model would
		// spend a reply. Said, not failed; a server that refuses the name
		// says so at the first message.
		r.OK, r.Note = true, true
		r.Detail = fmt.Sprintf("%s answers; it lists only %q, not %q: a single-model server answers to any name, others refuse it at the first message",
			a.Config.Origin("models.chat.base_url"), ids[0], c.Model())
		r.Fix = fmt.Sprintf("if the first message fails with a model error, set ZERO_MODEL=%s (or models.chat.model)", ids[0])
	case len(ids) > 1 && !slices.Contains(ids, c.Model()):
		r.Detail = fmt.Sprintf("the endpoint answers but does not list %q (it lists %s)", c.Model(), listed(ids))
		r.Fix = "set ZERO_MODEL (or models.chat.model) to one of the endpoint's models"
	default:
		r.OK, r.Detail = true, fmt.Sprintf("%s answers and serves %s", a.Config.Origin("models.chat.base_url"), c.Model())
	}
	if r.OK {
		a.describeWindow(ctx, &r, p, ep)
	}
	return r
}

// describeWindow adds the chat model's context window and where it comes
// from to the model check, and the endpoint's warning (Ollama running the
// model with less than it can read) as a note.
func (a *App) describeWindow(ctx context.Context, r *checkResult, p *profiles.Profile, ep endpoint) {
	tokens, source := a.Window(ctx, "chat", p, "")
	r.Detail += fmt.Sprintf("; context window %d tokens (%s)", tokens, source)
	cal := a.calibrator(ep.m).Calibration()
	if cal.Samples > 0 {
		r.Detail += fmt.Sprintf("; tokens counted with %s, calibrated ×%.2f over %d requests", llm.Tokenizer(ep.m.Model), cal.Ratio, cal.Samples)
	} else {
		r.Detail += fmt.Sprintf("; tokens counted with %s (×%.2f until the endpoint reports usage)", llm.Tokenizer(ep.m.Model), cal.Ratio)
	}
	if w := a.windowWarning(ep.m); w != "" {
		r.Note, r.Fix = true, w
	}
}

// unrepeat drops a part of an error chain that repeats the one before it
// ("failed to send request: failed to send request: Post …"), as libraries
// that wrap their own errors say it.
func unrepeat(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}

// listed names the models an endpoint listed, the first few.
func listed(ids []string) string {
	if len(ids) > 3 {
		return strings.Join(ids[:3], ", ") + fmt.Sprintf(" and %d more", len(ids)-3)
	}
	return strings.Join(ids, ", ")
}

// needsKey reports whether ep is an endpoint that needs an API key and
// gets none: one on another machine (not loopback or the local network),
// while a key variable is configured and empty, or the workspace chose the
// endpoint (it never gets your key). An empty api_key_env says "this
// server needs no key".
func needsKey(ep endpoint) bool {
	return ep.key == "" && ep.keyEnv != "" && !LocalEndpoint(cmp.Or(ep.m.BaseURL, llm.DefaultBaseURL))
}

// noKey says which key is missing for ep, and how to give it.
func noKey(ep endpoint) (detail, fix string) {
	where := "OpenAI's endpoint (" + llm.DefaultBaseURL + ", the default)"
	if ep.m.BaseURL != "" {
		where = shownURL(ep.m.BaseURL)
	}
	switch {
	case ep.fromWorkspace:
		return fmt.Sprintf("no API key: %s at %s needs one, and the workspace chose that endpoint (%s), which never gets your key", ep.m.Model, where, ep.urlOrigin),
			"set the endpoint yourself (OPENAI_BASE_URL, --base-url or models.chat.base_url in your own config.yaml)"
	case ep.keyEnv == "":
		return fmt.Sprintf("no API key: %s at %s needs one, and models.chat.api_key_env is empty", ep.m.Model, where),
			"set models.chat.api_key_env to the variable that holds your key (default " + config.DefaultAPIKeyEnv + ")"
	}
	return fmt.Sprintf("no API key: %s at %s needs one, and %s is not set", ep.m.Model, where, ep.keyEnv),
		fmt.Sprintf("export %s=<your key>; or, for a server that needs none, set models.chat.api_key_env: \"\" (or point OPENAI_BASE_URL at a local server such as Ollama, http://localhost:11434/v1)", ep.keyEnv)
}

// LocalEndpoint reports whether a base URL points at this machine or the
// local network (loopback, private and link-local addresses, localhost,
// names without a dot, .local, .lan, .internal, .home.arpa), where
// servers usually need no key.
func LocalEndpoint(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
	}
	if host == "" {
		return false
	}
	for _, suffix := range []string{".localhost", ".local", ".lan", ".internal", ".home.arpa"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return host == "localhost" || !strings.Contains(host, ".")
}

// checkTrust says whether the workspace's code may run; code that is off
// is a note, not a failure: Zero works without it.
func checkTrust(a *App) checkResult {
	r := checkResult{Name: "workspace code", OK: true}
	st, err := a.TrustState()
	switch {
	case err != nil:
		r.Note, r.Detail, r.Fix = true, err.Error(), "see "+a.Trust.Path()
	case st.Status == trust.StatusUntrusted || st.Status == trust.StatusChanged:
		r.Note, r.Detail, r.Fix = true, TrustSummary(st), "run zero trust: it shows each file (or what changed) and asks"
	default:
		r.Detail = TrustSummary(st)
	}
	return r
}

// checkProfiles loads every profile, so a broken agent.yaml shows here.
func checkProfiles(a *App) checkResult {
	infos, err := a.Loader.List()
	if err != nil {
		return checkResult{Name: "profiles", Detail: err.Error(), Fix: "fix or remove the agent.yaml named above"}
	}
	r := checkResult{Name: "profiles", OK: true, Detail: fmt.Sprintf("%d profiles", len(infos))}
	if _, err := a.Loader.Load(a.Config.Profile); err != nil {
		r.OK, r.Detail, r.Fix = false, err.Error(), "set profile to one of: zero profiles"
	}
	return r
}

// checkSandbox checks the backend that would run the agent's commands.
func checkSandbox(ctx context.Context, a *App) checkResult {
	r := checkResult{Name: "sandbox"}
	b := a.Config.Sandbox.Backend
	if b == "docker" || b == "auto" || b == "" {
		d, err := a.Docker()
		var img sandbox.ImageStatus
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if _, err = d.ListContainers(cctx); err == nil {
				img, err = d.ImageStatus(cctx)
			}
			cancel()
			d.Close()
		}
		switch {
		case err == nil:
			r.OK = true
			switch {
			case !img.Present:
				r.Detail = fmt.Sprintf("docker backend: the engine answers; image %s is not on it", img.Image)
				r.Note, r.Fix = true, "zero run (or the first session) pulls it before it starts, which needs a registry; or: docker pull "+img.Image
			case img.Provisioned == "":
				r.Detail = fmt.Sprintf("docker backend: the engine answers; image %s is present, not provisioned yet", img.Image)
				r.Note, r.Fix = true, "the first start runs the provisioning script once (a venv at /opt/venv by default)"
			default:
				r.Detail = fmt.Sprintf("docker backend: the engine answers; image %s is present and provisioned (%s)", img.Image, img.Provisioned)
			}
			return r
		case b == "docker":
			r.Detail, r.Fix = err.Error(), "start Docker or point DOCKER_HOST at an engine, or set sandbox.backend: local"
			return r
		}
		r.Note = true
		r.Fix = "no Docker engine answered (" + err.Error() + "): start Docker to confine the agent to a container"
	} else if b != "local" {
		r.Detail, r.Fix = fmt.Sprintf("unknown backend %q", b), "set sandbox.backend to auto, docker or local"
		return r
	}
	if _, err := exec.LookPath("bash"); err != nil {
		r.Detail, r.Fix = "local backend: bash not found", "install bash"
		return r
	}
	l, err := a.localBackend()
	if err != nil {
		r.Detail, r.Fix = err.Error(), "check the workspace folder and sandbox.hide"
		return r
	}
	defer l.Close()
	r.OK = true
	if mode, _ := l.Isolation(); mode == sandbox.IsolationBubblewrap {
		r.Detail = "local backend under " + l.IsolationSummary()
	} else {
		r.Detail = "local backend without isolation: " + l.IsolationSummary() + "; Zero asks before each command"
		if !r.Note {
			r.Note, r.Fix = true, "install bubblewrap (apt install bubblewrap) to confine commands to the workspace"
		}
	}
	return r
}

// checkStore opens the session store, reads every page of it (store.Check:
// about 150 ms per 170 MB) and counts this workspace's sessions: a store
// that cannot be opened, or is damaged, means sessions end with the
// process; a damaged one is named with the command that recovers it.
func checkStore(a *App) checkResult {
	r := checkResult{Name: "sessions"}
	path, err := StorePath()
	if errors.Is(err, ErrStoreOff) {
		r.OK, r.Note = true, true
		r.Detail = "kept in memory only (ZERO_STORE=off): they end with the process"
		r.Fix = "unset ZERO_STORE to keep them"
		return r
	} else if err != nil {
		r.Detail, r.Fix = err.Error(), "set XDG_DATA_HOME or HOME, or ZERO_STORE to a database file"
		return r
	}
	damaged := func(err error) checkResult {
		r.Detail = storeDamage(path, err) + ", and sessions end with the process"
		r.Fix = recoverFix(path)
		return r
	}
	st, err := store.Open(path)
	if store.IsDamaged(err) {
		return damaged(err)
	} else if err != nil {
		r.Detail = fmt.Sprintf("%s cannot be opened: %v", path, err)
		r.Fix = "make its folder writable, or set ZERO_STORE to another file; until then sessions end with the process"
		return r
	}
	defer st.Close()
	if err := store.Check(path); store.IsDamaged(err) {
		return damaged(err)
	}
	list, err := st.Sessions(store.ListOptions{Workspace: a.Workspace})
	if store.IsDamaged(err) {
		return damaged(err)
	} else if err != nil {
		r.Detail, r.Fix = fmt.Sprintf("%s: %v", path, err), "move the file away; Zero makes a new one"
		return r
	}
	r.OK, r.Detail = true, fmt.Sprintf("%d of this workspace stored in %s", len(list), path)
	// The memory lives in the same file.
	if n, err := st.CountMemories([]string{a.Workspace, ""}); err == nil {
		search := "by keywords (models.embedding is not set)"
		if m := a.Config.Models.Embedding.Model; m != "" {
			search = "by keywords and by meaning with " + m
		}
		r.Detail += fmt.Sprintf("; %d memories of this workspace and yours, searched %s", n, search)
	}
	return r
}

// checkMCP starts the MCP servers a session would get (the user's
// config.yaml, a trusted workspace's .mcp.json) and lists their tools;
// ok false when there are none to check.
func checkMCP(ctx context.Context, a *App) (checkResult, bool) {
	code, _ := a.workspaceCode()
	p := a.mcpPool("doctor", code)
	if p == nil {
		return checkResult{}, false
	}
	defer a.closePool("doctor")
	r := checkResult{Name: "MCP servers"}
	tools, errs := p.List(ctx)
	per := map[string]int{}
	for _, t := range tools {
		per[t.Server]++
	}
	// A URL server that needs the person's login is said so, with what
	// to run: the session refused for want of it (a 401 without a token
	// that can be renewed, or a 403 for more scopes), now or before.
	needsLogin := map[string]bool{}
	var others []error
	for _, err := range errs {
		if lr, ok := errors.AsType[*mcpauth.LoginRequired](err); ok {
			needsLogin[lr.Server] = true
			continue
		}
		others = append(others, err)
	}
	var parts, logins []string
	for _, s := range p.Servers() {
		where := ""
		if s.Command != "" { // where it starts: never the workspace
			where = " starts in " + s.Dir
			if code != "" && strings.HasPrefix(s.Dir, code) {
				where = " runs from the trusted copy of " + a.Workspace
			}
		}
		if s.URL != "" {
			st, _ := a.mcpAuth().Status(s)
			switch {
			case needsLogin[s.Name] || st.NeedsLogin || st.Expired:
				where = " needs a login: " + mcpconf.LoginHint(s.Name)
				logins = append(logins, "`zero mcp login "+s.Name+"`")
			case st.LoggedIn:
				where = " logged in"
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%d tools)%s", s.Name, per[s.Name], where))
	}
	r.Detail = strings.Join(parts, ", ")
	if len(others) > 0 {
		var msgs []string
		for _, err := range others {
			msgs = append(msgs, unrepeat(err.Error()))
		}
		r.Detail += "; " + strings.Join(msgs, "; ")
		r.Fix = "check the server's command, args, env or url in mcp_servers of your config.yaml (or the workspace's .mcp.json)"
	}
	if len(logins) > 0 {
		r.Fix = strings.TrimPrefix(r.Fix+"; run "+strings.Join(logins, " and "), "; ")
	}
	if len(others) > 0 || len(logins) > 0 {
		return r, true
	}
	r.OK = true
	return r, true
}
