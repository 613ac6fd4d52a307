package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/trust"
)

// checkResult is what one doctor check found.
type checkResult struct {
	name   string
	ok     bool   // false: the configured setup cannot work until fixed
	note   bool   // true: fine, but worth knowing (ok stays true)
	detail string // what was found
	fix    string // how to fix it, when !ok or note
}

// doctorCommand checks, in order, what the configured setup needs and says
// for each what is wrong and how to fix it. It exits 0 only when all is in
// order.
func doctorCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero doctor", args, true, doctorHelp, stdout, stderr)
	if a == nil {
		if code == 2 { // the configuration itself is broken: that is the finding
			fmt.Fprintln(stdout, "✗ configuration: see the error above")
			return 1
		}
		return code
	}
	// An unknown profile is the same usage error as in every command.
	if code := a.profileGate(stderr); code != 0 {
		return code
	}
	// The report says each finding once: the warnings the checks would log
	// (an MCP server that did not start) are those findings again. ZERO_LOG
	// still asks for the logs.
	if os.Getenv("ZERO_LOG") == "" {
		a.logger = slog.New(secrets.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}), logSecrets.Load))
	}
	conf := checkResult{name: "configuration", ok: true, detail: fmt.Sprintf("loaded (profile %s from %s)", a.cfg.Profile, a.cfg.Origin("profile"))}
	for _, ig := range a.cfg.Ignored() {
		conf.note, conf.fix = true, "a workspace may only make these stricter; set them in your own config.yaml or with flags"
		conf.detail += "; " + ig.String()
	}
	results := []checkResult{
		conf,
		a.checkModel(ctx),
		a.checkProfiles(),
		a.checkSandbox(ctx),
		a.checkTrust(),
		a.checkStore(),
	}
	if r, ok := a.checkMCP(ctx); ok {
		results = append(results, r)
	}
	failed := false
	for _, r := range results {
		mark := "✓"
		switch {
		case !r.ok:
			mark, failed = "✗", true
		case r.note:
			mark = "!"
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", mark, r.name, r.detail)
		if r.fix != "" && (!r.ok || r.note) {
			fmt.Fprintf(stdout, "    fix: %s\n", r.fix)
		}
	}
	if failed {
		return 1
	}
	return 0
}

