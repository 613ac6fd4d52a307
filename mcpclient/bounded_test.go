package mcpclient_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zeroagent/zero/mcpclient"
)

// floodSize is what the hostile servers send as one message: far over
// mcpclient.MaxMessage, and more than Zero could hold a few copies of.
const floodSize = 300 << 20

// maxGrowth is what reading a flood may allocate in all (TotalAlloc, which
// unlike a sampled peak is deterministic): a few times MaxMessage.
const maxGrowth = 100 << 20

// init makes this test binary a hostile stdio MCP server when asked to
// (before TestMain, which is another file's): ZERO_HOSTILE_MCP=list
// answers tools/list with one line of floodSize bytes, =call answers
// tools/call of the tool big so, =image too with the data of an image; every start and call is recorded in
// ZERO_HOSTILE_LOG.
func init() {
	if mode := os.Getenv("ZERO_HOSTILE_MCP"); mode != "" {
		serveHostile(mode, os.Getenv("ZERO_HOSTILE_LOG"), os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// rpc is the part of a JSON-RPC message the hostile servers read.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name            string `json:"name"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

func record(log, line string) {
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
}

func serveHostile(mode, log string, in io.Reader, out io.Writer) {
	record(log, "start "+strconv.Itoa(os.Getpid()))
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpc
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // a notification
		}
		if m.Method == "tools/call" {
			record(log, "call "+m.Params.Name)
		}
		huge := mode == "list" && m.Method == "tools/list" || mode != "list" && m.Method == "tools/call" && m.Params.Name == "big"
		if err := answer(out, m, huge, mode == "image", "\n", ""); err != nil {
			return // Zero closed the pipe
		}
	}
}

// answer writes the answer to m, ending it with end; a huge one has a
// string of floodSize bytes in it (streamed: the server never holds it),
// each 64 KiB of which is preceded by sep: a text, or with image the data
// of an image.
func answer(w io.Writer, m rpc, huge, image bool, end, sep string) error {
	var prefix, suffix string
	switch {
	case m.Method == "initialize":
		prefix = `{"protocolVersion":"` + m.Params.ProtocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
	case m.Method == "tools/list" && huge:
		prefix, suffix = `{"tools":[{"name":"big","inputSchema":{"type":"object"},"description":"`, `"}]}`
	case m.Method == "tools/list":
		prefix = `{"tools":[{"name":"big","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`
	case m.Method == "tools/call" && huge && image:
		prefix, suffix = `{"content":[{"type":"image","mimeType":"image/png","data":"`, `"}]}`
	case m.Method == "tools/call" && huge:
		prefix, suffix = `{"content":[{"type":"text","text":"`, `"}]}`
	case m.Method == "tools/call":
		prefix = `{"content":[{"type":"text","text":"small answer"}]}`
	default:
		_, err := io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no such method"}}`+end)
		return err
	}
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+prefix); err != nil {
		return err
	}
	if huge {
		chunk := []byte(sep + strings.Repeat("a", 64<<10))
		for range floodSize / (64 << 10) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, suffix+"}"+end)
	return err
}

func hostileServer(t *testing.T, mode string) (mcpclient.Server, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "log")
	return mcpclient.Server{Name: "hostile", Command: exe, Env: map[string]string{"ZERO_HOSTILE_MCP": mode, "ZERO_HOSTILE_LOG": log}}, log
}

// count is how many lines of the log start with what.
func count(log, what string) int {
	b, _ := os.ReadFile(log)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, what) {
			n++
		}
	}
	return n
}

// floodedCall lists p's tools, then calls the tool "big" of the server
// "hostile", whose answer floods: the call must fail with
// ErrMessageTooLarge, naming the limit, within maxGrowth of allocations.
func floodedCall(t *testing.T, p *mcpclient.Pool) error {
	t.Helper()
	if _, errs := p.List(ctx(t)); len(errs) > 0 {
		t.Fatal(errs)
	}
	var err error
	checkGrowth(t, allocated(func() { _, err = p.Call(ctx(t), "hostile", "big", nil) }))
	if !errors.Is(err, mcpclient.ErrMessageTooLarge) || !strings.Contains(err.Error(), "exceeded 16 MiB") {
		t.Fatalf("the flooded call: %v", err)
	}
	return err
}

