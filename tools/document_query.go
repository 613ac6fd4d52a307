package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/zeroagent/zero/document"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rank"
	"github.com/zeroagent/zero/rootfs"
)

// Defaults and bounds of the document_query tool.
const (
	// DefaultDocumentTimeout bounds the fetch of one URL, body included.
	DefaultDocumentTimeout = 60 * time.Second
	// DefaultChunkTokens and DefaultChunkOverlap are how documents are cut
	// for the search: Agent Zero cuts 1,000 characters with 100 of overlap,
	// about 250 tokens; a little more keeps a paragraph together.
	DefaultChunkTokens  = 400
	DefaultChunkOverlap = 40
	// DefaultQueryTokens is how much of the document one query may bring
	// to the utility model.
	DefaultQueryTokens = 3000
	// DefaultContextTokens caps the excerpts of all queries together: what
	// the utility model reads in one call.
	DefaultContextTokens = 12000
	// DefaultContentTokens caps a document returned whole (a call without
	// queries), so that it fits in the history.
	DefaultContentTokens = 10000
	// MaxDocumentQueries is the most queries one call may ask.
	MaxDocumentQueries = 10
	// MaxDocuments is the most documents one call may read.
	MaxDocuments = 5

	docQueryMaxQueryBytes = 2000
	docQueryMaxNameBytes  = 4096
	docQueryMaxRewrite    = 500 // bytes of a rewritten query kept
	docQueryCandidates    = 200 // ranked chunks looked at per query
	docQueryEmbedChunks   = 1024
	docQueryEmbedBatch    = 64
	docQueryRRF           = 60 // reciprocal rank fusion constant
)

// Embedder turns texts into vectors; an *llm.Embedder is one. With an
// Embedder, document_query ranks chunks by meaning as well as by words.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var _ Embedder = (*llm.Embedder)(nil)

// DocumentQueryOptions configure [NewDocumentQuery]. The zero value reads
// files in the calling session's workspace and fetches nothing.
type DocumentQueryOptions struct {
	// Roots are the folders whose files may be read; a relative path
	// resolves against the first. None means the session's workspace.
	Roots []string
	// Network allows http(s) documents. Without it (the workspace's
	// sandbox has no network) URLs are refused.
	Network bool
	// AllowPrivate lets URLs reach loopback, private and link-local
	// addresses. Zero fetches in its own process on the host, so by default
	// a model-chosen URL reaches only public addresses; this is for tests
	// and for users who mean to query documents on their own network.
	AllowPrivate bool
	// AllowNets are non-public networks URLs may reach even without
	// AllowPrivate: a wiki on the company network, say 10.1.2.0/24.
	AllowNets []netip.Prefix
	// Timeout bounds one fetch; 0 means DefaultDocumentTimeout.
	Timeout time.Duration
	// MaxBytes caps a document's size and MaxTextBytes its extracted
	// text; 0 means the document package's defaults.
	MaxBytes     int64
	MaxTextBytes int
	// ChunkTokens and ChunkOverlap cut documents for the search; 0 means
	// the defaults, a negative overlap none.
	ChunkTokens  int
	ChunkOverlap int
	// QueryTokens is what one query may bring to the utility model,
	// ContextTokens what all of them may together, ContentTokens what a
	// call without queries returns; 0 means the defaults.
	QueryTokens   int
	ContextTokens int
	ContentTokens int
	// NoQueryRewrite skips Agent Zero's step that has the utility model
	// turn each question into search keywords (one call per query).
	NoQueryRewrite bool
	// Embedder, when set, ranks chunks by meaning too (documents of up to
	// 1,024 chunks); words alone rank them otherwise or when it fails.
	Embedder Embedder
}

// DocumentQuery is Agent Zero's `document_query` tool: it reads documents
// (workspace files or http(s) URLs: text, Markdown, code, HTML, PDF) and
// either returns their text or answers questions about them with the
// utility model, from the excerpts that match each question best.
type DocumentQuery struct {
	opts    DocumentQueryOptions
	fetcher *fetcher
}

var (
	_ loop.Tool       = (*DocumentQuery)(nil)
	_ loop.ToolKinder = (*DocumentQuery)(nil)
)