// checkModel asks the chat endpoint for its models: it must answer, accept
// the key and list the configured model.
func (a *app) checkModel(ctx context.Context) checkResult {
	r := checkResult{name: "model endpoint"}
	p, err := a.loader.Load(a.cfg.Profile)
	if err != nil {
		r.detail, r.fix = err.Error(), "choose an existing profile (zero profiles)"
		return r
	}
	ep, err := a.endpoint("chat", p, "")
	switch {
	case errors.Is(err, errNoModel):
		r.detail = "not configured: no chat model is set"
		r.fix = "set ZERO_MODEL (or --model, or models.chat.model in " + config.UserFile(a.userDir) +
			") to a model your endpoint serves, and OPENAI_BASE_URL for a server other than OpenAI's (for example http://localhost:11434/v1 for Ollama)"
		return r
	case errors.Is(err, errNoKey), err == nil && needsKey(ep):
		r.detail, r.fix = noKey(ep)
		return r
	}
	c, err := a.client("chat", p, "")
	if err != nil {
		r.detail, r.fix = err.Error(), "see zero config"
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ids, err := c.Models(ctx)
	var api *llm.APIError
	switch {
	case errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403):
		r.detail, r.fix = api.Error(), "check the key in the variable named by models.chat.api_key_env (zero config)"
	case err != nil:
		r.detail, r.fix = err.Error(), "check models.chat.base_url / OPENAI_BASE_URL and that the server runs"
	case len(ids) == 1 && ids[0] != c.Model():
		// A server that lists one model usually serves it under any name
		// (llama.cpp's server, llamafile, the scripted demo model): the
		// list is not proof of a mistake, and asking the model would
		// spend a reply. Said, not failed; a server that refuses the name
		// says so at the first message.
		r.ok, r.note = true, true
		r.detail = fmt.Sprintf("%s answers; it lists only %q, not %q: a single-model server answers to any name, others refuse it at the first message",
			a.cfg.Origin("models.chat.base_url"), ids[0], c.Model())
		r.fix = fmt.Sprintf("if the first message fails with a model error, set ZERO_MODEL=%s (or models.chat.model)", ids[0])
	case len(ids) > 1 && !slices.Contains(ids, c.Model()):
		r.detail = fmt.Sprintf("the endpoint answers but does not list %q (it lists %s)", c.Model(), listed(ids))
		r.fix = "set ZERO_MODEL (or models.chat.model) to one of the endpoint's models"
	default:
		r.ok, r.detail = true, fmt.Sprintf("%s answers and serves %s", a.cfg.Origin("models.chat.base_url"), c.Model())
	}
	return r
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
	return ep.key == "" && ep.keyEnv != "" && !localEndpoint(cmp.Or(ep.m.BaseURL, llm.DefaultBaseURL))
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

// localEndpoint reports whether a base URL points at this machine or the
// local network (loopback, private and link-local addresses, localhost,
// names without a dot, .local, .lan, .internal, .home.arpa), where
// servers usually need no key.
func localEndpoint(baseURL string) bool {
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
func (a *app) checkTrust() checkResult {
	r := checkResult{name: "workspace code", ok: true}
	st, err := a.trustState()
	switch {
	case err != nil:
		r.note, r.detail, r.fix = true, err.Error(), "see "+a.trust.Path()
	case st.Status == trust.StatusUntrusted || st.Status == trust.StatusChanged:
		r.note, r.detail, r.fix = true, trustSummary(st), "run zero trust: it shows each file (or what changed) and asks"
	default:
		r.detail = trustSummary(st)
	}
	return r
}

// checkProfiles loads every profile, so a broken agent.yaml shows here.
func (a *app) checkProfiles() checkResult {
	infos, err := a.loader.List()
	if err != nil {
		return checkResult{name: "profiles", detail: err.Error(), fix: "fix or remove the agent.yaml named above"}
	}
	r := checkResult{name: "profiles", ok: true, detail: fmt.Sprintf("%d profiles", len(infos))}
	if _, err := a.loader.Load(a.cfg.Profile); err != nil {
		r.ok, r.detail, r.fix = false, err.Error(), "set profile to one of: zero profiles"
	}
	return r
}

// checkSandbox checks the backend that would run the agent's commands.
func (a *app) checkSandbox(ctx context.Context) checkResult {
	r := checkResult{name: "sandbox"}
	b := a.cfg.Sandbox.Backend
	if b == "docker" || b == "auto" || b == "" {
		d, err := a.docker()
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
			r.ok = true
			switch {
			case !img.Present:
				r.detail = fmt.Sprintf("docker backend: the engine answers; image %s is not on it", img.Image)
				r.note, r.fix = true, "zero run (or the first session) pulls it before it starts, which needs a registry; or: docker pull "+img.Image
			case img.Provisioned == "":
				r.detail = fmt.Sprintf("docker backend: the engine answers; image %s is present, not provisioned yet", img.Image)
				r.note, r.fix = true, "the first start runs the provisioning script once (a venv at /opt/venv by default)"
			default:
				r.detail = fmt.Sprintf("docker backend: the engine answers; image %s is present and provisioned (%s)", img.Image, img.Provisioned)
			}
			return r
		case b == "docker":
			r.detail, r.fix = err.Error(), "start Docker or point DOCKER_HOST at an engine, or set sandbox.backend: local"
			return r
		}
		r.note = true
		r.fix = "no Docker engine answered (" + err.Error() + "): start Docker to confine the agent to a container"
	} else if b != "local" {
		r.detail, r.fix = fmt.Sprintf("unknown backend %q", b), "set sandbox.backend to auto, docker or local"
		return r
	}
	if _, err := exec.LookPath("bash"); err != nil {
		r.detail, r.fix = "local backend: bash not found", "install bash"
		return r
	}
	l, err := a.localBackend()
	if err != nil {
		r.detail, r.fix = err.Error(), "check the workspace folder and sandbox.hide"
		return r
	}
	defer l.Close()
	r.ok = true
	if mode, _ := l.Isolation(); mode == sandbox.IsolationBubblewrap {
		r.detail = "local backend under " + l.IsolationSummary()
	} else {
		r.detail = "local backend without isolation: " + l.IsolationSummary() + "; Zero asks before each command"
		if !r.note {
			r.note, r.fix = true, "install bubblewrap (apt install bubblewrap) to confine commands to the workspace"
		}
	}
	return r
}

// checkStore opens the session store, reads every page of it (store.Check:
// about 150 ms per 170 MB) and counts this workspace's sessions: a store
// that cannot be opened, or is damaged, means sessions end with the
// process; a damaged one is named with the command that recovers it.
func (a *app) checkStore() checkResult {
	r := checkResult{name: "sessions"}
	path, err := storePath()
	if errors.Is(err, errStoreOff) {
		r.ok, r.note = true, true
		r.detail = "kept in memory only (ZERO_STORE=off): they end with the process"
		r.fix = "unset ZERO_STORE to keep them"
		return r
	} else if err != nil {
		r.detail, r.fix = err.Error(), "set XDG_DATA_HOME or HOME, or ZERO_STORE to a database file"
		return r
	}
	damaged := func(err error) checkResult {
		r.detail = storeDamage(path, err) + ", and sessions end with the process"
		r.fix = recoverFix(path)
		return r
	}
	st, err := store.Open(path)
	if store.IsDamaged(err) {
		return damaged(err)
	} else if err != nil {
		r.detail = fmt.Sprintf("%s cannot be opened: %v", path, err)
		r.fix = "make its folder writable, or set ZERO_STORE to another file; until then sessions end with the process"
		return r
	}
	defer st.Close()
	if err := store.Check(path); store.IsDamaged(err) {
		return damaged(err)
	}
	list, err := st.Sessions(store.ListOptions{Workspace: a.ws})
	if store.IsDamaged(err) {
		return damaged(err)
	} else if err != nil {
		r.detail, r.fix = fmt.Sprintf("%s: %v", path, err), "move the file away; Zero makes a new one"
		return r
	}
	r.ok, r.detail = true, fmt.Sprintf("%d of this workspace stored in %s", len(list), path)
	// The memory lives in the same file.
	if n, err := st.CountMemories([]string{a.ws, ""}); err == nil {
		search := "by keywords (models.embedding is not set)"
		if m := a.cfg.Models.Embedding.Model; m != "" {
			search = "by keywords and by meaning with " + m
		}
		r.detail += fmt.Sprintf("; %d memories of this workspace and yours, searched %s", n, search)
	}
	return r
}

// checkMCP starts the MCP servers a session would get (the user's
// config.yaml, a trusted workspace's .mcp.json) and lists their tools;
// ok false when there are none to check.
func (a *app) checkMCP(ctx context.Context) (checkResult, bool) {
	code, _ := a.workspaceCode()
	p := a.mcpPool("doctor", code)
	if p == nil {
		return checkResult{}, false
	}
	defer a.closePool("doctor")
	r := checkResult{name: "MCP servers"}
	tools, errs := p.List(ctx)
	per := map[string]int{}
	for _, t := range tools {
		per[t.Server]++
	}
	var parts []string
	for _, s := range p.Servers() {
		where := ""
		if s.Command != "" { // where it starts: never the workspace
			where = " starts in " + s.Dir
			if code != "" && strings.HasPrefix(s.Dir, code) {
				where = " runs from the trusted copy of " + a.ws
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%d tools)%s", s.Name, per[s.Name], where))
	}
	r.detail = strings.Join(parts, ", ")
	if len(errs) > 0 {
		var msgs []string
		for _, err := range errs {
			msgs = append(msgs, unrepeat(err.Error()))
		}
		r.detail += "; " + strings.Join(msgs, "; ")
		r.fix = "check the server's command, args, env or url in mcp_servers of your config.yaml (or the workspace's .mcp.json)"
		return r, true
	}
	r.ok = true
	return r, true
}
