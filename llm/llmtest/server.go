// Package llmtest is a scripted OpenAI-compatible chat server on loopback,
// for tests and demos. It streams exactly the chat.completion.chunk SSE that
// OpenAI sends, so the real openai-go client is exercised end to end, and it
// records every request so tests can assert what was sent and whether the
// client hung up early.
package llmtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zeroagent/zero/llm"
)

// ModelName is the one model GET /v1/models lists.
const ModelName = "llmtest"

// NoReplyMessage is the 400 error message sent when the script is used up.
const NoReplyMessage = "llmtest: no scripted reply left"

// ErrNotLoopback is returned by [Start] for an address that is not loopback.
var ErrNotLoopback = errors.New("llmtest: address is not loopback")

// Recorded is one request the server received.
type Recorded struct {
	Model    string
	Messages []llm.Message // with their tool calls and tool_call_ids
	// Tools are the names of the functions the request offered (native
	// tool calls), in order; none for a request without "tools".
	Tools []string
	// PromptTokens is the server's count of the prompt, with a window set
	// (see [Server.ServeWindow]); 0 without.
	PromptTokens  int
	Authorization string // the raw header, so tests can assert the key is sent but never leaked elsewhere
	Body          []byte
	ChunksSent    int  // reasoning+content chunks written
	Trickled      int  // times the reply's Trickle was written
	Flooded       int  // bytes of the reply's Flood written (accepted by the connection, not necessarily read by the client)
	ClientClosed  bool // the client went away before the server finished the stream
	Reply         int  // index of the reply used, -1 if none
	// Memory is set when the request was one of Zero's memory requests to
	// the utility model that no scripted reply matched, answered by
	// MemoryReply instead (Reply is then -1).
	Memory bool
}

// Server is a scripted OpenAI-compatible server. Its methods are safe for
// concurrent use.
type Server struct {
	embeds    atomic.Int64 // embedding requests answered
	blind     atomic.Bool  // see SetBlind
	url       string
	stop      func()
	closeOnce sync.Once
	logger    *slog.Logger

	mu       sync.Mutex
	idle     *sync.Cond // signalled when inflight drops
	inflight int
	// holds: a reply with HoldAfter waits on release; held is closed (and
	// replaced) each time one gets there.
	release chan struct{}
	held    chan struct{}
	replies []Reply
	used    []bool
	recs    []Recorded

	win windowState // what it says of its context window (window.go)
}

func newServer(replies []Reply, logger *slog.Logger) *Server {
	s := &Server{logger: logger, release: make(chan struct{}), held: make(chan struct{})}
	s.idle = sync.NewCond(&s.mu)
	s.Push(replies...)
	return s
}

// NewServer starts a server on 127.0.0.1 that answers with replies; it is
// closed by tb.Cleanup.
func NewServer(tb testing.TB, replies ...Reply) *Server {
	tb.Helper()
	s := newServer(replies, slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(s)
	s.url = ts.URL + "/v1"
	s.stop = ts.Close
	tb.Cleanup(s.Close)
	return s
}

// Start serves script on addr, which must be a loopback address such as
// "127.0.0.1:0". Each request is logged at info level. Call Close to stop.
func Start(addr string, script Script, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: listen: %w", err)
	}
	s := newServer(script.Replies, logger)
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	served := make(chan struct{})
	go func() { // owned by s.stop, which waits for it
		defer close(served)
		_ = srv.Serve(ln)
	}()
	s.url = "http://" + ln.Addr().String() + "/v1"
	s.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close() // a stream still running after the grace period is cut
		}
		<-served
	}
	return s, nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("llmtest: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
}

// Held returns a channel closed when a reply with HoldAfter next reaches
// its hold: a test knows the model is mid-stream, without timing.
func (s *Server) Held() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Release lets every reply waiting at its hold go on (and the ones that
// reach it later, until the next Release is needed again).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// hold is where a reply with HoldAfter waits: it reports that it got there,
// then waits for Release or the client leaving.
func (s *Server) hold(ctx context.Context) error {
	s.mu.Lock()
	close(s.held)
	s.held = make(chan struct{})
	release := s.release
	s.mu.Unlock()
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return errAborted
	}
}

// URL is the base URL including /v1, e.g. http://127.0.0.1:PORT/v1.
func (s *Server) URL() string { return s.url }

// Push appends replies to the script at run time.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
	s.used = append(s.used, make([]bool, len(replies))...)
}