// NewDocumentQuery returns the document_query tool.
func NewDocumentQuery(o DocumentQueryOptions) *DocumentQuery {
	o.Timeout = cmp.Or(o.Timeout, DefaultDocumentTimeout)
	o.MaxBytes = cmp.Or(o.MaxBytes, document.DefaultMaxBytes)
	o.MaxTextBytes = cmp.Or(o.MaxTextBytes, document.DefaultMaxTextBytes)
	o.ChunkTokens = max(cmp.Or(o.ChunkTokens, DefaultChunkTokens), 16)
	switch {
	case o.ChunkOverlap == 0:
		o.ChunkOverlap = DefaultChunkOverlap
	case o.ChunkOverlap < 0:
		o.ChunkOverlap = 0
	}
	o.QueryTokens = max(cmp.Or(o.QueryTokens, DefaultQueryTokens), o.ChunkTokens)
	o.ContextTokens = max(cmp.Or(o.ContextTokens, DefaultContextTokens), o.QueryTokens)
	o.ContentTokens = max(cmp.Or(o.ContentTokens, DefaultContentTokens), o.ChunkTokens)
	var roots []string
	for _, r := range o.Roots {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		roots = append(roots, filepath.Clean(r))
	}
	o.Roots = roots
	return &DocumentQuery{opts: o, fetcher: newFetcher(addrGuard{all: o.AllowPrivate, nets: slices.Clone(o.AllowNets)}, o.Timeout, o.MaxBytes)}
}

// Name is Agent Zero's tool name.
func (*DocumentQuery) Name() string { return "document_query" }

// Kind is "fetch": the tool reads documents, from the web or the disk.
func (*DocumentQuery) Kind(string) string { return "fetch" }

// loadedDoc is one document's text.
type loadedDoc struct {
	name string // as shown: the absolute path or the URL
	text string
	// fileLines is set when the text's lines are the file's (text,
	// Markdown, code), so a line range can be opened with text_editor.
	fileLines bool
}

// docChunk is one piece of a document.
type docChunk struct {
	doc    int // index into the documents
	index  int // within its document, from 0
	of     int // chunks in its document
	text   string
	tokens int
	start  int // byte offset in the document's text; -1 when unknown
	line1  int // first and last line, from 1; 0 when unknown
	line2  int
}

// documentArgs are the arguments documentQueryArgs reads.
type documentArgs struct {
	Document  stringOrList `json:"document,omitempty" jsonschema:"the document: a file path in the workspace or an http(s) URL, or a list of them (required, or documents)"`
	Documents stringOrList `json:"documents,omitempty" jsonschema:"another name of document"`
	Queries   stringOrList `json:"queries,omitempty" jsonschema:"questions to answer from the documents; without queries or query the tool returns their text"`
	Query     string       `json:"query,omitempty" jsonschema:"one question, when not given as queries"`
}

var documentSpecs = specOf[documentArgs](nil)

func (*DocumentQuery) Specs() []loop.ToolSpec { return documentSpecs() }

// Execute reads the documents and answers the queries, or returns the text.
func (d *DocumentQuery) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	docs, queries, msg := documentQueryArgs(call.Args)
	if msg != "" {
		return failed("%s", msg)
	}
	loaded := make([]loadedDoc, 0, len(docs))
	for _, doc := range docs {
		call.Progress(ctx, "Fetching document content: "+doc+"\n")
		ld, err := d.load(ctx, call, doc)
		if ctx.Err() != nil {
			return stopped(ctx), nil
		}
		if err != nil {
			// Agent Zero's wording.
			return failed("Error processing document: %s: %v", doc, err)
		}
		loaded = append(loaded, ld)
	}
	if len(queries) == 0 {
		return loop.ToolResult{Text: d.contents(loaded)}, nil
	}
	return d.answer(ctx, call, loaded, queries)
}

func stopped(ctx context.Context) loop.ToolResult {
	return loop.ToolResult{Text: "[document_query stopped: " + context.Cause(ctx).Error() + "]"}
}

