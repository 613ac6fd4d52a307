package tools_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
)

// toolEnv is a session whose utility model is the scripted server, for
// calling one tool directly.
type toolEnv struct {
	srv  *llmtest.Server
	sess *loop.Session
	ws   string

	mu     sync.Mutex
	events []loop.Event
}

func newToolEnv(t *testing.T, ws string, ts []loop.Tool, replies ...llmtest.Reply) *toolEnv {
	t.Helper()
	if ws == "" {
		ws = t.TempDir()
	}
	e := &toolEnv{srv: llmtest.NewServer(t, replies...), ws: ws}
	client, err := llm.New(llm.Options{Model: "test", BaseURL: e.srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.sess = loop.NewSession("t", loop.Config{
		Setup:     loop.Setup{Model: client, Prompts: profiles.New(), Tools: append([]loop.Tool{tools.Response{}}, ts...)},
		Workspace: ws,
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, func(ev loop.Event) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		e.mu.Unlock()
	})
	return e
}

// exec runs tool with args (a JSON object) as agent 0 would.
func (e *toolEnv) exec(t *testing.T, tool loop.Tool, args string) loop.ToolResult {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("bad args %s: %v", args, err)
	}
	res, err := tool.Execute(ctx(t), &loop.ToolCall{ID: "c1", Name: tool.Name(), Args: m, Agent: e.sess.Agent0()})
	if err != nil {
		t.Fatalf("%s(%s): Go error %v", tool.Name(), args, err)
	}
	return res
}

// progress is what the tool streamed as tool_output_delta.
func (e *toolEnv) progress() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.events {
		if ev.Type == loop.EventToolOutputDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// searxng is a fake SearXNG: handler answers /search; requests records the
// queries it got.
type searxng struct {
	*httptest.Server
	mu      sync.Mutex
	queries []string
}

func newSearxng(t *testing.T, handler http.HandlerFunc) *searxng {
	t.Helper()
	s := &searxng{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "wrong path or format: "+r.URL.String(), http.StatusNotFound)
			return
		}
		s.mu.Lock()
		s.queries = append(s.queries, r.URL.Query().Get("q"))
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func jsonResults(n int) string {
	var rs []map[string]any
	for i := range n {
		rs = append(rs, map[string]any{
			"title": fmt.Sprintf("Result %d", i+1), "url": fmt.Sprintf("https://example.com/%d", i+1),
			"content": fmt.Sprintf("Snippet number %d.", i+1), "engine": "duckduckgo", "score": 1.5,
		})
	}
	b, _ := json.Marshal(map[string]any{"query": "q", "number_of_results": n, "results": rs, "answers": []any{}, "unresponsive_engines": []any{}})
	return string(b)
}

func TestSearchEngine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		opts    tools.SearchOptions // URL and Network set below unless noURL/offline
		noURL   bool
		offline bool
		query   string
		isError bool
		want    []string
		notWant []string
		// timesOut: the request may end before the server saw it (its
		// timeout is short, and a loaded machine may not even deliver it).
		timesOut bool
	}{
		{
			name: "results, top ten in Agent Zero's format",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, jsonResults(12))
			},
			query:   "latest LiteLLM release notes",
			want:    []string{"Result 1\nhttps://example.com/1\nSnippet number 1.\n\nResult 2\nhttps://example.com/2\nSnippet number 2.", "Result 10\nhttps://example.com/10\nSnippet number 10."},
			notWant: []string{"Result 11", "duckduckgo"},
		},
		{
			name: "results with odd fields are skipped or clipped",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"results": [{"title": 5, "url": "x"}, {"title": "Multi\nline title", "url": "https://a.example/", "content": %q}, {"url": null}, "junk"]}`,
					strings.Repeat("long ", 2000))
			},
			query:   "q",
			want:    []string{"Multi line title\nhttps://a.example/\nlong long", "…"},
			notWant: []string{"junk"},
		},
		{
			name: "no results, unresponsive engines named",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"results": [], "unresponsive_engines": [["google", "timeout"], ["brave", ""]]}`)
			},
			query: "nothing at all",
			want:  []string{"No search results for: nothing at all", "google (timeout)", "brave"},
		},
		{
			name:    "server error",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			query:   "q", isError: true,
			want: []string{"Search Engine search failed", "HTTP 500"},
		},
		{
			name:    "json format disabled",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "forbidden", http.StatusForbidden) },
			query:   "q", isError: true,
			want: []string{"403", "search.formats"},
		},
		{
			name:    "garbage JSON",
			handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>not json</html>") },
			query:   "q", isError: true,
			want: []string{"Search Engine search failed", "not SearXNG JSON"},
		},
		{
			name:    "JSON of the wrong shape",
			handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[1, 2, 3]`) },
			query:   "q", isError: true,
			want: []string{"not SearXNG JSON"},
		},
		{
			name: "huge body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				// No Content-Length: the limit must hold while reading.
				fmt.Fprint(w, `{"results": [{"title": "t", "url": "u", "content": "`)
				chunk := strings.Repeat("x", 64<<10)
				for range 5 << 20 / len(chunk) {
					if _, err := fmt.Fprint(w, chunk); err != nil {
						return
					}
				}
				fmt.Fprint(w, `"}]}`)
			},
			query: "q", isError: true,
			want: []string{"over the 4194304 bytes read"},
		},
		{
			name: "huge body announced",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", fmt.Sprint(8<<20))
				w.WriteHeader(http.StatusOK)
				fmt.Fprint(w, `{"results": []`) // the client leaves before the rest
			},
			query: "q", isError: true,
			want: []string{"8388608 bytes"},
		},
		{
			name: "slow past the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Minute):
				}
			},
			opts:  tools.SearchOptions{Timeout: 200 * time.Millisecond},
			query: "q", isError: true, timesOut: true,
			want: []string{"did not answer within 200ms"},
		},
		{
			name: "slow body past the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"results": [`)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Minute):
				}
			},
			opts:  tools.SearchOptions{Timeout: 200 * time.Millisecond},
			query: "q", isError: true,
			want: []string{"did not answer within 200ms"},
		},
		{name: "not configured", noURL: true, query: "q", isError: true, want: []string{"not configured", "search.url", "json"}},
		{name: "network off", offline: true, query: "q", isError: true, want: []string{"no network"}},
		{name: "bad URL", opts: tools.SearchOptions{URL: "ftp://x"}, query: "q", isError: true, want: []string{`search.url "ftp://x" is not an http(s) URL`}},
		{name: "no query", query: "", isError: true, want: []string{"tool_args.query"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			var srv *searxng
			if tt.handler != nil {
				srv = newSearxng(t, tt.handler)
			}
			if !tt.noURL && opts.URL == "" && srv != nil {
				opts.URL = srv.URL
			}
			opts.Network = !tt.offline
			tool := tools.NewSearchEngine(opts)
			env := newToolEnv(t, "", []loop.Tool{tool})
			args, _ := json.Marshal(map[string]any{"query": tt.query})
			start := time.Now()
			res := env.exec(t, tool, string(args))
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tt.isError, res.Text)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("result lacks %q:\n%s", w, clipped(res.Text))
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.Text, w) {
					t.Errorf("result has %q:\n%s", w, clipped(res.Text))
				}
			}
			if d := time.Since(start); d > time.Minute { // a slow server holds on for 10 min: the timeout ended it
				t.Errorf("took %s", d)
			}
			if srv != nil && tt.query != "" && !tt.offline {
				srv.mu.Lock()
				got := srv.queries
				srv.mu.Unlock()
				if len(got) > 1 || len(got) == 0 && !tt.timesOut || len(got) == 1 && got[0] != tt.query {
					t.Errorf("the search engine got queries %q, want [%q]", got, tt.query)
				}
			}
		})
	}
}

