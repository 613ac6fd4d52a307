package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
)

// TestMain lets the test binary double as the zero command, so tests run
// it as a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv("ZERO_TEST_RUN_MAIN") == "1" {
		app.Harden()
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Sessions the in-process tests store go to a folder of their own, never
	// to the user's data directory.
	data, err := os.MkdirTemp("", "zero-test-data-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", data)
	code := m.Run()
	os.RemoveAll(data)
	os.Exit(code)
}

// zeroCmd returns the test binary set up to behave as `zero args...`.
func zeroCmd(t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// The local backend unless a test asks for docker: CI runs an engine.
	cmd.Env = append(cleanEnv(), "ZERO_TEST_RUN_MAIN=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "ZERO_SANDBOX=local")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// cleanEnv is the environment without any model configuration of the
// machine running the tests.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "ZERO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ZERO_LOG", "ZERO_SANDBOX", "ZERO_SANDBOX_IMAGE", "DOCKER_HOST",
			"XDG_DATA_HOME", "ZERO_STORE": // a child's sessions go under its own HOME
		default:
			env = append(env, kv)
		}
	}
	return env
}

func TestRunJSONShellTask(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Reasoning: "The user wants the greeting file.", Content: `{"thoughts": ["I will read the file"], "headline": "Reading greeting.txt", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "cat greeting.txt && printf 'check%s\\n' -by-shell"}}`},
		llmtest.Reply{Match: "check-by-shell", Content: `{"thoughts": ["The file says hello"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "The file says: hello from the workspace"}}`},
	)
	ws := t.TempDir()
	if err := os.WriteFile(ws+"/greeting.txt", []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := zeroCmd(t, []string{"ZERO_MODEL=test-model", "OPENAI_API_KEY=sk-test-secret", "OPENAI_BASE_URL=" + srv.URL()},
		"run", "--json", "--workspace", ws, "What does greeting.txt say?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zero run: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}

	var events []loop.Event
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e loop.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "" {
			t.Fatalf("stdout line is not an event: %q (%v)", sc.Text(), err)
		}
		events = append(events, e)
	}
	var types []string
	var output, answer string
	for _, e := range events {
		types = append(types, string(e.Type))
		switch e.Type {
		case loop.EventToolOutputDelta:
			output += e.Text
		case loop.EventResponse:
			answer = e.Text
		}
	}
	if !strings.Contains(output, "hello from the workspace") {
		t.Errorf("live command output = %q; events: %v", output, types)
	}
	if answer != "The file says: hello from the workspace" {
		t.Errorf("response = %q", answer)
	}
	last := events[len(events)-1]
	if last.Type != loop.EventRunEnded || last.StopReason != loop.StopResponse {
		t.Errorf("last event = %+v", last)
	}
	// The model saw the command's output.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2", len(reqs))
	}
	if strings.Contains(stdout.String()+stderr.String(), "sk-test-secret") {
		t.Error("the API key leaked into the output")
	}
}

func TestRunNoModelSaysWhatToSet(t *testing.T) {
	t.Parallel()
	cmd := zeroCmd(t, nil, "run", "hello")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want status 2", err)
	}
	for _, want := range []string{"ZERO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr should name %s:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout should stay empty, got %q", stdout.String())
	}
}

func TestRunFailureExitsNonZero(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 401, Message: "Incorrect API key provided"})
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_API_KEY=sk-wrong-key", "OPENAI_BASE_URL=" + srv.URL()}, "run", "hi")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "401") || strings.Contains(stdout.String()+stderr.String(), "sk-wrong-key") {
		t.Errorf("stderr should explain the 401 without the key:\n%s", stderr.String())
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := zeroCmd(t, nil, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "zero ") {
		t.Fatalf("zero --version = %q, %v", out, err)
	}
}

