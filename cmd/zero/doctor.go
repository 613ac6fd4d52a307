package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/sandbox"
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
	a, code := openApp("zero doctor", args, true, stderr)
	if a == nil {
		if code == 2 { // the configuration itself is broken: that is the finding
			fmt.Fprintln(stdout, "✗ configuration: see the error above")
			return 1
		}
		return code
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
	c, err := a.client("chat", p, "")
	if err != nil {
		r.detail, r.fix = "not configured", "set ZERO_MODEL and OPENAI_API_KEY or OPENAI_BASE_URL (see zero run with no model)"
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
	case len(ids) > 0 && !slices.Contains(ids, c.Model()):
		r.detail = fmt.Sprintf("the endpoint answers but does not list %q (%d models listed)", c.Model(), len(ids))
		r.fix = "set ZERO_MODEL (or models.chat.model) to one of the endpoint's models"
	default:
		r.ok, r.detail = true, fmt.Sprintf("%s answers and serves %s", a.cfg.Origin("models.chat.base_url"), c.Model())
	}
	return r
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
		r.note, r.detail, r.fix = true, trustSummary(st), "review the files with zero trust --check, then run zero trust"
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
				r.note, r.fix = true, "the first command pulls it (the engine needs a registry), or: docker pull "+img.Image
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
