package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/llm/llmtest"
)

// zeroRun runs the zero command with env and args and returns its
// stdout, stderr and exit status.
func zeroRun(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("zero %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// zero run against a model server that is not running ends with one line
// on stderr that says where it tried, why it failed and which setting
// chose the address. (How many attempts the client makes is
// TestRefusedConnectionRetriedOnce in llm.)
func TestPapercutModelNotRunning(t *testing.T) {
	t.Parallel()
	base := "http://" + closedPort(t) + "/v1"
	_, stderr, code := zeroRun(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + base}, "run", "--workspace", t.TempDir(), "hi")
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, stderr)
	}
	want := "cannot reach the model at " + base + ": connection refused; is the server running, and on that port? (models.chat.base_url from env OPENAI_BASE_URL)"
	if n := strings.Count(stderr, want); n != 1 {
		t.Errorf("stderr has %q %d times, want once:\n%s", want, n, stderr)
	}
	if n := strings.Count(stderr, "connection refused"); n != 1 {
		t.Errorf("stderr tells the error %d times, want once:\n%s", n, stderr)
	}
}

// fakeEngine is a Docker Engine API on a unix socket that answers what
// the docker backend asks before a run: the engine answers, the image is
// not there, and a pull fails as it does offline.
func fakeEngine(t *testing.T) (dockerHost string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "zd") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`^/v[0-9.]+`)
	var mu sync.Mutex
	var unexpected []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := version.ReplaceAllString(r.URL.Path, "")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case path == "/_ping":
			w.Header().Set("Api-Version", "1.43")
			w.Write([]byte("OK"))
		case path == "/containers/json":
			w.Write([]byte("[]"))
		case strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/json"):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such image: ` + strings.TrimSuffix(strings.TrimPrefix(path, "/images/"), "/json") + `"}`))
		case strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/json"):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such container: ` + strings.TrimSuffix(strings.TrimPrefix(path, "/containers/"), "/json") + `"}`))
		case path == "/images/create", strings.HasPrefix(path, "/distribution/"): // offline: no pull, no registry
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host"}`))
		default:
			mu.Lock()
			unexpected = append(unexpected, r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"the fake engine does not do that"}`))
		}
	})}
	go srv.Serve(ln) // ends with Shutdown below
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		mu.Lock()
		defer mu.Unlock()
		if len(unexpected) > 0 {
			t.Errorf("the fake engine got requests it does not answer: %q", unexpected)
		}
	})
	return "unix://" + sock
}

// The default image cannot be pulled (the engine is offline): with
// sandbox.backend docker the run ends before anything, with one line that
// says how to go on; with auto it runs on the local backend, saying so once.
func TestPapercutImageCannotBePulled(t *testing.T) {
	t.Parallel()
	t.Run("docker", func(t *testing.T) {
		t.Parallel()
		// Nothing is pulled before the first command; that command's result
		// says why it could not run and how to go on.
		srv := llmtest.NewServer(t,
			llmtest.Reply{Content: `{"thoughts": ["look"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "ls"}}`},
			llmtest.Reply{Match: "cannot pull image kalilinux/kali-rolling", Content: `{"thoughts": ["tell"], "tool_name": "response", "tool_args": {"text": "told"}}`},
		)
		stdout, stderr, code := zeroRun(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "ZERO_SANDBOX=docker", "DOCKER_HOST=" + fakeEngine(t)},
			"run", "--workspace", t.TempDir(), "hi")
		if code != 0 || !strings.Contains(stdout, "told") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the model got %d requests, want 2", len(reqs))
		}
		for _, want := range []string{"docker pull kalilinux/kali-rolling", "--image IMAGE", "--sandbox local"} {
			if !strings.Contains(string(reqs[1].Body), want) {
				t.Errorf("the failed command's result lacks %q", want)
			}
		}
	})
	t.Run("auto", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "answered"}}`})
		stdout, stderr, code := zeroRun(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "ZERO_SANDBOX=auto", "DOCKER_HOST=" + fakeEngine(t)},
			"run", "--workspace", t.TempDir(), "hi")
		if code != 0 || !strings.Contains(stdout, "answered") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		want := "has no image kalilinux/kali-rolling and cannot pull it"
		if n := strings.Count(stdout+stderr, want); n != 1 {
			t.Errorf("the fallback should be told once, told %d times:\nstdout:\n%s\nstderr:\n%s", n, stdout, stderr)
		}
		for _, want := range []string{"using the local backend", "docker pull kalilinux/kali-rolling", "--image IMAGE"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the warning lacks %q:\n%s", want, stdout)
			}
		}
	})
}