// allocated is how many bytes f allocated (in this process, all of it).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func checkGrowth(t *testing.T, n uint64) {
	t.Helper()
	t.Logf("allocated %d MiB reading a %d MiB message", n>>20, floodSize>>20)
	if n > maxGrowth {
		t.Errorf("reading the flood allocated %d MiB", n>>20)
	}
}

// servers are the pids of the servers the log says started; goneAll
// checks that none of them still runs, not even as a zombie.
func goneAll(t *testing.T, log string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	b, _ := os.ReadFile(log)
	for _, l := range strings.Split(string(b), "\n") {
		if pid, ok := strings.CutPrefix(l, "start "); ok {
			if _, err := os.Stat("/proc/" + pid); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the server %s still runs, or was not waited for", pid)
			}
		}
	}
}

// TestFloodedToolsList: a stdio server whose tools/list answer is one
// 300 MiB line fails to start with an error naming the limit, at about
// MaxMessage of memory, and its process is ended and waited for.
func TestFloodedToolsList(t *testing.T) {
	srv, log := hostileServer(t, "list")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	var tools []mcpclient.Tool
	var errs []error
	checkGrowth(t, allocated(func() { tools, errs = p.List(ctx(t)) }))
	if len(tools) != 0 || len(errs) != 1 || !errors.Is(errs[0], mcpclient.ErrMessageTooLarge) || !strings.Contains(errs[0].Error(), "exceeded 16 MiB") {
		t.Fatalf("tools %v, errors %v", tools, errs)
	}
	t.Log(errs[0])
	goneAll(t, log)
}

// TestFloodedToolCall: a stdio tool whose answer is one 300 MiB line fails
// with an error naming the limit, at about MaxMessage of memory, and is
// not called again (the answer would be the same, and the tool would run
// twice); the server is ended and started again for the next call.
func TestFloodedToolCall(t *testing.T) {
	srv, log := hostileServer(t, "call")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	err := floodedCall(t, p)
	t.Log(err)
	if n := count(log, "call big"); n != 1 {
		t.Errorf("the flooded tool was called %d times", n)
	}
	res, err := p.Call(ctx(t), "hostile", "small", nil)
	if err != nil || res.Text != "small answer" {
		t.Fatalf("the next call: %+v, %v", res, err)
	}
	if n := count(log, "start "); n != 2 {
		t.Errorf("%d starts; the flooding server should have been started again once", n)
	}
	p.Close()
	goneAll(t, log)
}

// hostileHTTP is a streamable HTTP MCP server on 127.0.0.1 whose answer to
// tools/call of big is floodSize bytes: a JSON body, or one SSE event
// (sse), or one SSE event of many data lines (lines); calls counts the
// tools/call requests.
func hostileHTTP(t *testing.T, mode string, calls *atomic.Int32) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m rpc
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method == "tools/call" {
			calls.Add(1)
		}
		huge := m.Method == "tools/call" && m.Params.Name == "big"
		if mode == "json" {
			w.Header().Set("Content-Type", "application/json")
			_ = answer(w, m, huge, false, "", "")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sep := ""
		if mode == "lines" {
			sep = "\ndata: "
		}
		io.WriteString(w, "event: message\ndata: ")
		_ = answer(w, m, huge, false, "\n\n", sep)
	}))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s.URL
}

// TestFloodedHTTP: over streamable HTTP, a 300 MiB answer to tools/call
// (a JSON body, one SSE event, or an SSE event of many lines) fails with
// an error naming the limit, at about MaxMessage of memory, and is not
// called again; the next call works.
func TestFloodedHTTP(t *testing.T) {
	for _, mode := range []string{"json", "sse", "lines"} {
		t.Run(mode, func(t *testing.T) {
			var calls atomic.Int32
			url := hostileHTTP(t, mode, &calls)
			p, _ := mcpclient.NewPool([]mcpclient.Server{{Name: "hostile", URL: url}}, mcpclient.Options{})
			defer p.Close()
			floodedCall(t, p)
			if n := calls.Load(); n != 1 {
				t.Errorf("the flooded tool was called %d times", n)
			}
			if res, err := p.Call(ctx(t), "hostile", "small", nil); err != nil || res.Text != "small answer" {
				t.Errorf("the next call: %+v, %v", res, err)
			}
		})
	}
}