// A base URL with a path and parameters keeps them; a query that is a
// number is searched as text.
func TestSearchEngineURLForms(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		fmt.Fprint(w, jsonResults(1))
	}))
	t.Cleanup(srv.Close)
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/searx/search?language=en"} {
		tool := tools.NewSearchEngine(tools.SearchOptions{URL: base, Network: true})
		env := newToolEnv(t, "", []loop.Tool{tool})
		if res := env.exec(t, tool, `{"query": 2026}`); res.IsError {
			t.Errorf("%s: %s", base, res.Text)
		}
	}
	want := []string{"/search?format=json&q=2026", "/search?format=json&q=2026", "/searx/search?format=json&language=en&q=2026"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Through the loop: the model calls search_engine and reads the results.
func TestSearchEngineInLoop(t *testing.T) {
	t.Parallel()
	srv := newSearxng(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, jsonResults(3)) })
	tool := tools.NewSearchEngine(tools.SearchOptions{URL: srv.URL, Network: true})
	env := newToolEnv(t, "", []loop.Tool{tool},
		call("search_engine", `{"query": "zero agent"}`),
		answer("found"),
	)
	if got, err := env.sess.Run(ctx(t), "search"); err != nil || got != "found" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := env.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var text strings.Builder
	for _, m := range reqs[1].Messages {
		text.WriteString(m.Content)
	}
	if !strings.Contains(text.String(), "Result 3") || !strings.Contains(text.String(), "https://example.com/2") {
		t.Errorf("the model did not get the results:\n%s", clipped(text.String()))
	}
	if !reqs[0].Teaches("search_engine") {
		t.Errorf("the system prompt lacks the tool's prompt")
	}
}

func clipped(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n[...]\n" + s[len(s)-1500:]
	}
	return s
}
