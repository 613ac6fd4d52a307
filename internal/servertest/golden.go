package servertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// Golden conversations: a face's protocol, recorded. Each testdata file is
// a txtar archive in the shape of go-sdk's conformance tests:
//
//	policy: ask        (the comment: options, one "key: value" a line)
//	-- model --        the scripted model's replies, one llmtest.Reply (JSON) a line
//	-- client --       the client's messages, one JSON-RPC message a line
//	-- server --       the server's messages, in order, normalised
//
// The client's messages are sent in order; a request waits for its
// response before the next line goes, and a line without "method" is the
// client's answer to the server's oldest unanswered request (its id is
// filled in). The line {"$await":"idle"} waits until no session runs. In
// the client's lines $WORKSPACE is the test's workspace and
// $SESSION, $SESSION2, … the sessions in the order the manager made them;
// in the server's, those values become those names again and every
// RFC 3339 time becomes $TIME and every prompt_tokens and total_tokens
// count $N (in a text too, and the count of a usage line's "N tokens in"). Run the face's tests with -update to
// rewrite the server section from what the face says now.
//
// Options (the archive's comment):
//
//	policy: ask    commands need approval (AskCommands); default: none do

// idleLine, as a client line, sends nothing: it waits until no session
// runs (a run's end is logged, and answered, just before the run returns).
const idleLine = `{"$await":"idle"}`

// Framing is how a face's messages are delimited on its stream.
type Framing int

// The framings.
const (
	Lines         Framing = iota // one JSON message a line (ACP, MCP)
	ContentLength                // LSP's Content-Length headers
)

// Face describes a face to RunGolden.
type Face struct {
	Framing Framing
	// Serve serves the face on in/out over env's manager until in ends.
	Serve func(ctx context.Context, env *Env, in io.Reader, out io.Writer) error
	// Join, when set, reports whether next continues prev (two pieces of
	// one stream the face may send as one or as several, depending on how
	// fast its client reads) and returns them joined: the golden file holds
	// the joined message, so it does not depend on timing.
	Join func(prev, next map[string]any) (map[string]any, bool)
	// Async, when set, reports whether the face sends m apart from its
	// responses, on a path of its own (mcp-go's notifications), so that
	// their order among the responses is not fixed: such messages are
	// listed last, in their own order, after a {"$apart": …} line.
	Async func(m map[string]any) bool
}

// RunGolden runs each archive matching pattern as a subtest.
func RunGolden(t *testing.T, pattern string, face Face, update bool) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files match %s (%v)", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file, face, update)
		})
	}
}

type goldenCase struct {
	arc     *txtar.Archive
	policy  string
	replies []llmtest.Reply
	client  []json.RawMessage
}

func readGolden(t *testing.T, file string) goldenCase {
	t.Helper()
	arc, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gc := goldenCase{arc: arc}
	for _, line := range strings.Split(string(arc.Comment), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "policy" {
			gc.policy = strings.TrimSpace(v)
		}
	}
	for _, f := range arc.Files {
		lines := nonEmptyLines(f.Data)
		switch f.Name {
		case "model":
			for _, l := range lines {
				var r llmtest.Reply
				dec := json.NewDecoder(strings.NewReader(l))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("%s: model: %v: %s", file, err, l)
				}
				gc.replies = append(gc.replies, r)
			}
		case "client":
			for _, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Fatalf("%s: client: not JSON: %s", file, l)
				}
				gc.client = append(gc.client, json.RawMessage(l))
			}
		case "server":
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	return gc
}

func nonEmptyLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return out
}