// documentQueryArgs reads Agent Zero's arguments: document (one path or
// URL, or a list), queries (a list, or one string) or query (one string).
// It returns a message for the model when they are not usable.
func documentQueryArgs(args map[string]any) (docs, queries []string, msg string) {
	raw, ok := args["document"]
	if !ok || raw == nil {
		raw = args["documents"]
	}
	docs, ok = stringList(raw, MaxDocuments)
	if !ok {
		return nil, nil, "document_query: tool_args.document must be a path or URL, or a list of them"
	}
	if len(docs) == 0 {
		return nil, nil, "Error: no document provided. document_query needs tool_args.document: a file path in the workspace or an http(s) URL, or a list of them"
	}
	if len(docs) > MaxDocuments {
		return nil, nil, fmt.Sprintf("document_query reads at most %d documents per call; split them over several calls", MaxDocuments)
	}
	for _, d := range docs {
		if len(d) > docQueryMaxNameBytes {
			return nil, nil, fmt.Sprintf("document_query: a document is named by its path or URL, at most %d bytes, not given as text", docQueryMaxNameBytes)
		}
	}
	rawQ, ok := args["queries"]
	if !ok || rawQ == nil || rawQ == "" {
		rawQ = args["query"]
	}
	queries, ok = stringList(rawQ, MaxDocumentQueries)
	if !ok {
		return nil, nil, "document_query: tool_args.queries must be a list of questions (strings)"
	}
	if len(queries) > MaxDocumentQueries {
		return nil, nil, fmt.Sprintf("document_query answers at most %d queries per call; split them over several calls", MaxDocumentQueries)
	}
	for _, q := range queries {
		if len(q) > docQueryMaxQueryBytes {
			return nil, nil, fmt.Sprintf("document_query: a query is %d bytes; keep each under %d", len(q), docQueryMaxQueryBytes)
		}
	}
	return docs, queries, ""
}

// stringList reads a string or a list of strings, dropping blank and
// repeated entries and keeping at most limit+1 (enough to tell the list is
// too long); ok is false for anything else.
func stringList(v any, limit int) (out []string, ok bool) {
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && len(out) <= limit && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch x := v.(type) {
	case nil:
	case string:
		// A list sent as a JSON string is taken as the list.
		var list []string
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "[") && json.Unmarshal([]byte(t), &list) == nil {
			for _, s := range list {
				add(s)
			}
			break
		}
		add(x)
	case []any:
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, false
			}
			add(s)
		}
	case []string:
		for _, s := range x {
			add(s)
		}
	default:
		return nil, false
	}
	return out, true
}

var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)

// load reads one document: an http(s) URL or a workspace file.
func (d *DocumentQuery) load(ctx context.Context, call *loop.ToolCall, doc string) (loadedDoc, error) {
	lower := strings.ToLower(doc)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return d.loadURL(ctx, doc)
	case strings.HasPrefix(lower, "file://"):
		doc = doc[len("file://"):]
	case strings.HasPrefix(lower, "file:"):
		doc = doc[len("file:"):]
	case schemeRE.MatchString(doc):
		return loadedDoc{}, errors.New("only http(s) URLs and file paths are read")
	}
	return d.loadFile(call, doc)
}

func (d *DocumentQuery) loadURL(ctx context.Context, raw string) (loadedDoc, error) {
	if !d.opts.Network {
		return loadedDoc{}, errors.New("URLs are not fetched: the workspace's sandbox has no network (sandbox.network: none), so Zero fetches nothing for it either. Use a file in the workspace")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return loadedDoc{}, errors.New("not a valid URL")
	}
	u.Fragment = ""
	f, err := d.fetcher.fetch(ctx, u)
	if errors.Is(err, ErrBlockedAddress) {
		return loadedDoc{}, fmt.Errorf("refused: %v. document_query fetches only public addresses, since it runs on the host outside the sandbox; to read something served on this machine or its network, fetch it with code_execution_tool and query the file", err)
	}
	if err != nil {
		return loadedDoc{}, err
	}
	text, err := document.Extract(documentName(f), f.body, document.Options{MaxBytes: d.opts.MaxBytes, MaxTextBytes: d.opts.MaxTextBytes})
	if err != nil {
		return loadedDoc{}, extractError(err)
	}
	return loadedDoc{name: raw, text: text}, nil
}

// extractError words an extraction error without the document package's
// internal name for the content.
func extractError(err error) error {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, "): "); ok && strings.HasPrefix(msg, "extract text from ") {
		msg = after
	}
	return errors.New(msg)
}