// zero run refuses the home directory as an unnamed workspace when nobody
// can be asked, names the flag, and runs when the folder is named.
func TestPapercutGuardHomeWorkspace(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "answered"}}`})
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "HOME=" + home}

	cmd := zeroCmd(t, env, "run", "hi")
	cmd.Dir = home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("zero run in the home directory without a terminal: %v, want exit 2", err)
	}
	for _, want := range []string{"your whole home directory (" + app.RealPath(home) + ")", "--workspace"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests before the workspace was confirmed", n)
	}

	stdout, errOut, code := zeroRun(t, env, "run", "--workspace", home, "hi")
	if code != 0 || !strings.Contains(stdout, "answered") {
		t.Errorf("with --workspace named: exit %d\n%s\n%s", code, stdout, errOut)
	}
}

// zero doctor tells a missing model from a missing key, with a fix for
// each.
func TestDoctorNoKeyIsNotNotConfigured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		env        []string
		userConfig string
		want       []string
		notWanted  string
	}{
		{name: "no model",
			want: []string{"✗ model endpoint: not configured: no chat model is set", "fix: set ZERO_MODEL"}, notWanted: "no API key"},
		{name: "OpenAI without key", env: []string{"ZERO_MODEL=gpt-4.1-mini"},
			want: []string{"✗ model endpoint: no API key: gpt-4.1-mini at OpenAI's endpoint", "OPENAI_API_KEY is not set", "fix: export OPENAI_API_KEY=<your key>"}, notWanted: "not configured"},
		{name: "remote server without key", env: []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=https://models.example.com/v1"},
			want: []string{"✗ model endpoint: no API key: m at https://models.example.com/v1 needs one", "fix: export OPENAI_API_KEY"}, notWanted: "not configured"},
		{name: "another key variable", env: []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=https://openrouter.ai/api/v1"},
			userConfig: "models:\n  chat:\n    api_key_env: OPENROUTER_API_KEY\n",
			want:       []string{"✗ model endpoint: no API key", "OPENROUTER_API_KEY is not set", "fix: export OPENROUTER_API_KEY"}, notWanted: "not configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := tc.env
			if tc.userConfig != "" {
				dir := t.TempDir()
				mustWrite(t, dir+"/zero/config.yaml", tc.userConfig)
				env = append(env, "XDG_CONFIG_HOME="+dir)
			}
			stdout, stderr, code := zeroRun(t, env, "doctor", "--workspace", t.TempDir())
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("doctor lacks %q:\n%s%s", want, stdout, stderr)
				}
			}
			if strings.Contains(stdout, tc.notWanted) {
				t.Errorf("doctor says %q:\n%s", tc.notWanted, stdout)
			}
		})
	}
}

func TestDoctorLocalEndpoint(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"http://127.0.0.1:11434/v1":              true,
		"http://localhost:8080/v1":               true,
		"http://[::1]:8000/v1":                   true,
		"http://192.168.1.20:8000/v1":            true,
		"http://10.0.0.5/v1":                     true,
		"http://ollama:11434/v1":                 true,
		"http://host.docker.internal:11434/v1":   true,
		"http://gpu.local:8000/v1":               true,
		"https://api.openai.com/v1":              false,
		"https://openrouter.ai/api/v1":           false,
		"http://8.8.8.8/v1":                      false,
		"not a url at all: \x00":                 false,
		"https://models.example.com:8443/v1?x=1": false,
	} {
		if got := app.LocalEndpoint(url); got != want {
			t.Errorf("localEndpoint(%q) = %v, want %v", url, got, want)
		}
	}
}

// zero config says, for each value of the workspace's config file it
// ignored, that it did and why; the key variable a workspace names
// included.
func TestPapercutConfigIgnoredValues(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	mustWrite(t, ws+"/.zero/config.yaml", "approval: auto\nsandbox:\n  image: evil/image\nmodels:\n  chat:\n    api_key_env: HOME\n")
	stdout, stderr, code := zeroRun(t, []string{"ZERO_MODEL=m"}, "config", "--workspace", ws)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	pf := ws + "/.zero/config.yaml"
	for _, want := range []string{
		"# ignored: project " + pf + ":1: approval = auto is ignored (approval would be looser); sandbox (default) stays in force",
		"# ignored: project " + pf + ":3: sandbox.image = evil/image is ignored (a workspace cannot choose the image)",
		"# ignored: project " + pf + ":6: models.chat.api_key_env = HOME is ignored (a workspace cannot choose which secret is sent); OPENAI_API_KEY (default) stays in force",
	} {
		if n := strings.Count(stdout, want); n != 1 {
			t.Errorf("zero config has %q %d times, want once:\n%s", want, n, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^    api_key_env: OPENAI_API_KEY +# \(default\); key <not set>; the workspace's HOME is ignored$`).MatchString(stdout) {
		t.Errorf("the api_key_env line should show the value in force and the ignored one:\n%s", stdout)
	}
}

// An unknown profile is the same usage error in every command, said on
// one line that lists the profiles, before anything else happens (the
// editor faces before a word of their protocol).
func TestPapercutUnknownProfile(t *testing.T) {
	t.Parallel()
	base := "http://" + closedPort(t) + "/v1"
	for _, tc := range []struct {
		args []string
		env  []string
		from string
	}{
		{args: []string{"run", "--profile", "nope", "hi"}, from: "flag --profile"},
		{args: []string{"prompt", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"config", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"doctor", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"profiles", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"acp", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"mcp", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"lsp", "--profile", "nope"}, from: "flag --profile"},
		{args: []string{"acp"}, env: []string{"ZERO_PROFILE=nope"}, from: "env ZERO_PROFILE"},
		{args: []string{"run", "hi"}, env: []string{"ZERO_PROFILE=nope"}, from: "env ZERO_PROFILE"},
	} {
		t.Run(strings.Join(append(tc.env, tc.args...), " "), func(t *testing.T) {
			t.Parallel()
			env := append([]string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + base}, tc.env...)
			args := append(tc.args[:1:1], append([]string{"--workspace", t.TempDir()}, tc.args[1:]...)...)
			cmd := zeroCmd(t, env, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != app.ExitUsage {
				t.Errorf("exit = %v, want %d", err, app.ExitUsage)
			}
			want := `zero: no profile "nope" (profile from ` + tc.from + `); the profiles are: agent0, default, developer, hacker, researcher` + "\n"
			if n := strings.Count(stderr.String(), want); n != 1 {
				t.Errorf("stderr has the line %d times, want once:\n%s\nstderr:\n%s", n, want, stderr.String())
			}
			if lines := strings.Count(stderr.String(), "\n"); lines != 1 {
				t.Errorf("stderr has %d lines, want only the error:\n%s", lines, stderr.String())
			}
			if args[0] != "profiles" && stdout.Len() != 0 {
				t.Errorf("stdout should stay empty:\n%s", stdout.String())
			}
		})
	}
}