// Requests waits until no request is being handled and returns the
// requests received so far, in arrival order, except Zero's memory requests
// to the utility model (see MemoryRequests), which come in the background
// at their own pace. Waiting makes fields set at the end of a stream
// (ClientClosed, ChunksSent) reliable right after a client call returned.
func (s *Server) Requests() []Recorded {
	return s.recorded(false)
}

// MemoryRequests is Requests for the memory requests only (memorizing,
// recall queries, consolidations).
func (s *Server) MemoryRequests() []Recorded {
	return s.recorded(true)
}

func (s *Server) recorded(memory bool) []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.inflight > 0 {
		s.idle.Wait()
	}
	var out []Recorded
	for _, r := range s.recs {
		if r.Memory == memory {
			out = append(out, r)
		}
	}
	return out
}

// WaitIdle blocks until no request is being handled.
func (s *Server) WaitIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.inflight > 0 {
		s.idle.Wait()
	}
}

// Close stops the server; further calls do nothing.
func (s *Server) Close() {
	s.closeOnce.Do(s.stop)
}

// ServeHTTP routes the OpenAI paths the server implements.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	w, done := s.window(w, r)
	if done {
		return
	}
	switch {
	case r.Method == http.MethodPost && path == "/chat/completions":
		s.chat(w, r)
	case r.Method == http.MethodPost && path == "/responses":
		s.responses(w, r)
	case r.Method == http.MethodPost && path == "/embeddings":
		s.embeddings(w, r)
	case r.Method == http.MethodGet && path == "/models":
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data":   []any{map[string]any{"id": ModelName, "object": "model", "created": 0, "owned_by": "llmtest"}},
		})
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path), "")
	}
}

type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// contentText reads a message content that is either a string or a list of
// {"type":"text","text":…} parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// errRequest is a request a real server refuses with a 400 and this
// message (no "llmtest: bad request body" before it).
type errRequest string

func (e errRequest) Error() string { return string(e) }

// BlindMessage is what a server without vision answers a request with an
// image part (OpenAI's words).
const BlindMessage = "Invalid content type. image_url is only supported by certain models."

// SetBlind makes the server's model one that cannot see: a request with an
// image part is refused with a 400 (BlindMessage), as OpenAI, vLLM and
// llama.cpp refuse one for a text-only model.
func (s *Server) SetBlind(blind bool) { s.blind.Store(blind) }