// Ctrl-C cancels the run: the command the agent started is killed, the
// last event says cancelled, and the exit status is 130.
func TestRunInterruptCancels(t *testing.T) {
	t.Parallel()
	// Under bubblewrap the command has its own PID namespace: find it by
	// a unique argument instead of the pid it would report.
	sleepArg := fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["wait"], "headline": "Sleeping", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "sh -c 'exec sleep ` + sleepArg + `'"}}`},
	)
	ws := t.TempDir()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", ws, "sleep")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, ok := proctest.FindByArg(sleepArg, 20*time.Second)
	if !ok {
		t.Fatal("the command never started")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130; stderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var last loop.Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != loop.EventRunEnded || last.StopReason != loop.StopCancelled {
		t.Errorf("last event = %s (%v)", lines[len(lines)-1], err)
	}
	if !proctest.WaitGone(pid, 5*time.Second) {
		t.Errorf("the command (pid %d) survived Ctrl-C", pid)
	}
}

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args  []string
		words []string
		json  bool
		ws    string
	}{
		{[]string{"say hi", "--json"}, []string{"say hi"}, true, ""},
		{[]string{"--json", "say", "hi", "--workspace", "/w"}, []string{"say", "hi"}, true, "/w"},
		{[]string{"fix", "--", "--json", "-x"}, []string{"fix", "--json", "-x"}, false, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		j := fs.Bool("json", false, "")
		ws := fs.String("workspace", "", "")
		words, err := parseInterspersed(fs, tt.args)
		if err != nil || strings.Join(words, "|") != strings.Join(tt.words, "|") || *j != tt.json || *ws != tt.ws {
			t.Errorf("parseInterspersed(%q) = %q, json=%v ws=%q, %v", tt.args, words, *j, *ws, err)
		}
	}
}

// The agent's shell and extension scripts never see Zero's API key.
func TestAgentCannotSeeAPIKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["env"], "headline": "Env", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "env; echo end-of-env"}}`},
		llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Done", "tool_name": "response", "tool_args": {"text": "done"}}`},
	)
	ws := t.TempDir()
	script := ws + "/.zero/extensions/message_loop_start/_50_env"
	if err := os.MkdirAll(ws+"/.zero/extensions/message_loop_start", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > \"$ZERO_TEST_ENV_OUT\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	envOut := t.TempDir() + "/hook-env"
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_API_KEY=sk-very-secret-key", "OPENAI_BASE_URL=" + srv.URL(), "ZERO_TEST_ENV_OUT=" + envOut},
		"run", "--json", "--trust", "--workspace", ws, "show env")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "end-of-env") || !strings.Contains(string(out), "PATH=") {
		t.Fatalf("the env command did not run:\n%s", out)
	}
	hookEnv, err := os.ReadFile(envOut)
	if err != nil || !strings.Contains(string(hookEnv), "PATH=") {
		t.Fatalf("the extension script did not run: %v", err)
	}
	reqs := srv.Requests()
	for name, text := range map[string]string{"output": string(out), "hook env": string(hookEnv), "model request": string(reqs[len(reqs)-1].Body)} {
		if strings.Contains(text, "sk-very-secret-key") {
			t.Errorf("the API key reached the %s", name)
		}
	}
}