func runGolden(t *testing.T, file string, face Face, update bool) {
	gc := readGolden(t, file)
	opts := Options{Replies: gc.replies}
	switch gc.policy {
	case "", "auto":
	case "ask":
		opts.Policy = AskCommands()
	default:
		t.Fatalf("%s: unknown policy %q", file, gc.policy)
	}
	env := New(t, opts)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cin, sin := io.Pipe()   // client → server
	sout, cout := io.Pipe() // server → client
	served := make(chan error, 1)
	go func() {
		err := face.Serve(ctx, env, cin, cout)
		cout.Close()
		served <- err
	}()
	msgs := make(chan map[string]any, 64)
	readErr := make(chan error, 1)
	go func() {
		defer close(msgs)
		r := bufio.NewReader(sout)
		for {
			b, err := readFrame(r, face.Framing)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
					readErr <- err
				}
				return
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				readErr <- fmt.Errorf("the server sent no JSON: %s", b)
				return
			}
			msgs <- m
		}
	}()

	n := newNormaliser(env)
	var got []map[string]any
	var asked []any                     // ids of the server's requests not yet answered
	guard := time.NewTimer(time.Minute) // a guard against a hang, never reached when things work
	defer guard.Stop()
	// next takes the server's next message; false when it ended.
	next := func() (map[string]any, bool) {
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil, false
			}
			n.learn()
			if _, isReq := m["method"]; isReq && m["id"] != nil {
				asked = append(asked, m["id"])
			}
			got = append(got, m)
			return m, true
		case <-guard.C:
			t.Fatalf("%s: no message from the server for a minute; so far:\n%s", file, n.render(got, face))
			return nil, false
		}
	}
	i := 0 // the next client line
	// send sends client line i; an answer goes to the server's oldest
	// unanswered request, which must have come.
	send := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(n.expand(string(gc.client[i]))), &m); err != nil {
			t.Fatalf("%s: client line %d: %v", file, i+1, err)
		}
		if _, ok := m["method"]; !ok {
			m["id"], asked = asked[0], asked[1:]
		}
		b, _ := json.Marshal(m)
		if err := writeFrame(sin, face.Framing, b); err != nil {
			t.Fatalf("%s: client line %d: %v", file, i+1, err)
		}
		i++
		return m
	}
	isAnswer := func(j int) bool {
		if string(gc.client[j]) == idleLine {
			return false
		}
		var m map[string]any
		_ = json.Unmarshal(gc.client[j], &m)
		_, ok := m["method"]
		return !ok
	}
	// answer sends the client's answers to the requests the server made.
	answer := func() {
		for len(asked) > 0 && i < len(gc.client) && isAnswer(i) {
			send()
		}
	}
	for i < len(gc.client) {
		if string(gc.client[i]) == idleLine {
			i++
			for _, in := range env.Manager.List() {
				if s, err := env.Manager.Get(in.ID); err == nil {
					if err := s.WaitIdle(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			continue
		}
		if isAnswer(i) {
			for len(asked) == 0 {
				if _, ok := next(); !ok {
					t.Fatalf("%s: client line %d answers a request the server never sent", file, i+1)
				}
			}
			send()
			continue
		}
		line := i + 1
		m := send()
		id, isReq := m["id"]
		if !isReq {
			continue
		}
		for {
			r, ok := next()
			if !ok {
				t.Fatalf("%s: the server ended before answering client line %d", file, line)
			}
			if _, hasMethod := r["method"]; !hasMethod && fmt.Sprint(r["id"]) == fmt.Sprint(id) {
				break
			}
			answer() // the server asks while the request is in flight
		}
	}
	sin.Close() // the client leaves
	for {
		if _, ok := next(); !ok {
			break
		}
	}
	select {
	case err := <-readErr:
		t.Fatal(err)
	default:
	}
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("serve: %v", err)
	}

	out := n.render(got, face)
	if update {
		for i := range gc.arc.Files {
			if gc.arc.Files[i].Name == "server" {
				gc.arc.Files = slices.Delete(gc.arc.Files, i, i+1)
				break
			}
		}
		gc.arc.Files = append(gc.arc.Files, txtar.File{Name: "server", Data: []byte(out)})
		if err := os.WriteFile(file, txtar.Format(gc.arc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var want string
	for _, f := range gc.arc.Files {
		if f.Name == "server" {
			want = string(f.Data)
		}
	}
	if out != want {
		t.Errorf("%s: the server's messages differ from the golden file (go test -run Golden -update rewrites it)\n%s", file, lineDiff(want, out))
	}
}

// normaliser turns run-specific values into names and back.
type normaliser struct {
	env      *Env
	sessions []string
}

func newNormaliser(env *Env) *normaliser { return &normaliser{env: env} }

// learn notes the sessions the manager made so far, oldest first.
func (n *normaliser) learn() {
	infos := n.env.Manager.List()
	slices.SortStableFunc(infos, func(a, b server.Info) int { return a.Created.Compare(b.Created) })
	for _, in := range infos {
		if !slices.Contains(n.sessions, in.ID) {
			n.sessions = append(n.sessions, in.ID)
		}
	}
}

func (n *normaliser) name(i int) string {
	if i == 0 {
		return "$SESSION"
	}
	return "$SESSION" + strconv.Itoa(i+1)
}

// expand puts the run's values into a client line.
func (n *normaliser) expand(s string) string {
	n.learn()
	s = strings.ReplaceAll(s, "$WORKSPACE", n.env.Workspace)
	for i := len(n.sessions) - 1; i >= 0; i-- { // $SESSION10 before $SESSION1
		s = strings.ReplaceAll(s, n.name(i), n.sessions[i])
	}
	return s
}

var (
	timeRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
	// tokensRE: token counts the server estimates from a prompt that holds
	// the workspace's path, whose length differs from run to run.
	// (ACP's inputTokens and totalTokens are the same counts.)
	tokensRE = regexp.MustCompile(`"(prompt_tokens|total_tokens|inputTokens|totalTokens)":\d+`)
	// textTokensRE and tokensInRE: the same counts in a text, as JSON
	// (MCP's content) and as a face's usage line ("9.0k tokens in").
	textTokensRE = regexp.MustCompile(`\\"(prompt|total)_tokens\\": \d+`)
	tokensInRE   = regexp.MustCompile(`\d+(\.\d+)?[kM]? tokens in`)
)

// render is the server section: one message a line, joined and named.
func (n *normaliser) render(msgs []map[string]any, face Face) string {
	var kept, apart []map[string]any
	for _, m := range msgs {
		if face.Async != nil && face.Async(m) {
			apart = append(apart, m)
			continue
		}
		if k := len(kept); k > 0 && face.Join != nil {
			if j, ok := face.Join(kept[k-1], m); ok {
				kept[k-1] = j
				continue
			}
		}
		kept = append(kept, m)
	}
	if len(apart) > 0 {
		kept = append(kept, map[string]any{asyncMark: "the messages below are sent apart from the responses: their order among them is not fixed"})
		kept = append(kept, apart...)
	}
	var b strings.Builder
	for _, m := range kept {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(m)
		s := strings.TrimSpace(buf.String())
		s = strings.ReplaceAll(s, n.env.Workspace, "$WORKSPACE")
		for i, id := range n.sessions {
			s = strings.ReplaceAll(s, id, n.name(i))
		}
		s = timeRE.ReplaceAllString(s, `"$$TIME"`)
		s = tokensRE.ReplaceAllString(s, `"${1}":"$$N"`)
		s = textTokensRE.ReplaceAllString(s, `\"${1}_tokens\": $$N`)
		s = tokensInRE.ReplaceAllString(s, `$$N tokens in`)
		b.WriteString(s + "\n")
	}
	return b.String()
}

const asyncMark = "$apart"

func readFrame(r *bufio.Reader, f Framing) ([]byte, error) {
	if f == Lines {
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				return line, nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	size := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			if size, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, err
			}
		}
	}
	if size < 0 {
		return nil, errors.New("a message without Content-Length")
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}

func writeFrame(w io.Writer, f Framing, b []byte) error {
	if f == Lines {
		_, err := w.Write(append(b, '\n'))
		return err
	}
	_, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

// lineDiff shows the lines of want and got from the first that differs.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d of the server section\n", i+1)
	for j := i; j < len(w) && j < i+5; j++ {
		fmt.Fprintf(&b, "- %s\n", w[j])
	}
	for j := i; j < len(g) && j < i+5; j++ {
		fmt.Fprintf(&b, "+ %s\n", g[j])
	}
	return b.String()
}
