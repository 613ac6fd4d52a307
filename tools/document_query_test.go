package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/tools"
)

// Marks of the utility model's two kinds of request.
const (
	markQA       = "# Queries:"
	markOptimize = "convert it into a concise vector store search query"
)

// qaReply answers the question-answering request.
func qaReply(content string) llmtest.Reply {
	return llmtest.Reply{Match: markQA, Content: content}
}

// optimizeReply answers the rewrite of the query that starts with q.
func optimizeReply(q, keywords string) llmtest.Reply {
	return llmtest.Reply{Match: `Search Query: "` + q, Content: keywords}
}

// requestWith returns the text of the first request to the model that
// contains mark, or "".
func requestWith(srv *llmtest.Server, mark string) string {
	for _, r := range srv.Requests() {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
		if strings.Contains(b.String(), mark) {
			return b.String()
		}
	}
	return ""
}

func countRequests(srv *llmtest.Server, mark string) int {
	n := 0
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, mark) {
				n++
				break
			}
		}
	}
	return n
}

func args(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDocumentQueryHTMLPage(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html><head><title>Launch plan</title><script>var secretToken = "abc";</script></head>
<body><h1>Launch plan</h1><p>The launch date is 12 March 2027.</p><p>The launch site is Kourou.</p></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{Network: true, AllowPrivate: true})
	env := newToolEnv(t, "", []loop.Tool{tool},
		qaReply("#### When is the launch?\nOn 12 March 2027 [1].\n\n#### Where?\nKourou [1]."))
	res := env.exec(t, tool, args(t, map[string]any{"document": srv.URL + "/plan", "queries": []string{"When is the launch?", "Where?"}}))
	if res.IsError {
		t.Fatalf("error: %s", res.Text)
	}
	for _, w := range []string{"On 12 March 2027 [1].", "Sources:\n[1] " + srv.URL + "/plan, chunk 1 of 1"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("result lacks %q:\n%s", w, res.Text)
		}
	}
	qa := requestWith(env.srv, markQA)
	for _, w := range []string{
		"You are an AI assistant who can answer questions about a given document text.", // Agent Zero's system prompt
		"# Document:\n[1] ", "The launch date is 12 March 2027.", " *  When is the launch?\n *  Where?",
	} {
		if !strings.Contains(qa, w) {
			t.Errorf("the QA request lacks %q:\n%s", w, qa)
		}
	}
	if strings.Contains(qa, "secretToken") {
		t.Errorf("the page's script reached the model:\n%s", qa)
	}
	// A small document is sent whole: no query rewriting.
	if n := countRequests(env.srv, markOptimize); n != 0 {
		t.Errorf("%d query rewrites for a document that fits", n)
	}
	if p := env.progress(); !strings.Contains(p, "Starting Q&A process for 1 documents") || !strings.Contains(p, "Q&A process completed") {
		t.Errorf("progress:\n%s", p)
	}
}

// bigMarkdown is a document of many sections of filler with two facts in
// it, far over the budgets the test sets.
func bigMarkdown() string {
	fillers := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "eiusmod", "tempor", "incididunt", "labore", "magna", "aliqua", "veniam", "nostrud", "exercitation", "ullamco", "laboris"}
	var b strings.Builder
	b.WriteString("# Operations handbook\n\n")
	for s := 1; s <= 60; s++ {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		for p := range 3 {
			for w := range 25 {
				b.WriteString(fillers[(s*7+p*3+w*w)%len(fillers)] + " ")
			}
			b.WriteString("filler.\n\n")
		}
		switch s {
		case 12:
			b.WriteString("The database is PostgreSQL 16, and the orders live in the database named orders_prod.\n\n")
		case 37:
			b.WriteString("The deploy port is 8443; deployments go through the staging port 9443 first.\n\n")
		}
	}
	return b.String()
}