// Delegation end to end: agent 0 hands a task to a researcher, which runs a
// command and answers; agent 0 uses that answer. A project profile override
// and a project config file take part.
func TestRunDelegatesToResearcher(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["a researcher should look"], "headline": "Delegating", "tool_name": "call_subordinate", "tool_args": {"message": "find the magic word in notes.txt", "profile": "researcher"}}`},
		llmtest.Reply{Content: `{"thoughts": ["read it"], "headline": "Reading", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "grep -o 'word=[a-z]*' notes.txt | sed 's/word=/magic-/'"}}`},
		llmtest.Reply{Match: "magic-xyzzy", Content: `{"thoughts": ["found"], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": "The researcher found xyzzy-confirmed."}}`},
		llmtest.Reply{Match: "xyzzy-confirmed", Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "The magic word is xyzzy."}}`},
	)
	ws := t.TempDir()
	mustWrite(t, ws+"/notes.txt", "some text\nword=xyzzy\n")
	// The project overrides the researcher's specifics and sets the profile.
	mustWrite(t, ws+"/.zero/agents/researcher/prompts/agent.system.main.specifics.md", "PROJECT RESEARCHER RULES\n{{ include original }}")
	mustWrite(t, ws+"/.zero/config.yaml", "profile: agent0\nlimits:\n  subordinate_depth: 2\n")

	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", ws, "What is the magic word?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zero run: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var started, ended, answer *loop.Event
	agents := map[string]int{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e loop.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad event line %q: %v", sc.Text(), err)
		}
		switch e.Type {
		case loop.EventSubordinateStarted:
			started = &e
		case loop.EventSubordinateEnded:
			ended = &e
		case loop.EventResponse:
			if e.Agent == 0 {
				answer = &e
			}
		case loop.EventToolCall:
			agents[e.Tool] = e.Agent
		}
	}
	if started == nil || started.Agent != 1 || started.Profile != "researcher" || started.Text != "find the magic word in notes.txt" {
		t.Errorf("subordinate_started = %+v", started)
	}
	if ended == nil || ended.Text != "The researcher found xyzzy-confirmed." {
		t.Errorf("subordinate_ended = %+v", ended)
	}
	if answer == nil || answer.Text != "The magic word is xyzzy." {
		t.Errorf("final answer = %+v", answer)
	}
	if agents["call_subordinate"] != 0 || agents["code_execution_tool"] != 1 {
		t.Errorf("tool calls by agent: %v", agents)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model got %d requests, want 4", len(reqs))
	}
	sys0, sys1 := reqs[0].Messages[0].Content, reqs[1].Messages[0].Content
	if !reqs[0].Teaches("call_subordinate") || !strings.Contains(string(reqs[0].Body), "- researcher:") {
		t.Error("agent 0's prompt should offer call_subordinate and list the profiles")
	}
	if !strings.Contains(sys1, "PROJECT RESEARCHER RULES") || !strings.Contains(sys1, "researcher and analyst") {
		t.Error("the subordinate should run with the researcher profile, project override first, built-in after")
	}
	if strings.Contains(sys0, "PROJECT RESEARCHER RULES") {
		t.Error("agent 0 must not get the researcher's prompt")
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProfilesPromptConfigCommands(t *testing.T) {
	t.Parallel()
	ws, home := t.TempDir(), t.TempDir()
	mustWrite(t, ws+"/.zero/agents/reviewer/agent.yaml", "title: Reviewer\ncontext: Use it to review a change.\n")
	mustWrite(t, ws+"/.zero/agents/reviewer/prompts/agent.system.main.role.md", "You are a meticulous code REVIEWER.")
	run := func(env []string, args ...string) (string, string, error) {
		cmd := zeroCmd(t, env, args...)
		cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	out, _, err := run(nil, "profiles", "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent0 *", "researcher", "hacker", "developer", "reviewer", "project+profile", ws + "/.zero/agents/reviewer"} {
		if !strings.Contains(out, want) {
			t.Errorf("zero profiles lacks %q:\n%s", want, out)
		}
	}

	out, errOut, err := run(nil, "prompt", "--workspace", ws, "--profile", "reviewer")
	if err != nil || !strings.Contains(out, "meticulous code REVIEWER") || !strings.Contains(errOut, "tokens") {
		t.Errorf("zero prompt --profile reviewer: %v\n%s\n%s", err, out, errOut)
	}
	// In either protocol: with native calls the functions count in.
	for _, protocol := range []string{"json", "native"} {
		out, errOut, err = run([]string{"ZERO_TOOL_PROTOCOL=" + protocol}, "prompt", "--workspace", ws)
		var tokens int
		if _, scanErr := fmt.Sscanf(errOut[strings.Index(errOut, "agent0: ")+len("agent0: "):], "%d tokens", &tokens); err != nil || scanErr != nil || tokens == 0 || tokens >= 3450 {
			t.Errorf("agent0's %s prompt: %d tokens (want under Zero's 3,300 budget, see profiles' doc): %v %v\n%s", protocol, tokens, err, scanErr, errOut)
		}
		if native := strings.Contains(out, "# Functions (native tool calls)") && strings.Contains(errOut, "native tool calls"); native != (protocol == "native") {
			t.Errorf("zero prompt with %s: functions shown %v\n%s", protocol, native, errOut)
		}
	}

	mustWrite(t, home+"/zero/config.yaml", "models:\n  chat:\n    model: from-user-file\nprofile: developer\n")
	out, _, err = run([]string{"OPENAI_API_KEY=sk-not-to-be-shown"}, "config", "--workspace", ws, "--profile", "researcher")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model: from-user-file", home + "/zero/config.yaml:3", "profile: researcher", "flag --profile", "<set>"} {
		if !strings.Contains(out, want) {
			t.Errorf("zero config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-not-to-be-shown") {
		t.Error("zero config printed the API key")
	}

	mustWrite(t, ws+"/.zero/config.yaml", "limits:\n  repeat: three\n")
	_, errOut, err = run(nil, "config", "--workspace", ws)
	if err == nil || !strings.Contains(errOut, ws+"/.zero/config.yaml:2") || !strings.Contains(errOut, "limits.repeat") {
		t.Errorf("a bad config value should name file, line and key: %v\n%s", err, errOut)
	}
}

// Configured limits reach the engine: misformat 1 ends the run at the first
// reply without a tool request; subordinate_depth 0 forbids delegation.
func TestConfiguredLimitsApply(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "Just prose, no tool request."})
	ws := t.TempDir()
	mustWrite(t, ws+"/.zero/config.yaml", "limits:\n  misformat: 1\n")
	// Agent Zero's JSON protocol, where prose is not a tool request.
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "ZERO_TOOL_PROTOCOL=json"}, "run", "--json", "--workspace", ws, "hi")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || len(srv.Requests()) != 1 || !strings.Contains(string(out), "misformat") && !strings.Contains(string(out), "valid tool request") {
		t.Errorf("misformat 1: exit %v after %d requests\n%s", err, len(srv.Requests()), out)
	}

	srv = llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["d"], "tool_name": "call_subordinate", "tool_args": {"message": "help", "profile": "developer"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "alone"}}`},
	)
	ws = t.TempDir()
	mustWrite(t, ws+"/.zero/config.yaml", "limits:\n  subordinate_depth: 0\n")
	cmd = zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", ws, "hi")
	out, err = cmd.Output()
	if err != nil || strings.Contains(string(out), `"subordinate_started"`) {
		t.Errorf("subordinate_depth 0 should refuse delegation: %v\n%s", err, out)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Teaches("call_subordinate") {
		t.Errorf("with subordinate_depth 0 call_subordinate should not be offered")
	}
}