// contentImages reads the image_url parts of message i's content as real
// servers check them: only in a user message, a data: URL of an image
// type whose base64 decodes (remote URLs are not fetched here: loopback
// only), and none at all when the model is blind.
func contentImages(i int, role llm.Role, raw json.RawMessage, blind bool) ([]llm.Image, error) {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return nil, nil
	}
	var out []llm.Image
	for j, p := range parts {
		switch p.Type {
		case "text":
			continue
		case "image_url":
		default:
			return nil, errRequest(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'text' and 'image_url'. (messages[%d].content[%d].type)", p.Type, i, j))
		}
		if blind {
			return nil, errRequest(BlindMessage)
		}
		if role != llm.User {
			return nil, errRequest(fmt.Sprintf("Invalid 'messages[%d]'. Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", i, role))
		}
		if p.ImageURL == nil {
			return nil, errRequest(fmt.Sprintf("Missing required parameter: 'messages[%d].content[%d].image_url'.", i, j))
		}
		rest, ok := strings.CutPrefix(p.ImageURL.URL, "data:")
		mime, b64, ok2 := strings.Cut(rest, ";base64,")
		if !ok || !ok2 || !strings.HasPrefix(mime, "image/") {
			return nil, errRequest(fmt.Sprintf("Invalid 'messages[%d].content[%d].image_url.url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an unsupported value.", i, j))
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(data) == 0 {
			return nil, errRequest("You uploaded an unsupported image. Please make sure your image is valid.")
		}
		out = append(out, llm.NewImage(mime, data, 0, 0, ""))
	}
	return out, nil
}

// outcome is what a handler reports back into its Recorded entry.
type outcome struct {
	status       int
	chunks       int
	trickled     int
	flooded      int
	clientClosed bool
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	rec := Recorded{Authorization: r.Header.Get("Authorization"), Body: body, Reply: -1}
	if uw, ok := w.(*usageWriter); ok {
		rec.PromptTokens = uw.prompt
	}
	var req chatRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err == nil {
		rec.Model = req.Model
		for _, t := range req.Tools {
			rec.Tools = append(rec.Tools, t.Function.Name)
		}
		for i, m := range req.Messages {
			msg := llm.Message{Role: llm.Role(m.Role), Content: contentText(m.Content), ToolCallID: m.ToolCallID}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			if msg.Images, err = contentImages(i, msg.Role, m.Content, s.blind.Load()); err != nil {
				break
			}
			rec.Messages = append(rec.Messages, msg)
		}
	}
	s.answer(w, r, rec, err, func(reply Reply, text string, out *outcome) {
		if !req.Stream {
			s.complete(w, req, reply, text)
			return
		}
		s.stream(r.Context(), w, req, reply, text, out)
	})
}

// transcript is the text a request's reply is picked by: its messages'
// content and tool calls, joined, and a line "[image <mime> sha256:<hex>]"
// for each image, so that a reply can match a picture the model got.
func transcript(msgs []llm.Message) string {
	var text strings.Builder
	for i, m := range msgs {
		if i > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(m.Content)
		for _, tc := range m.ToolCalls {
			text.WriteString("\n" + tc.Name + " " + tc.Arguments)
		}
		for _, im := range m.Images {
			text.WriteString("\n[image " + im.MIME + " sha256:" + im.Hash + "]")
		}
	}
	return text.String()
}

// answer records a request read as rec (err: its body could not be read),
// picks its reply and writes what every API answers alike: a bad body, no
// reply, a hangup, an error status. respond writes a reply to a good one.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec Recorded, err error, respond func(reply Reply, text string, out *outcome)) {
	text := transcript(rec.Messages)
	idx, rec, reply := s.record(rec, text, err)

	var out outcome
	// Deferred so the entry is completed even when the handler aborts the
	// connection with a panic (CutAfter, Hangup).
	defer s.finish(idx, &out)

	if err == nil && rec.Reply >= 0 && reply.HeaderDelay > 0 {
		if pause(r.Context(), time.Duration(reply.HeaderDelay)) != nil {
			out.clientClosed = true
			return
		}
	}
	switch {
	case err != nil:
		out.status = http.StatusBadRequest
		var er errRequest
		if errors.As(err, &er) {
			writeError(w, out.status, string(er), "")
			break
		}
		writeError(w, out.status, "llmtest: bad request body: "+err.Error(), "")
	case rec.Reply < 0 && !rec.Memory:
		out.status = http.StatusBadRequest
		writeError(w, out.status, NoReplyMessage, "")
	case reply.Hangup:
		panic(http.ErrAbortHandler)
	case reply.Status != 0:
		out.status = reply.Status
		var wait func() error
		if d := time.Duration(reply.FirstDelay); d > 0 {
			wait = func() error { return trickle(r.Context(), w, http.NewResponseController(w), d, reply, &out.trickled) }
		}
		out.clientClosed = writeErrorAfter(w, reply.Status, reply.Message, reply.RetryAfter, wait) != nil
	default:
		out.status = http.StatusOK
		respond(reply, text, &out)
	}
}

// record keeps a request, picks its reply from its text (the messages
// joined) and returns its index in the records, the record as kept and the
// reply. A request that could not be read (err) gets none.
func (s *Server) record(rec Recorded, text string, err error) (int, Recorded, Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := len(s.recs)
	var reply Reply
	if err == nil {
		rec.Memory = isMemoryRequest(text)
		rec.Reply = s.pickLocked(text, rec.Memory)
		if rec.Reply >= 0 {
			reply = s.replies[rec.Reply]
		} else if rec.Reply == pickMemory {
			reply, rec.Reply = MemoryReply(rec.Messages), -1
		}
	}
	s.recs = append(s.recs, rec)
	s.inflight++
	return idx, rec, reply
}

// pickLocked chooses the reply for a request: the first unused reply whose
// Match occurs in text, else the first unused reply without Match.
func (s *Server) pickLocked(text string, memory bool) int {
	for i, r := range s.replies {
		if !s.used[i] && r.Match != "" && r.Memory == memory && strings.Contains(text, r.Match) {
			s.used[i] = true
			return i
		}
	}
	if memory {
		return pickMemory
	}
	for i, r := range s.replies {
		if !s.used[i] && r.Match == "" && !r.Memory {
			s.used[i] = true
			return i
		}
	}
	return -1
}

func (s *Server) finish(idx int, out *outcome) {
	s.mu.Lock()
	rec := &s.recs[idx]
	rec.ChunksSent = out.chunks
	rec.Trickled = out.trickled
	rec.Flooded = out.flooded
	rec.ClientClosed = out.clientClosed
	reply := rec.Reply
	s.inflight--
	s.idle.Broadcast()
	s.mu.Unlock()
	s.logger.Info("llmtest request", "reply", reply, "status", out.status,
		"chunks", out.chunks, "flooded", out.flooded, "client_closed", out.clientClosed)
}