// roots are the folders files may come from.
func (d *DocumentQuery) roots(call *loop.ToolCall) []string { return toolRoots(d.opts.Roots, call) }

// inRoot finds the root of roots that holds p (clean, absolute, inside one
// of them as written) once its symlinks are resolved, and p's path
// relative to it: the file is then read through that root, which refuses
// any step out of it, so a symlink swapped in after the check leads
// nowhere. why, when set, says how the path leads out.
func inRoot(roots []string, p string) (base, rel, why string, err error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "", "", errors.New(rootfs.Reason(err))
	}
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = r
		}
		if rootfs.Within(rr, real) {
			base = rr
			break
		}
	}
	if base == "" {
		return "", "", "leads outside the workspace through a symlink", nil
	}
	if rel, err = filepath.Rel(base, real); err != nil {
		return "", "", "cannot be resolved", nil
	}
	return base, rel, "", nil
}

// toolRoots are the folders a tool reads files from: those configured, or
// else the calling session's workspace.
func toolRoots(configured []string, call *loop.ToolCall) []string {
	if len(configured) > 0 {
		return configured
	}
	if call.Agent != nil && call.Agent.Session() != nil {
		if ws := call.Agent.Session().Workspace(); ws != "" {
			if abs, err := filepath.Abs(ws); err == nil {
				return []string{filepath.Clean(abs)}
			}
		}
	}
	return nil
}