// A workspace cannot send the user's API key to an endpoint it chooses.
func TestWorkspaceEndpointGetsNoKey(t *testing.T) {
	t.Parallel()
	answer := llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "ok"}}`}
	for name, write := range map[string]func(ws, url string){
		"project config": func(ws, url string) {
			mustWrite(t, ws+"/.zero/config.yaml", "models:\n  chat:\n    base_url: "+url+"\n    api_key_env: HOME\n")
		},
		"project profile": func(ws, url string) {
			mustWrite(t, ws+"/.zero/agents/agent0/agent.yaml", "models:\n  chat:\n    base_url: "+url+"\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, answer)
			ws := t.TempDir()
			write(ws, srv.URL())
			cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_API_KEY=sk-must-stay-home"}, "run", "--json", "--workspace", ws, "hi")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("zero run: %v\n%s", err, out)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Authorization != "" {
				t.Errorf("the workspace's endpoint got %d requests, Authorization %q", len(reqs), reqs[0].Authorization)
			}
		})
	}
}

func TestApprovalPolicyNotSilentlyIgnored(t *testing.T) {
	t.Parallel()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "ZERO_APPROVAL=always"}, "run", "hi")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "approval") {
		t.Errorf("approval always must refuse to run tools unasked: %v\n%s", err, out)
	}
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	run := func(env ...string) (string, int) {
		cmd := zeroCmd(t, env, "doctor", "--workspace", t.TempDir())
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	out, code := run("ZERO_MODEL="+llmtest.ModelName, "OPENAI_BASE_URL="+srv.URL())
	if code != 0 || !strings.Contains(out, "✓ model endpoint") || !strings.Contains(out, "sandbox") || !strings.Contains(out, "✓ sessions: 0 of this workspace stored in ") {
		t.Errorf("a working setup: exit %d\n%s", code, out)
	}
	// A store that cannot be opened (a folder where the file should be).
	out, code = run("ZERO_MODEL="+llmtest.ModelName, "OPENAI_BASE_URL="+srv.URL(), "ZERO_STORE="+t.TempDir())
	if code != 1 || !strings.Contains(out, "✗ sessions: ") || !strings.Contains(out, "cannot be opened") {
		t.Errorf("a store that cannot be opened: exit %d\n%s", code, out)
	}
	// A single-model server (the scripted one lists only llmtest) may serve
	// any name: noted, not failed (issue 21; cli21_test.go has the rest).
	out, code = run("ZERO_MODEL=not-served", "OPENAI_BASE_URL="+srv.URL())
	if code != 0 || !strings.Contains(out, `! model endpoint`) || !strings.Contains(out, `not "not-served"`) || !strings.Contains(out, "fix:") {
		t.Errorf("a model a single-model server does not list: exit %d\n%s", code, out)
	}
	out, code = run("ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	if code != 1 || !strings.Contains(out, "✗ model endpoint") {
		t.Errorf("an unreachable endpoint: exit %d\n%s", code, out)
	}
}

// A huge command output reaches history as head and tail, with the whole
// text in a file the model is told about and can read.
func TestHugeOutputSpilledToFile(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["big"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "seq 1 40000"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done"}}`},
	)
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", t.TempDir(), "count")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	last := srv.Requests()[1].Messages
	text := last[len(last)-1].Content
	i := strings.Index(text, "is in ")
	if i < 0 || !strings.Contains(text, "omitted") || strings.Contains(text, `\n20000\n`) {
		t.Fatalf("history should hold head, tail and the file's path:\n%.400s", text)
	}
	path := strings.Fields(text[i+len("is in "):])[0]
	path = strings.TrimSuffix(strings.TrimRight(path, `]"}`), `\n`)
	full, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(full), "\n20000\n") || !strings.HasSuffix(strings.TrimSpace(string(full)), "40000") {
		t.Errorf("the spilled file %s should hold the whole output: %v", path, err)
	}
}