func TestDocumentQueryLargeMarkdownSendsChosenChunks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	doc := bigMarkdown()
	writeFile(t, filepath.Join(ws, "docs", "handbook.md"), doc)
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{ChunkTokens: 120, QueryTokens: 400, ContextTokens: 800})
	env := newToolEnv(t, ws, []loop.Tool{tool},
		optimizeReply("What is the deploy port", "deploy port deployment number"),
		optimizeReply("Which database", "database postgres name"),
		qaReply("#### What is the deploy port?\n8443 [2].\n\n#### Which database holds the orders?\nPostgreSQL 16, orders_prod [1]."),
	)
	// A relative path resolves in the workspace; network off does not
	// matter for files.
	res := env.exec(t, tool, args(t, map[string]any{"document": "docs/handbook.md", "queries": []string{"What is the deploy port?", "Which database holds the orders?"}}))
	if res.IsError {
		t.Fatalf("error: %s", res.Text)
	}
	if n := countRequests(env.srv, markOptimize); n != 2 {
		t.Errorf("%d query rewrites, want 2 (one per query)", n)
	}
	qa := requestWith(env.srv, markQA)
	if qa == "" {
		t.Fatal("no QA request")
	}
	for _, w := range []string{"The deploy port is 8443", "PostgreSQL 16", "match the queries best", "cite the excerpts"} {
		if !strings.Contains(qa, w) && !strings.Contains(strings.ToLower(qa), strings.ToLower(w)) {
			t.Errorf("the QA request lacks %q", w)
		}
	}
	sections := regexp.MustCompile(`## Section \d+`).FindAllString(qa, -1)
	if len(qa) > len(doc)/4 || len(sections) > 12 {
		t.Errorf("the QA request has %d bytes and %d sections of a %d-byte document with 60: not a selection", len(qa), len(sections), len(doc))
	}
	// The sources name the file and the lines of the chunks the answer cites.
	src := res.Text[strings.Index(res.Text, "Sources"):]
	if !regexp.MustCompile(`\[1\] .*handbook\.md, chunk \d+ of \d+, lines \d+-\d+\n\[2\] `).MatchString(src) || strings.Contains(src, "[3]") {
		t.Errorf("sources:\n%s", src)
	}
	if !strings.Contains(src, filepath.Join(ws, "docs", "handbook.md")) {
		t.Errorf("sources should name the file by its absolute path:\n%s", src)
	}
	// The lines given for the cited chunk hold its text.
	m := regexp.MustCompile(`lines (\d+)-(\d+)`).FindStringSubmatch(src)
	var from, to int
	fmt.Sscan(m[1], &from)
	fmt.Sscan(m[2], &to)
	lines := strings.Split(doc, "\n")
	if from < 1 || to > len(lines) || !strings.Contains(strings.Join(lines[from-1:to], "\n"), "PostgreSQL 16") && !strings.Contains(strings.Join(lines[from-1:to], "\n"), "8443") {
		t.Errorf("lines %d-%d do not hold a fact", from, to)
	}
}

