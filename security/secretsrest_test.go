package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/store"
)

// Issue #20, item 3: a secret stays an alias at rest. The model writes
// §§secret(NAME) where it needs a value; the memory tools and
// behaviour_adjustment keep the alias, so the store never holds the value,
// and every face that serves stored memories (zero memory ls|search|export,
// MCP zero://memories, LSP zero/memories, ACP /memory) masks a value that
// got into the store some other way.

const (
	deployValue = "dpl-4f9a2c7e1b8d3605"
	deployCore  = "4f9a2c7e1b8d" // a piece of the value: no piece may show
	deployAlias = "§§secret(DEPLOY_TOKEN)"
)

// secretBox is a box whose user's secrets.env holds DEPLOY_TOKEN and whose
// store is a file the test can read.
func secretBox(t *testing.T, replies ...llmtest.Reply) (b *box, extra []string, db string) {
	t.Helper()
	b = newBox(t, replies...)
	write(t, filepath.Join(b.home, ".config", "zero", "secrets.env"), "# the deploy API's token\nDEPLOY_TOKEN="+deployValue+"\n", 0o600)
	db = filepath.Join(b.home, "store", "zero.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	return b, []string{"ZERO_STORE=" + db, "ZERO_APPROVAL=auto"}, db
}

// TestSecretsStayAliasesAtRest: the model saves a memory and adjusts its
// behaviour with §§secret(DEPLOY_TOKEN) in the arguments; the store keeps
// the alias (its file bytes hold no value), and no face shows the value.
func TestSecretsStayAliasesAtRest(t *testing.T) {
	t.Parallel()
	b, extra, db := secretBox(t,
		tool("memory_save", `{"text": "The deploy token is `+deployAlias+`.", "area": "main", "token": "`+deployAlias+`"}`),
		tool("behaviour_adjustment", `{"adjustments": "Always deploy with `+deployAlias+`."}`),
		// The utility model merging the rules (it got the alias, see below).
		llmtest.Reply{Match: "receives a markdown ruleset", Content: "## Deploying\n* Always deploy with " + deployAlias + "."},
		answer("saved"),
	)
	out, errOut, err := b.run(extra, "run", "--json", "--workspace", b.ws, "remember how to deploy")
	if err != nil {
		t.Fatalf("zero run: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "Memory saved with id") {
		t.Fatalf("memory_save did not save:\n%s", out)
	}
	var merge string
	for _, r := range b.model.Requests() {
		if bytes.Contains(r.Body, []byte("receives a markdown ruleset")) {
			merge = string(r.Body)
		}
	}
	if !strings.Contains(merge, "Always deploy with "+deployAlias) {
		t.Errorf("the utility model was not asked to merge the alias:\n%.2000s", merge)
	}

	shown := faces(t, b, extra, "deploy token")
	for face, text := range shown {
		if strings.Contains(text, deployCore) {
			t.Errorf("%s shows the secret's value:\n%s", face, text)
		}
		if !strings.Contains(text, "The deploy token is "+deployAlias) {
			t.Errorf("%s does not show the memory with its alias:\n%s", face, text)
		}
	}

	// Every process has ended: the file's bytes, its WAL's too, hold no value.
	for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
		raw, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(deployCore)) {
			t.Errorf("%s holds the secret's value", filepath.Base(f))
		}
	}
	// What is stored is the alias, in the text, the metadata and the rules.
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.ListMemories(store.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var saved *store.Memory
	for i, m := range ms {
		if m.Meta["source"] == "memory_save" {
			saved = &ms[i]
		}
	}
	if saved == nil {
		t.Fatalf("no memory saved by memory_save in %+v", ms)
	}
	if saved.Text != "The deploy token is "+deployAlias+"." || saved.Meta["token"] != deployAlias {
		t.Errorf("the stored memory is %+v, want the alias in its text and metadata", saved)
	}
	if rules, err := st.Behaviour(saved.Scope); err != nil || !strings.Contains(rules, "Always deploy with "+deployAlias) {
		t.Errorf("the stored behaviour rules are %q (%v), want the alias", rules, err)
	}
}

// TestStoredSecretValuesMasked: memories that hold the value in clear (the
// user saved them; a knowledge file or an older Zero could have) are shown
// with the alias by every face.
func TestStoredSecretValuesMasked(t *testing.T) {
	t.Parallel()
	b, extra, _ := secretBox(t)
	for _, args := range [][]string{
		{"memory", "save", "--user", "The deploy token is " + deployValue + "."},
		{"memory", "save", "--area", "solutions", "The deploy token is " + deployValue + " (workspace)."},
	} {
		if out, errOut, err := b.run(extra, args...); err != nil {
			t.Fatalf("zero %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
	}
	for face, text := range faces(t, b, extra, "deploy token") {
		if strings.Contains(text, deployCore) {
			t.Errorf("%s shows the secret's value:\n%s", face, text)
		}
		if !strings.Contains(text, "The deploy token is "+deployAlias) {
			t.Errorf("%s does not show the memory masked:\n%s", face, text)
		}
	}
}

// faces returns what each face serving the store's memories shows of the
// workspace's: the command line's ls, search and export, MCP's resources,
// LSP's zero/memories and ACP's /memory, listed and searched for query.
// Each face's process has ended when it returns.
func faces(t *testing.T, b *box, extra []string, query string) map[string]string {
	t.Helper()
	shown := map[string]string{}
	for _, args := range [][]string{{"memory", "ls"}, {"memory", "search", query}, {"memory", "export"}} {
		out, errOut, err := b.run(extra, args...)
		if err != nil {
			t.Fatalf("zero %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		shown["zero "+strings.Join(args, " ")] = out + errOut
	}

	mcp := b.rpc(extra, false, "mcp")
	mcp.call("initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "security", "version": "1"}})
	mcp.notify("notifications/initialized", map[string]any{})
	for _, uri := range []string{"zero://memories", "zero://memories/search/" + url.PathEscape(query)} {
		raw := mcp.call("resources/read", map[string]any{"uri": uri})
		var res struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) != 1 {
			t.Fatalf("MCP %s: %v %s", uri, err, raw)
		}
		shown["MCP "+uri] = string(raw) + "\n" + memoryTexts(t, "MCP "+uri, res.Contents[0].Text)
	}
	mcp.close()

	lsp := b.rpc(extra, true, "lsp")
	lsp.call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + b.ws, "capabilities": map[string]any{}})
	lsp.notify("initialized", map[string]any{})
	for _, params := range []map[string]any{{}, {"query": query}} {
		raw := lsp.call("zero/memories", params)
		shown[fmt.Sprintf("LSP zero/memories %v", params)] = string(raw) + "\n" + memoryTexts(t, "LSP", string(raw))
	}
	lsp.call("shutdown", nil)
	lsp.notify("exit", nil)
	lsp.close()

	acp := b.acp(extra)
	id := acp.newSession(t, b.ws)
	for _, cmd := range []string{"/memory", "/memory " + query} {
		before := len(acp.client.text())
		acp.prompt(t, id, cmd)
		shown["ACP "+cmd] = acp.client.text()[before:]
	}
	acp.stdin.Close()
	if err := acp.proc.Wait(); err != nil {
		t.Errorf("zero acp: %v\n%s", err, acp.stderr)
	}
	return shown
}

// memoryTexts decodes {"memories": [{"text": ...}]} and returns the texts,
// one a line.
func memoryTexts(t *testing.T, face, doc string) string {
	t.Helper()
	var v struct {
		Memories []struct {
			Text string         `json:"text"`
			Meta map[string]any `json:"meta"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: %v\n%s", face, err, doc)
	}
	var b strings.Builder
	for _, m := range v.Memories {
		fmt.Fprintf(&b, "%s %v\n", m.Text, m.Meta)
	}
	return b.String()
}

// rpcConn speaks JSON-RPC 2.0 to a zero face on its stdin and stdout: one
// JSON object a line (MCP's stdio) or LSP's Content-Length frames.
type rpcConn struct {
	t      *testing.T
	proc   *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *proctest.Buffer
	lsp    bool
	id     int
}

// rpc starts zero with args in the box (its protocol on stdio). The
// context's deadline only stops a face that hangs; nothing waits on it.
func (b *box) rpc(extra []string, lsp bool, args ...string) *rpcConn {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	b.t.Cleanup(cancel)
	c := b.cmd(ctx, extra, args...)
	in, err := c.StdinPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	r := &rpcConn{t: b.t, proc: c, in: in, out: bufio.NewReader(out), stderr: &proctest.Buffer{}, lsp: lsp}
	c.Stderr = r.stderr
	if err := c.Start(); err != nil {
		b.t.Fatal(err)
	}
	return r
}

func (r *rpcConn) send(msg map[string]any) {
	r.t.Helper()
	msg["jsonrpc"] = "2.0"
	raw, err := json.Marshal(msg)
	if err != nil {
		r.t.Fatal(err)
	}
	if r.lsp {
		raw = append([]byte("Content-Length: "+strconv.Itoa(len(raw))+"\r\n\r\n"), raw...)
	} else {
		raw = append(raw, '\n')
	}
	if _, err := r.in.Write(raw); err != nil {
		r.t.Fatalf("write to %s: %v\n%s", r.proc.Args[1], err, r.stderr)
	}
}

func (r *rpcConn) read() ([]byte, error) {
	if !r.lsp {
		return r.out.ReadBytes('\n')
	}
	n := -1
	for {
		l, err := r.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l = strings.TrimSpace(l)
		if l == "" {
			break
		}
		if v, ok := strings.CutPrefix(l, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("a frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r.out, body)
	return body, err
}

func (r *rpcConn) notify(method string, params any) {
	r.t.Helper()
	r.send(map[string]any{"method": method, "params": params})
}

// call sends a request and returns its result, reading past the face's
// notifications (and answering its own requests with null).
func (r *rpcConn) call(method string, params any) json.RawMessage {
	r.t.Helper()
	r.id++
	r.send(map[string]any{"id": r.id, "method": method, "params": params})
	for {
		raw, err := r.read()
		if err != nil {
			r.t.Fatalf("%s: no answer: %v\n%s", method, err, r.stderr)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			r.t.Fatalf("%s: %v: %s", method, err, raw)
		}
		if m.Method != "" {
			if len(m.ID) > 0 {
				r.send(map[string]any{"id": m.ID, "result": nil})
			}
			continue
		}
		if string(m.ID) != strconv.Itoa(r.id) {
			continue
		}
		if len(m.Error) > 0 && string(m.Error) != "null" {
			r.t.Fatalf("%s: %s\n%s", method, m.Error, r.stderr)
		}
		return m.Result
	}
}

// close ends the face (end of input) and waits for its process.
func (r *rpcConn) close() {
	r.t.Helper()
	r.in.Close()
	if err := r.proc.Wait(); err != nil {
		r.t.Errorf("zero %s: %v\n%s", r.proc.Args[1], err, r.stderr)
	}
}
