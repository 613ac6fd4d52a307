package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
)

// Defaults of [SearchOptions].
const (
	DefaultSearchTimeout    = 20 * time.Second
	DefaultSearchResults    = 10 // Agent Zero's SEARCH_ENGINE_RESULTS
	DefaultSearchMaxBytes   = 4 << 20
	searchMaxQuery          = 2000 // bytes of a query
	searchTitleBytes        = 300
	searchURLBytes          = 2048
	searchContentBytes      = 1500
	searchUnresponsiveShown = 5
)

// SearchOptions configure [NewSearchEngine]. The zero value gives a tool
// that says how to configure it.
type SearchOptions struct {
	// URL is the SearXNG instance, such as http://localhost:8888 (the
	// config's search.url); "/search" is added unless the path ends with
	// it. Query parameters in it (categories=..., language=...) are kept.
	// "" means search is not configured: the tool says how to set it.
	URL string
	// Network says whether the workspace's sandbox has a network. Without
	// one the tool refuses: Zero does not search the web on behalf of an
	// agent that was meant to be offline.
	Network bool
	// Timeout bounds one search, the answer's body included; 0 means
	// DefaultSearchTimeout.
	Timeout time.Duration
	// MaxResults is how many results the model gets; 0 means
	// DefaultSearchResults.
	MaxResults int
	// MaxBytes caps the search engine's answer; 0 means
	// DefaultSearchMaxBytes.
	MaxBytes int64
	// HTTPClient, when set, replaces the tool's own client (which uses the
	// environment's proxy settings; the endpoint is the user's choice, not
	// the model's, so it is not confined to public addresses).
	HTTPClient *http.Client
}

// SearchEngine is Agent Zero's `search_engine` tool: one query to a
// SearXNG-compatible JSON API, the top results back as title, URL and
// description.
type SearchEngine struct {
	opts     SearchOptions
	endpoint *url.URL // nil when not configured or invalid
	urlErr   string   // why URL is not usable
}

var (
	_ loop.Tool       = (*SearchEngine)(nil)
	_ loop.ToolKinder = (*SearchEngine)(nil)
)

// NewSearchEngine returns the search_engine tool.
func NewSearchEngine(o SearchOptions) *SearchEngine {
	o.Timeout = cmp.Or(o.Timeout, DefaultSearchTimeout)
	o.MaxResults = min(cmp.Or(o.MaxResults, DefaultSearchResults), 50)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultSearchMaxBytes)
	if o.HTTPClient == nil {
		// The timeout is the context's, which covers the body too.
		o.HTTPClient = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(_ *http.Request, via []*http.Request) error {
				if len(via) >= 3 {
					return errors.New("stopped after 3 redirects")
				}
				return nil
			},
		}
	}
	s := &SearchEngine{opts: o}
	if strings.TrimSpace(o.URL) != "" {
		s.endpoint, s.urlErr = searchEndpoint(strings.TrimSpace(o.URL))
	}
	return s
}

func searchEndpoint(raw string) (*url.URL, string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Sprintf("search.url %q is not an http(s) URL such as http://localhost:8888", raw)
	}
	if !strings.HasSuffix(u.Path, "/search") {
		u.Path = strings.TrimRight(u.Path, "/") + "/search"
	}
	u.Fragment = ""
	return u, ""
}

// Name is Agent Zero's tool name.
func (*SearchEngine) Name() string { return "search_engine" }

// Kind is "search".
func (*SearchEngine) Kind(string) string { return "search" }