// A query without a word in the document falls back to its beginning; a
// failing rewrite falls back to the query's own words.
func TestDocumentQueryFallbacks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "handbook.md"), bigMarkdown())
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{ChunkTokens: 120, QueryTokens: 300, ContextTokens: 600})
	env := newToolEnv(t, ws, []loop.Tool{tool},
		// no reply for the rewrite: the scripted server answers 400
		qaReply("#### Summarize\nA handbook [1]."),
	)
	res := env.exec(t, tool, `{"document": "handbook.md", "query": "Summarize"}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Text)
	}
	qa := requestWith(env.srv, markQA)
	if !strings.Contains(qa, "# Operations handbook") {
		t.Errorf("the beginning of the document should stand in:\n%s", clipped(qa))
	}
	if p := env.progress(); !strings.Contains(p, "could not be optimized") {
		t.Errorf("progress:\n%s", p)
	}
}

// pdfBytes writes a one-page PDF showing lines of text in Helvetica, with
// a cross-reference table whose offsets are computed while writing.
func pdfBytes(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func TestDocumentQueryPDF(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	path := filepath.Join(ws, "report.pdf")
	if err := os.WriteFile(path, pdfBytes("Quarterly report", "Revenue was 42 million euros.", "Churn fell to 3 percent."), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{})
	env := newToolEnv(t, ws, []loop.Tool{tool}, qaReply("#### What was the revenue?\n42 million euros [1]."))

	// Without queries: the text.
	res := env.exec(t, tool, args(t, map[string]any{"document": path}))
	if res.IsError || !strings.Contains(res.Text, "Revenue was 42 million euros.") || !strings.Contains(res.Text, "Churn fell to 3 percent.") {
		t.Fatalf("content (error %v):\n%s", res.IsError, res.Text)
	}
	// With one: the answer, and a position "of the extracted text".
	res = env.exec(t, tool, args(t, map[string]any{"document": "file://" + path, "queries": "What was the revenue?"}))
	if res.IsError || !strings.Contains(res.Text, "42 million euros [1].") || !strings.Contains(res.Text, "report.pdf, chunk 1 of 1, lines 1-3 of the extracted text") {
		t.Errorf("answer (error %v):\n%s", res.IsError, res.Text)
	}
	if qa := requestWith(env.srv, markQA); !strings.Contains(qa, "Revenue was 42 million euros.") {
		t.Errorf("the QA request lacks the PDF's text:\n%s", qa)
	}
}

// A PDF served over HTTP is judged by its media type, not its URL.
func TestDocumentQueryPDFOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(pdfBytes("Served over HTTP"))
	}))
	t.Cleanup(srv.Close)
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{Network: true, AllowPrivate: true})
	env := newToolEnv(t, "", []loop.Tool{tool})
	if res := env.exec(t, tool, args(t, map[string]any{"document": srv.URL + "/download?id=7"})); res.IsError || !strings.Contains(res.Text, "Served over HTTP") {
		t.Errorf("error %v:\n%s", res.IsError, res.Text)
	}
}

func TestDocumentQueryContentIsBounded(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	doc := bigMarkdown()
	writeFile(t, filepath.Join(ws, "a.md"), doc)
	writeFile(t, filepath.Join(ws, "b.txt"), "Second document.")
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{ContentTokens: 1000})
	env := newToolEnv(t, ws, []loop.Tool{tool})
	res := env.exec(t, tool, `{"document": ["a.md", "b.txt"]}`)
	if res.IsError {
		t.Fatal(res.Text)
	}
	if len(res.Text) > len(doc)/3 || !strings.Contains(res.Text, "the document continues") || !strings.Contains(res.Text, "# Operations handbook") {
		t.Errorf("%d bytes of a %d-byte document:\n%s", len(res.Text), len(doc), clipped(res.Text))
	}
	if !strings.Contains(res.Text, "\n\n---\n\n# "+filepath.Join(ws, "b.txt")+"\n\nSecond document.") {
		t.Errorf("the second document should follow, named:\n%s", clipped(res.Text))
	}
}

func TestDocumentQueryRefusals(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.md"), "the secret is 42")
	writeFile(t, filepath.Join(ws, "ok.md"), "fine")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.md", filepath.Join(ws, "inside-link.md")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)

	var hits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "the secret is 42")
	}))
	t.Cleanup(local.Close)
	// entry redirects to the metadata address and to another loopback
	// port; AllowNets lets the test reach entry itself. The guard refuses
	// before connecting, so nothing is sent there.
	entry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/v6":
			http.Redirect(w, r, "http://[::ffff:169.254.169.254]/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, r.URL.String(), http.StatusFound)
		default:
			http.Redirect(w, r, strings.Replace(local.URL, "127.0.0.1", "127.0.0.2", 1), http.StatusFound)
		}
	}))
	t.Cleanup(entry.Close)
	entryAddr := netip.MustParseAddrPort(strings.TrimPrefix(entry.URL, "http://")).Addr()

	guarded := tools.NewDocumentQuery(tools.DocumentQueryOptions{Network: true, AllowNets: []netip.Prefix{netip.PrefixFrom(entryAddr, 32)}})
	strict := tools.NewDocumentQuery(tools.DocumentQueryOptions{Network: true})
	offline := tools.NewDocumentQuery(tools.DocumentQueryOptions{AllowPrivate: true})
	tests := []struct {
		name string
		tool *tools.DocumentQuery
		args map[string]any
		want string
	}{
		{"absolute path outside", strict, map[string]any{"document": filepath.Join(outside, "secret.md")}, "is outside the workspace"},
		{"dot-dot out", strict, map[string]any{"document": "../" + filepath.Base(outside) + "/secret.md"}, "is outside the workspace"},
		{"etc passwd", strict, map[string]any{"document": "/etc/passwd"}, "is outside the workspace"},
		{"tilde", strict, map[string]any{"document": "~/.ssh/id_rsa"}, "is not expanded"},
		{"symlink out", strict, map[string]any{"document": "link.md"}, "leads outside the workspace through a symlink"},
		{"symlinked folder out", strict, map[string]any{"document": "dirlink/secret.md"}, "leads outside the workspace through a symlink"},
		{"missing file", strict, map[string]any{"document": "nope.md"}, "no such file"},
		{"directory", strict, map[string]any{"document": "sub"}, "is a directory"},
		{"loopback URL", strict, map[string]any{"document": local.URL + "/x"}, "127.0.0.1 is loopback"},
		{"metadata URL", strict, map[string]any{"document": "http://169.254.169.254/latest/meta-data/"}, "169.254.169.254 is link-local"},
		{"localhost by name", strict, map[string]any{"document": strings.Replace(local.URL, "127.0.0.1", "localhost", 1)}, "is loopback"},
		{"mapped IPv6 loopback", strict, map[string]any{"document": "http://[::ffff:127.0.0.1]:1/"}, "127.0.0.1 is loopback"},
		{"redirect to metadata", guarded, map[string]any{"document": entry.URL + "/meta"}, "169.254.169.254 is link-local"},
		{"redirect to other loopback", guarded, map[string]any{"document": entry.URL + "/other"}, "127.0.0.2 is loopback"},
		{"redirect to mapped metadata", guarded, map[string]any{"document": entry.URL + "/v6"}, "169.254.169.254 is link-local"},
		{"redirect loop", guarded, map[string]any{"document": entry.URL + "/loop"}, "stopped after 5 redirects"},
		{"network off", offline, map[string]any{"document": local.URL}, "no network"},
		{"other scheme", strict, map[string]any{"document": "ftp://example.com/x.pdf"}, "only http(s) URLs and file paths"},
		{"no document", strict, map[string]any{"queries": []string{"x"}}, "no document provided"},
		{"document of the wrong type", strict, map[string]any{"document": 7}, "tool_args.document must be"},
		{"too many documents", strict, map[string]any{"document": []string{"1", "2", "3", "4", "5", "6"}}, "at most 5 documents"},
		{"too many queries", strict, map[string]any{"document": "ok.md", "queries": []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}}, "at most 10 queries"},
		{"queries of the wrong type", strict, map[string]any{"document": "ok.md", "queries": []any{"a", 2}}, "list of questions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newToolEnv(t, ws, []loop.Tool{tt.tool})
			res := env.exec(t, tt.tool, args(t, tt.args))
			if !res.IsError || !strings.Contains(res.Text, tt.want) {
				t.Errorf("IsError %v, want an error with %q:\n%s", res.IsError, tt.want, res.Text)
			}
			if strings.Contains(res.Text, "the secret is 42") {
				t.Errorf("the secret leaked:\n%s", res.Text)
			}
		})
	}
	t.Run("symlink inside is read", func(t *testing.T) {
		t.Parallel()
		env := newToolEnv(t, ws, []loop.Tool{strict})
		if res := env.exec(t, strict, `{"document": "inside-link.md"}`); res.IsError || res.Text != "fine" {
			t.Errorf("IsError %v:\n%s", res.IsError, res.Text)
		}
	})
	t.Cleanup(func() {
		if n := hits.Load(); n != 0 {
			t.Errorf("the loopback server was reached %d times", n)
		}
	})
}

func TestPublicAddress(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "93.184.216.34": true,
		"127.0.0.1": false, "127.8.9.10": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "fe80::1": false, "fd00:ec2::254": false,
		"0.0.0.0": false, "::": false, "100.100.100.200": false, "224.0.0.1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:8.8.8.8": true, "64:ff9b::7f00:1": false, "64:ff9b::808:808": true,
		"2002:7f00:1::": false, "2002:808:808::": true, "2001:0:4136:e378::1": false, "fec0::1": false,
		"198.18.0.1": false, "192.0.2.1": false, "ff02::1": false,
	} {
		if got := tools.PublicAddress(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddress(%s) = %v, want %v", addr, got, want)
		}
	}
}

// fakeEmbedder embeds with llmtest's bag of words and counts its calls.
type fakeEmbedder struct{ calls atomic.Int32 }

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := llmtest.Embed(t)
		out[i] = make([]float32, len(v))
		for j, x := range v {
			out[i][j] = float32(x)
		}
	}
	return out, nil
}

func TestDocumentQueryWithEmbedder(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "handbook.md"), bigMarkdown())
	emb := &fakeEmbedder{}
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{ChunkTokens: 120, QueryTokens: 400, ContextTokens: 800, NoQueryRewrite: true, Embedder: emb})
	env := newToolEnv(t, ws, []loop.Tool{tool}, qaReply("8443 [1]."))
	res := env.exec(t, tool, `{"document": "handbook.md", "queries": ["What is the deploy port?"]}`)
	if res.IsError {
		t.Fatal(res.Text)
	}
	if emb.calls.Load() == 0 {
		t.Error("the embedder was not used")
	}
	if n := countRequests(env.srv, markOptimize); n != 0 {
		t.Errorf("%d rewrites with NoQueryRewrite", n)
	}
	if qa := requestWith(env.srv, markQA); !strings.Contains(qa, "The deploy port is 8443") {
		t.Errorf("the QA request lacks the fact:\n%s", clipped(qa))
	}
}

// Through the loop: the model asks, the tool answers from the file.
func TestDocumentQueryInLoop(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "notes.md"), "# Notes\n\nThe release is on Friday.\n")
	tool := tools.NewDocumentQuery(tools.DocumentQueryOptions{})
	env := newToolEnv(t, ws, []loop.Tool{tool},
		call("document_query", `{"document": "notes.md", "queries": ["When is the release?"]}`),
		qaReply("#### When is the release?\nFriday [1]."),
		answer("Friday"),
	)
	if got, err := env.sess.Run(ctx(t), "when?"); err != nil || got != "Friday" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	reqs := env.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	var last strings.Builder
	for _, m := range reqs[2].Messages {
		last.WriteString(m.Content)
	}
	if !strings.Contains(last.String(), "Friday [1].") || !strings.Contains(last.String(), "notes.md, chunk 1 of 1, lines 1-3") {
		t.Errorf("the model did not get the answer:\n%s", clipped(last.String()))
	}
	if !reqs[0].Teaches("document_query") {
		t.Error("the system prompt lacks the tool's prompt")
	}
}