// Configured command timeouts reach the tools: a silent command returns
// with Agent Zero's note after the configured second, not after 30.
func TestConfiguredTimeouts(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["wait"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "sleep 20"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done"}}`},
	)
	ws := t.TempDir()
	mustWrite(t, ws+"/.zero/config.yaml", "sandbox:\n  timeouts: {first_output: 1}\n")
	out, err := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", ws, "wait").CombinedOutput()
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	last := srv.Requests()[1].Messages
	if text := last[len(last)-1].Content; !strings.Contains(text, "SYSTEM") {
		t.Errorf("the configured first-output timeout should return the note:\n%s", text)
	}
}

// The help texts say what the code does: every command the dispatcher
// knows is listed, and the flags name every value they accept.
func TestHelpTexts(t *testing.T) {
	t.Parallel()
	out, _ := zeroCmd(t, nil, "--help").CombinedOutput()
	for _, cmd := range []string{"run", "acp", "mcp", "lsp", "profiles", "prompt", "config", "trust", "doctor", "sandbox"} {
		if !strings.Contains(string(out), "  zero "+cmd+" ") {
			t.Errorf("zero --help does not list %s:\n%s", cmd, out)
		}
	}
	out, _ = zeroCmd(t, nil, "run", "--help").CombinedOutput()
	for _, want := range []string{"auto (docker when an engine answers, else local), docker, local", "sandbox (the default", "ask (", "auto (never)", "-trust"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("zero run --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "only one this version enforces") || strings.Contains(string(out), "arrives with") {
		t.Errorf("zero run --help promises what is not so:\n%s", out)
	}
}