// searchResult is one SearXNG result; other fields are ignored.
type searchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content"`
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"the text to search the web for: a few words"`
}

var searchSpecs = specOf[searchArgs](nil)

// Specs: query is a string, as the prompt says, though Execute takes a
// number or a boolean as its text.
func (*SearchEngine) Specs() []loop.ToolSpec { return searchSpecs() }

// Execute runs one search.
func (s *SearchEngine) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	query := ""
	switch q := call.Args["query"].(type) {
	case string:
		query = strings.TrimSpace(q)
	case float64, bool:
		query = fmt.Sprint(q)
	}
	switch {
	case query == "":
		return failed("search_engine needs tool_args.query: the text to search the web for")
	case len(query) > searchMaxQuery:
		return failed("search_engine: the query is %d bytes; keep it under %d, a search query is a few words", len(query), searchMaxQuery)
	case !s.opts.Network:
		return failed("search_engine is not available: the workspace's sandbox has no network (sandbox.network: none), so Zero does not search the web for it either. Work with what is in the workspace")
	case s.urlErr != "":
		return failed("search_engine is not configured correctly: %s. Tell the user; the setting is search.url in ~/.config/zero/config.yaml", s.urlErr)
	case s.endpoint == nil:
		return failed("search_engine is not configured: no search engine is set. Tell the user to set search.url in ~/.config/zero/config.yaml to a SearXNG instance whose settings.yml enables the JSON format (search: formats: [html, json]), for example search.url: http://localhost:8888. Until then, answer without web search")
	}
	call.Progress(ctx, "Searching: "+query+"\n")
	results, unresponsive, err := s.search(ctx, query)
	if err != nil {
		if ctx.Err() != nil {
			return loop.ToolResult{Text: "[search_engine stopped: " + context.Cause(ctx).Error() + "]"}, nil
		}
		// Agent Zero's wording: "<source> search failed: <error>".
		return failed("Search Engine search failed: %v", err)
	}
	if len(results) == 0 {
		text := "No search results for: " + query
		if len(unresponsive) > 0 {
			text += "\nThese engines did not answer: " + strings.Join(unresponsive, ", ")
		}
		return loop.ToolResult{Text: text}, nil
	}
	return loop.ToolResult{Text: formatSearchResults(results, s.opts.MaxResults)}, nil
}

// search asks the endpoint; it returns the results and the engines the
// instance reported as unresponsive.
func (s *SearchEngine) search(ctx context.Context, query string) ([]searchResult, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	u := *s.endpoint
	q := u.Query()
	q.Set("q", query)
	q.Set("format", "json")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, s.requestError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		msg := fmt.Sprintf("the search engine at %s answered HTTP %s", s.host(), resp.Status)
		switch resp.StatusCode {
		case http.StatusForbidden:
			msg += "; SearXNG answers 403 when its settings.yml does not list json under search.formats"
		case http.StatusTooManyRequests:
			msg += "; it is rate limiting (SearXNG's limiter): wait before searching again"
		}
		return nil, nil, errors.New(msg)
	}
	if resp.ContentLength > s.opts.MaxBytes {
		return nil, nil, fmt.Errorf("the search engine's answer is %d bytes, over the %d bytes read", resp.ContentLength, s.opts.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBytes+1))
	if err != nil {
		return nil, nil, s.requestError(ctx, err)
	}
	if int64(len(body)) > s.opts.MaxBytes {
		return nil, nil, fmt.Errorf("the search engine's answer is over the %d bytes read", s.opts.MaxBytes)
	}
	return parseSearch(body)
}

func (s *SearchEngine) host() string { return s.endpoint.Scheme + "://" + s.endpoint.Host }

func (s *SearchEngine) requestError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the search engine at %s did not answer within %s", s.host(), s.opts.Timeout)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach the search engine at %s (connection refused): is SearXNG running? Tell the user", s.host())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot reach the search engine at %s: %v", s.host(), err)
}

// parseSearch reads SearXNG's JSON answer: {"results": [{"title", "url",
// "content", ...}], "unresponsive_engines": [["name", "reason"], ...]}.
// A result that is not an object of strings is skipped.
func parseSearch(body []byte) ([]searchResult, []string, error) {
	var raw struct {
		Results      []json.RawMessage `json:"results"`
		Unresponsive []json.RawMessage `json:"unresponsive_engines"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, nil, fmt.Errorf("the search engine's answer is not SearXNG JSON (%s)", jsonProblem(err))
	}
	var results []searchResult
	for _, r := range raw.Results {
		var sr searchResult
		if json.Unmarshal(r, &sr) != nil || strings.TrimSpace(sr.URL) == "" && strings.TrimSpace(sr.Title) == "" {
			continue
		}
		results = append(results, sr)
	}
	var unresponsive []string
	for _, u := range raw.Unresponsive {
		var pair []string
		if json.Unmarshal(u, &pair) != nil || len(pair) == 0 {
			continue
		}
		entry := clip(pair[0], 60)
		if len(pair) > 1 && pair[1] != "" {
			entry += " (" + clip(pair[1], 80) + ")"
		}
		unresponsive = append(unresponsive, entry)
		if len(unresponsive) == searchUnresponsiveShown {
			break
		}
	}
	return results, unresponsive, nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s where an object was expected", te.Value)
	}
	return "invalid JSON"
}

// formatSearchResults is Agent Zero's format: each result as title, URL and
// content on three lines, results separated by a blank line, the first limit.
func formatSearchResults(results []searchResult, limit int) string {
	parts := make([]string, 0, min(len(results), limit))
	for _, r := range results[:min(len(results), limit)] {
		parts = append(parts, oneLine(clip(r.Title, searchTitleBytes))+"\n"+
			oneLine(clip(r.URL, searchURLBytes))+"\n"+
			strings.TrimSpace(clip(r.Content, searchContentBytes)))
	}
	return strings.TrimSpace(strings.Join(parts, "\n\n"))
}

// clip cuts a server's text, made valid UTF-8, to at most n bytes at a
// rune boundary, marking the cut (cut.Clip).
func clip(s string, n int) string { return cut.Clip(strings.ToValidUTF8(s, "\uFFFD"), n) }

// oneLine joins the lines of s with spaces: a title or URL spread over
// lines would break the three-line format.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