// chunk is one chat.completion.chunk, with fields in OpenAI's order.
type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     any            `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

// errAborted ends a stream whose client went away.
var errAborted = errors.New("client closed the connection")

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, req chatRequest, reply Reply, prompt string, out *outcome) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	base := chunk{
		ID:                fmt.Sprintf("chatcmpl-llmtest-%d", time.Now().UnixNano()),
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             cmp.Or(req.Model, ModelName),
		SystemFingerprint: "fp_llmtest",
	}
	if req.StreamOptions.IncludeUsage {
		base.Usage = json.RawMessage("null") // OpenAI sends "usage": null on every chunk but the last
	}
	send := func(delta map[string]any, finish *string) error {
		c := base
		c.Choices = []chunkChoice{{Index: 0, Delta: delta, FinishReason: finish}}
		return writeEvent(w, rc, c)
	}
	wait := func(d time.Duration) error { return trickle(ctx, w, rc, d, reply, &out.trickled) }
	// piece waits Delay (watching for the client leaving), then sends one delta.
	piece := func(delta map[string]any) error {
		if err := wait(time.Duration(reply.Delay)); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errAborted
		}
		if err := send(delta, nil); err != nil {
			return errAborted
		}
		out.chunks++
		return nil
	}

	var err error
	if d := time.Duration(reply.FirstDelay); d > 0 {
		// Headers go out first, so the client sees a silent stream rather
		// than a server slow to answer.
		if err = rc.Flush(); err == nil {
			err = wait(d)
		}
	}
	if err == nil && reply.Raw != "" {
		if _, err = io.WriteString(w, reply.Raw); err == nil {
			err = rc.Flush()
		}
		out.clientClosed = err != nil
		return
	}
	if err == nil && reply.Flood > 0 && reply.FloodFirst {
		flood(w, rc, reply, out) // does not return
	}
	if err == nil {
		err = send(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	}
	field := cmp.Or(reply.ReasoningField, "reasoning_content")
	for _, p := range split(reply.Reasoning, reply.ChunkSize) {
		if err != nil {
			break
		}
		err = piece(map[string]any{"content": nil, field: p})
	}
	contentSent := 0
	for _, p := range split(reply.Content, reply.ChunkSize) {
		if err != nil {
			break
		}
		if err = piece(map[string]any{"content": p}); err == nil {
			contentSent++
			if reply.CutAfter > 0 && contentSent >= reply.CutAfter {
				panic(http.ErrAbortHandler)
			}
			if reply.StallAfter > 0 && contentSent >= reply.StallAfter {
				err = wait(-1) // no chunk but open, until the client gives up
			}
			if reply.HoldAfter > 0 && contentSent == reply.HoldAfter {
				if err = rc.Flush(); err == nil {
					err = s.hold(ctx)
				}
			}
		}
	}
	if err != nil {
		out.clientClosed = true
		return
	}
	if reply.CutAfter > 0 {
		panic(http.ErrAbortHandler) // fewer content chunks than CutAfter: still no finish
	}
	if reply.Flood > 0 {
		flood(w, rc, reply, out) // does not return
	}
	if reply.StallAfter > 0 { // fewer content chunks than StallAfter: still no finish
		_ = wait(-1)
		out.clientClosed = true
		return
	}
	if err = streamCalls(reply, piece); err != nil {
		out.clientClosed = true
		return
	}
	stop := "stop"
	if len(reply.ToolCalls) > 0 && !reply.ToolCallsInText {
		stop = "tool_calls"
	}
	err = send(map[string]any{}, &stop)
	if err == nil && req.StreamOptions.IncludeUsage {
		u, _ := json.Marshal(wireUsage(usageFor(reply, prompt)))
		c := base
		c.Choices = []chunkChoice{}
		c.Usage = u
		err = writeEvent(w, rc, c)
	}
	if err == nil {
		_, err = io.WriteString(w, "data: [DONE]\n\n")
		if err == nil {
			err = rc.Flush()
		}
	}
	out.clientClosed = err != nil
}

// flood writes reply.Flood bytes that never end an SSE event (see
// [Reply].Flood), counting the bytes written in out.flooded, and then aborts
// the connection, also when the client left first (which it records in
// out.clientClosed). It never returns.
func flood(w io.Writer, rc *http.ResponseController, reply Reply, out *outcome) {
	block := floodBlock(reply.FloodLine)
	if reply.FloodLine == 0 {
		if _, err := io.WriteString(w, "data: "); err != nil {
			out.clientClosed = true
			panic(http.ErrAbortHandler)
		}
		out.flooded += len("data: ")
	}
	for out.flooded < reply.Flood {
		b := block[:min(len(block), reply.Flood-out.flooded)]
		n, err := w.Write(b)
		out.flooded += n
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			out.clientClosed = true
			break
		}
	}
	panic(http.ErrAbortHandler)
}

// floodBlock is about 32 KiB of flood: x's, or whole "data: xxx…\n" lines
// of lineLen x's each when lineLen > 0.
func floodBlock(lineLen int) []byte {
	const size = 32 << 10
	if lineLen == 0 {
		return bytes.Repeat([]byte("x"), size)
	}
	line := "data: " + strings.Repeat("x", lineLen) + "\n"
	return []byte(strings.Repeat(line, max(1, size/len(line))))
}

// complete answers a non-streaming request (handy for curl in demos).
func (s *Server) complete(w http.ResponseWriter, req chatRequest, reply Reply, prompt string) {
	msg := map[string]any{"role": "assistant", "content": reply.Content, "refusal": nil}
	finish := "stop"
	if calls := callsOf(reply); len(calls) > 0 {
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	if reply.Reasoning != "" {
		msg[cmp.Or(reply.ReasoningField, "reasoning_content")] = reply.Reasoning
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":                 fmt.Sprintf("chatcmpl-llmtest-%d", time.Now().UnixNano()),
		"object":             "chat.completion",
		"created":            time.Now().Unix(),
		"model":              cmp.Or(req.Model, ModelName),
		"system_fingerprint": "fp_llmtest",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":              wireUsage(usageFor(reply, prompt)),
	})
}

// pause waits d, or returns errAborted as soon as the client goes away.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errAborted
	case <-t.C:
		return nil
	}
}

// trickle waits d (forever when negative) while writing reply.Trickle, if
// set, every reply.TrickleEvery, counting the writes in n. It returns
// errAborted as soon as the client goes away.
func trickle(ctx context.Context, w io.Writer, rc *http.ResponseController, d time.Duration, reply Reply, n *int) error {
	if d == 0 {
		return nil
	}
	var end <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		end = t.C
	}
	var ticks <-chan time.Time
	if reply.Trickle != "" {
		tick := time.NewTicker(cmp.Or(time.Duration(reply.TrickleEvery), 10*time.Millisecond))
		defer tick.Stop()
		ticks = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return errAborted
		case <-end:
			return nil
		case <-ticks:
			if _, err := io.WriteString(w, reply.Trickle); err != nil {
				return errAborted
			}
			if err := rc.Flush(); err != nil {
				return errAborted
			}
			*n++
		}
	}
}

// wireUsage is u as OpenAI's API writes it: the cached tokens in
// prompt_tokens_details, and the cost as OpenRouter adds it.
func wireUsage(u Usage) map[string]any {
	w := map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	if u.CachedTokens > 0 {
		w["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CachedTokens}
	}
	if u.Cost > 0 {
		w["cost"] = u.Cost
	}
	return w
}

func usageFor(reply Reply, prompt string) Usage {
	if reply.Usage != nil {
		return *reply.Usage
	}
	// Roughly four bytes per token: the point is plausible, non-zero numbers.
	p := (len(prompt) + 3) / 4
	c := (len(reply.Content) + len(reply.Reasoning) + 3) / 4
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func writeEvent(w io.Writer, rc *http.ResponseController, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
		return err
	}
	return rc.Flush()
}

// split cuts s into pieces of at most size bytes (default 16) without
// splitting a UTF-8 sequence; a rune longer than size gets a piece of its own.
func split(s string, size int) []string {
	if size <= 0 {
		size = 16
	}
	var out []string
	for s != "" {
		n := min(size, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // one rune wider than size
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	_ = writeErrorAfter(w, status, msg, retryAfter, nil)
}

// writeErrorAfter is writeError that, when wait is not nil, sends the
// headers first and calls wait before the body; it returns wait's error.
func writeErrorAfter(w http.ResponseWriter, status int, msg, retryAfter string, wait func() error) error {
	if msg == "" {
		msg = http.StatusText(status)
	}
	typ := "invalid_request_error"
	var code any
	switch {
	case status == http.StatusUnauthorized:
		typ, code = "authentication_error", "invalid_api_key"
	case status == http.StatusNotFound:
		code = "not_found"
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	body := map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code},
	}
	if wait == nil {
		writeJSON(w, status, body)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := http.NewResponseController(w).Flush(); err != nil {
		return errAborted
	}
	if err := wait(); err != nil {
		return err
	}
	_ = json.NewEncoder(w).Encode(body)
	return nil
}
