package security

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/proctest"
)

// hostileMCPSource is a stdio MCP server that floods: with the argument
// list, its tools/list answer is one line of 300 MiB; with call, its
// answer to tools/call of the tool big is (with none, neither is). It streams the line (it never
// holds it) and records each start (with its pid) and call in the file
// named by its second argument.
const hostileMCPSource = `package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	mode, log := os.Args[1], os.Args[2]
	record := func(s string) {
		f, _ := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, s)
		f.Close()
	}
	record(fmt.Sprint("start ", os.Getpid()))
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name, ProtocolVersion string }
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // a notification
		}
		var prefix, suffix string
		huge := false
		switch m.Method {
		case "initialize":
			prefix = "{\"protocolVersion\":\"" + m.Params.ProtocolVersion + "\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}"
		case "tools/list":
			prefix, suffix = "{\"tools\":[{\"name\":\"big\",\"inputSchema\":{\"type\":\"object\"},\"description\":\"", "\"}]}"
			huge = mode == "list"
		case "tools/call":
			record("call " + m.Params.Name)
			prefix, suffix = "{\"content\":[{\"type\":\"text\",\"text\":\"", "\"}]}"
			huge = mode == "call"
		default:
			fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"no such method\"}}\n", m.ID)
			continue
		}
		fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s", m.ID, prefix)
		if huge {
			chunk := []byte(strings.Repeat("a", 64<<10))
			for range 300 << 20 / len(chunk) {
				if _, err := os.Stdout.Write(chunk); err != nil {
					return // zero closed the pipe
				}
			}
		}
		if _, err := fmt.Printf("%s}\n", suffix); err != nil {
			return
		}
	}
}
`

// buildHostileMCP builds the flooding server into dir.
func buildHostileMCP(t *testing.T, dir string) string {
	t.Helper()
	write(t, filepath.Join(dir, "main.go"), hostileMCPSource, 0o644)
	c := exec.Command("go", "build", "-o", "hostile-mcp", "main.go")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go build the hostile MCP server: %v\n%s", err, out)
	}
	return filepath.Join(dir, "hostile-mcp")
}

// TestMCPFlood: a configured stdio MCP server whose tools/list answer, or
// whose answer to a tool call, is one line of 300 MiB is refused as it
// arrives: zero's memory stays far under the flood's size (it took 1.5 GB
// and 1.9 GB), the run ends normally, the error naming the limit reaches
// the warnings (tools/list) or the model (the call, which is not made
// twice), the server does not outlive zero, and nothing hangs.
func TestMCPFlood(t *testing.T) {
	server := buildHostileMCP(t, t.TempDir())
	// none floods nothing: zero's memory with a server that behaves.
	for _, mode := range []string{"none", "list", "call"} {
		t.Run(mode, func(t *testing.T) {
			b := newBox(t, tool("hostile.big", `{}`), answer("done"))
			log := filepath.Join(t.TempDir(), "log")
			b.userConfig("mcp_servers:\n  hostile:\n    command: " + server + "\n    args: [" + mode + ", " + log + "]\n")
			ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
			defer cancel()
			c := b.cmd(ctx, []string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "use the hostile server")
			var out, stderr bytes.Buffer
			c.Stdout, c.Stderr = &out, &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			peak := peakRSS(t, c.Process.Pid)
			if err := c.Wait(); err != nil {
				t.Fatalf("zero run: %v\n%.3000s\n%.3000s", err, out.String(), stderr.String())
			}
			peak(300<<20, "a 300 MiB MCP answer")
			const refused = "exceeded 16 MiB and was refused"
			var toModel bool
			for _, r := range b.model.Requests() {
				toModel = toModel || bytes.Contains(r.Body, []byte(refused))
			}
			data, _ := os.ReadFile(log)
			calls := strings.Count(string(data), "call big")
			if !strings.Contains(string(data), "start ") {
				t.Error("the server never started")
			}
			for _, l := range strings.Split(string(data), "\n") {
				if pid, ok := strings.CutPrefix(l, "start "); ok {
					if n, _ := strconv.Atoi(pid); n == 0 || !proctest.Gone(n) {
						t.Errorf("the server %q outlived zero", pid)
					}
				}
			}
			switch mode {
			case "none":
				if toModel || calls != 1 || !strings.Contains(out.String(), `"tool":"hostile.big","status":"completed"`) {
					t.Errorf("the server that behaves: %d calls:\n%.3000s", calls, out.String())
				}
			case "list":
				if !strings.Contains(out.String(), `"warning"`) || !strings.Contains(out.String(), refused) {
					t.Errorf("no warning names the limit:\n%.3000s", out.String())
				}
				if calls != 0 {
					t.Errorf("a tool of a server that never listed was called %d times", calls)
				}
			case "call":
				if !toModel {
					t.Errorf("the model was not told the answer was refused:\n%.3000s", out.String())
				}
				if calls != 1 {
					t.Errorf("the flooding tool was called %d times", calls)
				}
			}
			if !strings.Contains(out.String(), "done") {
				t.Errorf("the run did not end with the answer:\n%.3000s", out.String())
			}
		})
	}
}