// loadFile reads a file inside the roots. The path is resolved (symlinks
// included) and checked, then opened relative to the root that holds it
// through an os.Root, which refuses any step out of that root: a symlink
// swapped in after the check leads nowhere.
func (d *DocumentQuery) loadFile(call *loop.ToolCall, arg string) (loadedDoc, error) {
	roots := d.roots(call)
	if len(roots) == 0 {
		return loadedDoc{}, errors.New("there is no workspace to read files from; give an http(s) URL")
	}
	where := strings.Join(roots, ", ")
	outside := func(why string) error {
		return fmt.Errorf("the path %s: document_query reads files only inside %s. Copy the file into the workspace first, or give its http(s) URL", why, where)
	}
	p := arg
	if strings.HasPrefix(p, "~") {
		return loadedDoc{}, outside("starts with ~, which is not expanded, and is outside the workspace")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	if !slices.ContainsFunc(roots, func(r string) bool { return rootfs.Within(r, p) }) {
		return loadedDoc{}, outside("is outside the workspace")
	}
	base, rel, why, err := inRoot(roots, p)
	if err != nil {
		return loadedDoc{}, err
	}
	if why != "" {
		return loadedDoc{}, outside(why)
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return loadedDoc{}, errors.New(rootfs.Reason(err))
	}
	defer root.Close()
	flag := os.O_RDONLY
	if runtime.GOOS != "windows" {
		flag |= syscall.O_NONBLOCK // a FIFO swapped in must not block the open
	}
	f, err := root.OpenFile(rel, flag, 0)
	if err != nil {
		if rootfs.IsEscape(err) {
			return loadedDoc{}, outside("leads outside the workspace through a symlink")
		}
		return loadedDoc{}, errors.New(rootfs.Reason(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return loadedDoc{}, errors.New(rootfs.Reason(err))
	}
	switch {
	case fi.IsDir():
		return loadedDoc{}, errors.New("it is a directory; name a file in it")
	case !fi.Mode().IsRegular():
		return loadedDoc{}, errors.New("it is not a regular file")
	case fi.Size() > d.opts.MaxBytes:
		return loadedDoc{}, fmt.Errorf("the file is %d bytes, over the %d MiB document_query reads", fi.Size(), d.opts.MaxBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, d.opts.MaxBytes+1))
	if err != nil {
		return loadedDoc{}, errors.New(rootfs.Reason(err))
	}
	if int64(len(data)) > d.opts.MaxBytes {
		return loadedDoc{}, fmt.Errorf("the file grew past the %d MiB document_query reads", d.opts.MaxBytes>>20)
	}
	text, err := document.Extract(p, data, document.Options{MaxBytes: d.opts.MaxBytes, MaxTextBytes: d.opts.MaxTextBytes})
	if err != nil {
		return loadedDoc{}, extractError(err)
	}
	kind := document.KindOf(p, data[:min(len(data), document.SniffLen)])
	return loadedDoc{name: p, text: text, fileLines: kind == document.PlainText || kind == document.Markdown || kind == document.Code}, nil
}

// chunk cuts a document into chunks with their token counts and lines.
func (d *DocumentQuery) chunk(i int, doc loadedDoc) []docChunk {
	pieces := document.Chunk(doc.text, d.opts.ChunkTokens, d.opts.ChunkOverlap, llm.CountTokens)
	out := make([]docChunk, len(pieces))
	// Chunks are substrings of the text in order, so their offsets and
	// lines are found in one pass.
	from, line, lineAt := 0, 1, 0
	for j, p := range pieces {
		c := docChunk{doc: i, index: j, of: len(pieces), text: p, tokens: llm.CountTokens(p), start: -1}
		if k := strings.Index(doc.text[from:], p); k >= 0 {
			start := from + k
			line += strings.Count(doc.text[lineAt:start], "\n")
			lineAt = start
			c.start = start
			c.line1 = line
			c.line2 = line + strings.Count(p, "\n")
			from = start + 1
		}
		out[j] = c
	}
	return out
}

// contents is the answer without queries: the documents' text, each cut
// to its share of ContentTokens with a note of what is left.
func (d *DocumentQuery) contents(docs []loadedDoc) string {
	share := d.opts.ContentTokens / len(docs)
	parts := make([]string, len(docs))
	for i, doc := range docs {
		text := doc.text
		if llm.CountTokens(text) > share {
			chunks := d.chunk(i, doc)
			used, last := 0, -1
			for j, c := range chunks {
				if used+c.tokens > share && j > 0 {
					break
				}
				used += c.tokens
				last = j
			}
			rest := 0
			for _, c := range chunks[last+1:] {
				rest += c.tokens
			}
			c := chunks[last]
			start := c.start
			if start < 0 { // not found while chunking, which cannot happen: chunks are substrings in order
				start = max(strings.Index(text, c.text), 0)
			}
			cut := text[:start+len(c.text)]
			text = cut + fmt.Sprintf(
				"\n\n[... the document continues: chunks %d to %d of %d, about %d more tokens, were left out. Ask document_query with queries to find what you need in them.]",
				last+2, len(chunks), len(chunks), rest)
		}
		if len(docs) > 1 {
			text = "# " + doc.name + "\n\n" + text
		}
		parts[i] = text
	}
	return strings.Join(parts, "\n\n---\n\n") // Agent Zero's separator
}

// answer is Agent Zero's document_qa: each query is turned into search
// keywords by the utility model, the chunks that match best are gathered
// within the token budgets, and the utility model answers every query
// from them at once, citing them by number.
func (d *DocumentQuery) answer(ctx context.Context, call *loop.ToolCall, docs []loadedDoc, queries []string) (loop.ToolResult, error) {
	call.Progress(ctx, fmt.Sprintf("Starting Q&A process for %d documents\n", len(docs)))
	var chunks []docChunk
	total := 0
	for i, doc := range docs {
		cs := d.chunk(i, doc)
		for _, c := range cs {
			total += c.tokens
		}
		chunks = append(chunks, cs...)
	}
	if len(chunks) == 0 {
		names := make([]string, len(docs))
		for i, doc := range docs {
			names[i] = doc.name
		}
		q, _ := json.Marshal(queries)
		n, _ := json.Marshal(names)
		return loop.ToolResult{Text: fmt.Sprintf("!!! No content found for documents: %s matching queries: %s (the documents have no text)", n, q)}, nil
	}
	var selected []int
	if total <= d.opts.ContextTokens {
		// The whole text fits: no search, no query rewriting.
		selected = make([]int, len(chunks))
		for i := range chunks {
			selected[i] = i
		}
	} else {
		var err error
		selected, err = d.selectChunks(ctx, call, chunks, queries)
		if ctx.Err() != nil {
			return stopped(ctx), nil
		}
		if err != nil {
			return failed("Error processing document: %v", err)
		}
	}
	slices.Sort(selected) // document order
	call.Progress(ctx, fmt.Sprintf("Processing %d questions in context of %d chunks\n", len(queries), len(selected)))

	var msg strings.Builder
	msg.WriteString("# Document:\n")
	labels := make([]string, len(selected))
	for n, ci := range selected {
		c := chunks[ci]
		labels[n] = chunkLabel(docs, c)
		if n > 0 {
			msg.WriteString("\n\n----\n\n")
		}
		fmt.Fprintf(&msg, "[%d] %s\n%s", n+1, labels[n], c.text)
	}
	msg.WriteString("\n\n# Queries:\n")
	for _, q := range queries {
		msg.WriteString(" *  " + q + "\n")
	}
	msg.WriteString("\nThe document is given as numbered excerpts")
	if len(selected) < len(chunks) {
		fmt.Fprintf(&msg, ": the %d of its %d chunks that match the queries best; the rest was not sent", len(selected), len(chunks))
	}
	msg.WriteString(". Answer only from them, and cite the excerpts each answer rests on by their numbers in brackets, such as [1]. If they do not answer a query, say so.\n")

	system := call.Agent.Prompt("fw.document_query.system_prompt.md", nil)
	reply, err := call.Agent.CallUtilityModel(ctx, system, msg.String())
	if ctx.Err() != nil {
		return stopped(ctx), nil
	}
	if err != nil {
		return failed("Error processing document: %v", err)
	}
	reply = strings.TrimSpace(reply)
	if reply == "" {
		return failed("Error processing document: the utility model gave an empty answer")
	}
	call.Progress(ctx, "Q&A process completed\n")
	return loop.ToolResult{Text: reply + "\n\n" + sources(reply, labels, len(selected) < len(chunks))}, nil
}

// chunkLabel says where a chunk is: the document, its number and lines.
func chunkLabel(docs []loadedDoc, c docChunk) string {
	s := fmt.Sprintf("%s, chunk %d of %d", docs[c.doc].name, c.index+1, c.of)
	if c.line1 > 0 {
		if c.line2 > c.line1 {
			s += fmt.Sprintf(", lines %d-%d", c.line1, c.line2)
		} else {
			s += fmt.Sprintf(", line %d", c.line1)
		}
		if !docs[c.doc].fileLines {
			s += " of the extracted text"
		}
	}
	return s
}

var citeRE = regexp.MustCompile(`\[(\d+(?:\s*[,;]\s*\d+)*)\]`)

// sources lists the excerpts the answer cites (all of them when it cites
// none), so the agent can open them.
func sources(reply string, labels []string, partial bool) string {
	cited := map[int]bool{}
	for _, m := range citeRE.FindAllStringSubmatch(reply, -1) {
		for _, f := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			if n, err := strconv.Atoi(f); err == nil && n >= 1 && n <= len(labels) {
				cited[n] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("Sources")
	if partial {
		b.WriteString(" (excerpts chosen for the queries; the answer may miss what is elsewhere in the document)")
	}
	b.WriteString(":")
	for i, l := range labels {
		if len(cited) == 0 || cited[i+1] {
			fmt.Fprintf(&b, "\n[%d] %s", i+1, l)
		}
	}
	return b.String()
}

// selectChunks ranks the chunks for each query and takes the best of every
// query in turn, within QueryTokens per query and ContextTokens in all.
func (d *DocumentQuery) selectChunks(ctx context.Context, call *loop.ToolCall, chunks []docChunk, queries []string) ([]int, error) {
	search := make([]string, len(queries)) // the text each query is searched with
	for i, q := range queries {
		search[i] = q
		if d.opts.NoQueryRewrite {
			continue
		}
		call.Progress(ctx, "Optimizing query: "+q+"\n")
		system := call.Agent.Prompt("fw.document_query.optmimize_query.md", nil)
		opt, err := call.Agent.CallUtilityModel(ctx, system, `Search Query: "`+q+`"`)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			call.Progress(ctx, "The query could not be optimized ("+err.Error()+"); searching with its own words\n")
			continue
		}
		if opt = strings.TrimSpace(clip(opt, docQueryMaxRewrite)); opt != "" {
			search[i] = q + "\n" + opt
			call.Progress(ctx, "Searching documents with query: "+oneLine(opt)+"\n")
		}
	}

	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.text
	}
	scores := rank.BM25(texts, search)
	cosines := d.embedScores(ctx, call, texts, search)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	ranked := make([][]int, len(queries))
	for qi := range queries {
		var found int
		ranked[qi], found = rankChunks(scores[qi], cosineOf(cosines, qi))
		if found == 0 {
			// No word of the query occurs: it may ask about the document
			// as a whole ("summarize"), so its beginnings stand in.
			ranked[qi] = leadingChunks(chunks)
		}
		call.Progress(ctx, fmt.Sprintf("Found %d chunks for: %s\n", found, oneLine(clip(queries[qi], 200))))
	}

	chosen := map[int]bool{}
	var out []int
	used := 0
	spent := make([]int, len(queries))
	for r := 0; ; r++ {
		more := false
		for qi, list := range ranked {
			if r >= len(list) {
				continue
			}
			more = true
			ci := list[r]
			if chosen[ci] {
				continue
			}
			t := chunks[ci].tokens
			if spent[qi]+t > d.opts.QueryTokens || used+t > d.opts.ContextTokens {
				continue
			}
			chosen[ci] = true
			out = append(out, ci)
			spent[qi] += t
			used += t
		}
		if !more {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no chunk fits the budget of %d tokens per query", d.opts.QueryTokens)
	}
	return out, nil
}

func cosineOf(c [][]float64, qi int) []float64 {
	if c == nil {
		return nil
	}
	return c[qi]
}

// leadingChunks lists the chunks by their position in their document: the
// first of each document, then the second, ...
func leadingChunks(chunks []docChunk) []int {
	idx := make([]int, 0, min(len(chunks), docQueryCandidates))
	for i := range chunks {
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(chunks[a].index, chunks[b].index) })
	return idx[:min(len(idx), docQueryCandidates)]
}

// rankChunks orders the chunks for one query: by BM25 score (those with
// none left out), fused with the cosine ranking by reciprocal rank when
// there is one. It returns the best docQueryCandidates and how many
// ranked.
func rankChunks(bm, cos []float64) ([]int, int) {
	byScore := func(s []float64, keepZero bool) []int {
		var idx []int
		for i, v := range s {
			if v > 0 || keepZero {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s[b], s[a]) })
		return idx
	}
	words := byScore(bm, false)
	if cos == nil {
		return words[:min(len(words), docQueryCandidates)], len(words)
	}
	fused := make([]float64, len(bm))
	for r, i := range words {
		fused[i] += 1 / float64(docQueryRRF+r+1)
	}
	for r, i := range byScore(cos, true) {
		fused[i] += 1 / float64(docQueryRRF+r+1)
	}
	all := byScore(fused, false)
	return all[:min(len(all), docQueryCandidates)], len(all)
}

// embedScores is the cosine similarity of every chunk to every query, or
// nil without an Embedder, for too many chunks, or when embedding fails.
func (d *DocumentQuery) embedScores(ctx context.Context, call *loop.ToolCall, chunks, queries []string) [][]float64 {
	if d.opts.Embedder == nil {
		return nil
	}
	if len(chunks) > docQueryEmbedChunks {
		call.Progress(ctx, fmt.Sprintf("The documents have %d chunks, more than the %d ranked by meaning; ranking by words\n", len(chunks), docQueryEmbedChunks))
		return nil
	}
	vecs := make([][]float32, 0, len(chunks)+len(queries))
	all := append(slices.Clone(chunks), queries...)
	for i := 0; i < len(all); i += docQueryEmbedBatch {
		v, err := d.opts.Embedder.Embed(ctx, all[i:min(i+docQueryEmbedBatch, len(all))])
		if err == nil && len(v) != min(docQueryEmbedBatch, len(all)-i) {
			err = fmt.Errorf("%d vectors for %d texts", len(v), min(docQueryEmbedBatch, len(all)-i))
		}
		if err != nil {
			if ctx.Err() == nil {
				call.Progress(ctx, "Embedding failed ("+err.Error()+"); ranking by words\n")
			}
			return nil
		}
		vecs = append(vecs, v...)
	}
	out := make([][]float64, len(queries))
	for qi := range queries {
		q := vecs[len(chunks)+qi]
		out[qi] = make([]float64, len(chunks))
		for ci := range chunks {
			out[qi][ci] = rank.Cosine(q, vecs[ci])
		}
	}
	return out
}
