package main

// Issue 21, the command line: what a newcomer hits in the first hour, each
// driven through the real binary.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/store"
)

// cli21Run runs zero with env and args, stdin as given (nil: none), and
// returns stdout, stderr and the exit code.
func cli21Run(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("zero %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// zero trust shows each file with its content, asks, and trusts only on
// yes; a later change is shown as a diff against what was trusted; --yes
// trusts without a question; no answer is a refusal.
func TestTrustShowsAndAsks(t *testing.T) {
	t.Parallel()
	ws, cfg := t.TempDir(), t.TempDir()
	script := filepath.Join(ws, ".zero/extensions/tool_execute_before/_50_check")
	mustWrite(t, script, "#!/bin/sh\necho first-version\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + cfg}
	trusted := func() bool {
		_, _, code := cli21Run(t, env, "", "trust", "--check", "--workspace", ws)
		return code == 0
	}

	out, errOut, code := cli21Run(t, env, "n\n", "trust", "--workspace", ws)
	if code != 1 || !strings.Contains(out, ".zero/extensions/tool_execute_before/_50_check") || !strings.Contains(out, "echo first-version") ||
		!strings.Contains(out, "extension") || !strings.Contains(out, "bytes") || !strings.Contains(out, "[y/N]") || trusted() {
		t.Fatalf("zero trust answered n: exit %d, trusted %v\n%s%s", code, trusted(), out, errOut)
	}
	out, errOut, code = cli21Run(t, env, "", "trust", "--workspace", ws)
	if code != 1 || !strings.Contains(errOut, "nothing trusted") || !strings.Contains(errOut, "--yes") || trusted() {
		t.Fatalf("zero trust with nobody to answer: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = cli21Run(t, env, "y\n", "trust", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "echo first-version") || !strings.Contains(out, "trusted (") || !trusted() {
		t.Fatalf("zero trust answered y: exit %d\n%s%s", code, out, errOut)
	}

	mustWrite(t, script, "#!/bin/sh\necho second-version\n")
	out, errOut, code = cli21Run(t, env, "n\n", "trust", "--workspace", ws)
	if code != 1 || !strings.Contains(out, "-echo first-version") || !strings.Contains(out, "+echo second-version") || !strings.Contains(out, "changed") || trusted() {
		t.Fatalf("zero trust after a change should show the diff and, answered n, trust nothing: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = cli21Run(t, env, "", "trust", "--yes", "--workspace", ws)
	if code != 0 || strings.Contains(out, "[y/N]") || !strings.Contains(out, "+echo second-version") || !trusted() {
		t.Fatalf("zero trust --yes: exit %d\n%s%s", code, out, errOut)
	}
}

// zero with the chat's flags starts the chat, as zero alone does.
func TestChatTakesFlags(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("hello from the chat")})
	ws := t.TempDir()
	ct := startTerm(t, ws, chatEnv(t, srv), "--sandbox", "local", "--workspace", ws)
	ct.ready()
	ct.answered(ct.send("hi"), "hello from the chat")
	// zero's own flags are still zero's.
	if out, _, code := cli21Run(t, nil, "", "--version"); code != 0 || !strings.Contains(out, "zero ") {
		t.Errorf("zero --version: exit %d\n%s", code, out)
	}
	if out, _, code := cli21Run(t, nil, "", "--help"); code != 0 || !strings.Contains(out, "zero chat [flags]") {
		t.Errorf("zero --help: exit %d\n%s", code, out)
	}
}

// Every command that takes a session id takes a prefix that names one
// session; an ambiguous one is an error that lists the sessions it names.
func TestSessionIDPrefixes(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "zero.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, id := range []string{"cafe01aa", "cafe02bb", "beef01cc"} {
		if err := st.CreateSession(store.Session{ID: id, Workspace: ws, Roots: []string{ws}, Profile: "agent0", Title: "title of " + id, Created: now, Updated: now}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	env := []string{"ZERO_STORE=" + db, "ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}

	for _, sub := range []string{"show", "export"} {
		out, errOut, code := cli21Run(t, env, "", "sessions", sub, "beef")
		if code != 0 || !strings.Contains(out, "beef01cc") {
			t.Errorf("zero sessions %s beef: exit %d\n%s%s", sub, code, out, errOut)
		}
		out, errOut, code = cli21Run(t, env, "", "sessions", sub, "cafe")
		if code != 1 || !strings.Contains(errOut, "cafe01aa") || !strings.Contains(errOut, "cafe02bb") || !strings.Contains(errOut, "more than one") {
			t.Errorf("zero sessions %s cafe (ambiguous): exit %d\n%s%s", sub, code, out, errOut)
		}
	}
	out, errOut, code := cli21Run(t, env, "", "run", "--workspace", ws, "--session", "caf", "go on")
	if code != 2 || !strings.Contains(errOut, "cafe01aa") || !strings.Contains(errOut, "cafe02bb") {
		t.Errorf("zero run --session caf (ambiguous): exit %d\n%s%s", code, out, errOut)
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("an ambiguous session id reached the model")
	}
	out, errOut, code = cli21Run(t, env, "", "sessions", "rm", "beef")
	if code != 0 || !strings.Contains(out, "deleted beef01cc") {
		t.Errorf("zero sessions rm beef: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = cli21Run(t, env, "", "sessions", "--workspace", ws)
	if strings.Contains(out, "beef01cc") || !strings.Contains(out, "cafe01aa") {
		t.Errorf("after rm beef:\n%s", out)
	}
}

// Every help page says what the command does, lists its flags and gives
// an example, on stdout, with exit status 0.
func TestEveryHelpPage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run"}, {"chat"}, {"acp"}, {"mcp"}, {"lsp"}, {"profiles"}, {"prompt"}, {"config"}, {"trust"}, {"doctor"},
		{"sandbox"}, {"sandbox", "ls"}, {"sandbox", "rm"}, {"sessions"}, {"sessions", "show"}, {"memory"}, {"memory", "search"},
		{"store"}, {"store", "recover"},
	} {
		name := strings.Join(args, " ")
		for _, flag := range []string{"--help", "-h"} {
			out, errOut, code := cli21Run(t, nil, "", append(args, flag)...)
			if code != 0 {
				t.Errorf("zero %s %s: exit %d, want 0\n%s%s", name, flag, code, out, errOut)
				continue
			}
			if !strings.HasPrefix(out, "Usage:\n") || !strings.Contains(out, "zero "+args[0]) {
				t.Errorf("zero %s %s: no usage on stdout:\n%s", name, flag, out)
			}
			// A description: a sentence after the usage lines.
			_, rest, _ := strings.Cut(out, "\n\n")
			if first, _, _ := strings.Cut(rest, "\n"); len(first) < 20 || strings.HasPrefix(first, " ") || !regexp.MustCompile(`^[A-Z]`).MatchString(first) {
				t.Errorf("zero %s %s: no description after the usage:\n%s", name, flag, out)
			}
			_, examples, ok := strings.Cut(out, "\nExamples:\n")
			if !ok || !strings.HasPrefix(examples, "  ") || !strings.Contains(examples, "zero ") {
				t.Errorf("zero %s %s: no example:\n%s", name, flag, out)
			}
			if strings.Contains(out, "\nFlags:\n") && !regexp.MustCompile(`\n  -[a-z-]+[^\n]*\n    \t\S`).MatchString(out) {
				t.Errorf("zero %s %s: a flag without its description:\n%s", name, flag, out)
			}
		}
	}
}

// zero config shows what a zero value stands for, marked (default).
func TestConfigShowsDefaultsInForce(t *testing.T) {
	t.Parallel()
	out, errOut, code := cli21Run(t, nil, "", "config", "--workspace", t.TempDir())
	if code != 0 {
		t.Fatalf("zero config: exit %d\n%s", code, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^    base_url: https://api\.openai\.com/v1 +# \(default\)$`),
		regexp.MustCompile(`(?m)^  memory: 4g +# \(default\)$`),
		regexp.MustCompile(`(?m)^  pids: 4096 +# \(default\)$`),
		regexp.MustCompile(`(?m)^      header: 5m0s +# \(default\)$`), // a duration since config has them
		regexp.MustCompile(`(?m)^  timeout: 20s +# \(default\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("zero config lacks %s:\n%s", want, out)
		}
	}
	if bad := regexp.MustCompile(`(?m)^ *[a-z_]+: (""|0|\[\]) +#.*default`).FindAllString(out, -1); len(bad) > 0 {
		t.Errorf("zero config shows a zero value where a default is in force: %q", bad)
	}
}

// A run that never reached the model (a closed port, a refused key) leaves
// no session behind; a run that did is kept.
func TestUnreachedRunLeavesNoSession(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "zero.db")
	sessions := func() string {
		out, errOut, code := cli21Run(t, []string{"ZERO_STORE=" + db}, "", "sessions", "--workspace", ws)
		if code != 0 {
			t.Fatalf("zero sessions: exit %d\n%s", code, errOut)
		}
		return out
	}
	refusing := llmtest.NewServer(t, llmtest.Reply{Status: 401, Message: "invalid api key"})
	for _, url := range []string{"http://127.0.0.1:1/v1", refusing.URL()} {
		_, errOut, code := cli21Run(t, []string{"ZERO_STORE=" + db, "ZERO_MODEL=m", "OPENAI_BASE_URL=" + url}, "", "run", "--workspace", ws, "never answered")
		if code != 1 {
			t.Fatalf("zero run against %s: exit %d, want 1\n%s", url, code, errOut)
		}
		if out := sessions(); !strings.Contains(out, "no sessions") {
			t.Errorf("a run against %s that never reached the model left a session:\n%s", url, out)
		}
	}
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("answered")})
	if _, errOut, code := cli21Run(t, []string{"ZERO_STORE=" + db, "ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "", "run", "--workspace", ws, "answer me"); code != 0 {
		t.Fatalf("zero run: exit %d\n%s", code, errOut)
	}
	if out := sessions(); !strings.Contains(out, "answer me") {
		t.Errorf("a run the model answered was not kept:\n%s", out)
	}
}

// zero sandbox rm lists what it removed with each column in its place.
func TestSandboxRmTable(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	ws := t.TempDir()
	name := "zero-cli21-" + app.NewID()
	if out, err := exec.Command("docker", "create", "--name", name, "--label", sandbox.LabelManaged+"=1", "--label", sandbox.LabelWorkspace+"="+ws, image, "true").CombinedOutput(); err != nil {
		t.Fatalf("docker create: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })
	out, errOut, code := cli21Run(t, nil, "", "sandbox", "rm", "--workspace", ws)
	if code != 0 {
		t.Fatalf("zero sandbox rm: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Fields(lines[0])[0] != "NAME" {
		t.Fatalf("zero sandbox rm should print a header and one row:\n%s", out)
	}
	row := strings.Fields(lines[1])
	if row[0] != name || !strings.Contains(lines[1], "removed") || !strings.Contains(lines[1], ws) || strings.HasPrefix(lines[1], "removed") {
		t.Errorf("the row should be NAME STATE IMAGE WORKSPACE with the name first:\n%s", out)
	}
	if out, _ := exec.Command("docker", "ps", "-a", "--filter", "name="+name, "--format", "{{.Names}}").Output(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("the container is still there: %s", out)
	}
}

// zero doctor passes its model check with the scripted model scripts/run
// plays (it lists one model under another name), without spending any of
// its replies; a model that a server of several models does not list still
// fails.
func TestDoctorDemoModel(t *testing.T) {
	t.Parallel()
	runScript, err := os.ReadFile("../../scripts/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ZERO_MODEL=(\S+) OPENAI_BASE_URL=`).FindSubmatch(runScript)
	if m == nil {
		t.Fatal("scripts/run no longer names the demo's model as ZERO_MODEL=… OPENAI_BASE_URL=…")
	}
	demo := string(m[1])
	sc, err := llmtest.LoadScript("../../scripts/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, sc.Replies...)
	out, errOut, code := cli21Run(t, []string{"ZERO_MODEL=" + demo, "OPENAI_BASE_URL=" + srv.URL(), "OPENAI_API_KEY="}, "", "doctor", "--sandbox", "local", "--workspace", t.TempDir())
	if code != 0 || strings.Contains(out, "✗ model endpoint") || !strings.Contains(out, "model endpoint") {
		t.Errorf("zero doctor with the demo model: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("zero doctor spent %d of the demo's replies", n)
	}

	several := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"alpha"},{"id":"beta"}]}`))
	}))
	t.Cleanup(several.Close)
	out, _, code = cli21Run(t, []string{"ZERO_MODEL=gamma", "OPENAI_BASE_URL=" + several.URL + "/v1"}, "", "doctor", "--sandbox", "local", "--workspace", t.TempDir())
	if code != 1 || !strings.Contains(out, `✗ model endpoint: the endpoint answers but does not list "gamma" (it lists alpha, beta)`) {
		t.Errorf("zero doctor with a model the endpoint does not list: exit %d\n%s", code, out)
	}
}

// Each fact is said once: zero run's error goes to stderr when the live
// view goes elsewhere, to the view alone when both are one output, and
// with --json it is the event (stderr keeps to logs); zero doctor's MCP
// failure is its report line, not a log line too, and says each cause once.
func TestErrorSaidOnce(t *testing.T) {
	t.Parallel()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:1/v1"}
	const msg = "cannot reach the model"
	out, errOut, code := cli21Run(t, env, "", "run", "--workspace", t.TempDir(), "hi")
	if code != 1 || strings.Count(errOut, msg) != 1 || strings.Contains(out, msg) {
		t.Errorf("zero run, stdout and stderr apart: exit %d; the error should be on stderr once\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = cli21Run(t, env, "", "run", "--json", "--workspace", t.TempDir(), "hi")
	if code != 1 || !strings.Contains(out, msg) || strings.Contains(errOut, msg) {
		t.Errorf("zero run --json: exit %d; the error should be the event only\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	both, _ := zeroCmd(t, env, "run", "--workspace", t.TempDir(), "hi").CombinedOutput()
	if n := strings.Count(string(both), msg); n != 1 {
		t.Errorf("zero run with stdout and stderr one pipe says the error %d times:\n%s", n, both)
	}

	cfg := t.TempDir()
	mustWrite(t, cfg+"/zero/config.yaml", "mcp_servers:\n  gone:\n    url: http://127.0.0.1:1/mcp\n")
	srv := llmtest.NewServer(t)
	out, errOut, code = cli21Run(t, []string{"XDG_CONFIG_HOME=" + cfg, "ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL()}, "", "doctor", "--sandbox", "local", "--workspace", t.TempDir())
	if code != 1 || !strings.Contains(out, "✗ MCP servers: gone") {
		t.Fatalf("zero doctor with a server that is not there: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(errOut, "gone") {
		t.Errorf("zero doctor logged the failure its report says:\n%s", errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		parts := strings.Split(l, ": ")
		for i := 1; i < len(parts); i++ {
			if parts[i] == parts[i-1] {
				t.Errorf("zero doctor repeats %q: %s", parts[i], l)
			}
		}
	}
}

// The README's extension example, extracted from README.md and run as it
// is, works with the real binary: it lets every other call run (no "script
// failed" warning) and blocks the one it is about.
func TestREADMEExtensionExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- The block below is run as it is by cmd/zero's TestREADMEExtensionExample. -->\n```sh\n"
	_, rest, ok := strings.Cut(string(readme), marker)
	block, _, closed := strings.Cut(rest, "\n```\n")
	if !ok || !closed || !strings.Contains(block, "zero trust") {
		t.Fatal("README.md has no extension example after the marker " + marker)
	}
	ws, cfg, bin := t.TempDir(), t.TempDir(), t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "zero")); err != nil {
		t.Fatal(err)
	}
	// The block as a person pastes it in the workspace: zero trust asks,
	// and the person answers y.
	sh := zeroCmd(t, []string{"XDG_CONFIG_HOME=" + cfg, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	sh.Path, sh.Args, sh.Dir = "/bin/sh", []string{"sh", "-e", "-c", block}, ws
	sh.Stdin = strings.NewReader("y\n")
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "trusted (") {
		t.Fatalf("the README's example: %v\n%s", err, out)
	}

	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply("echo harmless-command-ran")},
		llmtest.Reply{Content: chatCommandReply("echo rm -rf /")},
		llmtest.Reply{Content: chatAnswer("done")},
	)
	out, errOut, code := cli21Run(t, []string{"XDG_CONFIG_HOME=" + cfg, "ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "",
		"run", "--json", "--sandbox", "local", "--approval", "auto", "--workspace", ws, "run two commands")
	if code != 0 {
		t.Fatalf("zero run: exit %d\n%s%s", code, out, errOut)
	}
	var results []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e loop.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Type {
		case loop.EventWarning:
			t.Errorf("warning during the run: %s", e.Text)
		case loop.EventToolResult:
			results = append(results, e.Text)
		}
	}
	if len(results) < 2 || !strings.Contains(results[0], "harmless-command-ran") || !strings.Contains(results[1], "rm -rf / is not allowed in this project") {
		t.Errorf("the first command should run and the second be blocked: %q", results)
	}
}
