package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// A zero_run in flight ends for what ended it, over stdio: the client
// closing stdin is a disconnect, Zero stopping (ServeStdio's ctx) a
// shutdown, and only the client's notifications/cancelled the user's
// cancel. mcp-go cancels the request's context in all three; the cause
// must not be whichever cancel reaches the run first.
func TestRunEndsForItsCause(t *testing.T) {
	for _, tc := range servertest.EndCauses("notifications/cancelled") {
		t.Run(tc.How, func(t *testing.T) {
			// The model holds mid-reply until the run is cancelled: the
			// run cannot end on its own.
			env := newEnv(t, nil, llmtest.Reply{Content: answer("never said"), ChunkSize: 4, HoldAfter: 1})
			serveCtx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			cr, sw := io.Pipe() // server → client
			sr, cw := io.Pipe() // client → server
			f, err := newFace(Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { // owned: awaited below
				err := f.serveStdio(serveCtx, sr, sw)
				sw.Close()
				served <- err
				close(served)
			}()
			// The client has a context of its own: ending the server's
			// must not close the client's end of stdin too.
			clientCtx, closeClient := context.WithCancel(context.Background())
			c := client.NewClient(transport.NewIO(cr, cw, io.NopCloser(strings.NewReader(""))), client.WithLegacyProtocolOnly())
			defer func() {
				cw.Close()
				<-served // a face that never returns after EOF is a hang: go test's -timeout names it
				closeClient()
				c.Close()
			}()
			if err := c.Start(clientCtx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Initialize(clientCtx, mcp.InitializeRequest{Params: mcp.InitializeParams{
				ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "1"},
			}}); err != nil {
				t.Fatalf("initialize: %v", err)
			}

			held := env.Model.Held()
			callCtx, cancelCall := context.WithCancel(clientCtx)
			defer cancelCall()
			go func() { // ends with callCtx at the latest
				_, _ = c.CallTool(callCtx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
					Arguments: map[string]any{"message": "take your time", "workspace": env.Workspace}}})
			}()
			<-held // the run streams the model's reply, and zero_run waits for it
			s := theRunningSession(t, env.Manager)

			switch tc.Cause {
			case loop.ErrDisconnected:
				cw.Close() // the editor goes away
				<-served
			case loop.ErrShutdown:
				shutdown()
				<-served
			default:
				cancelCall() // the client sends notifications/cancelled
			}
			res, err := s.WaitRun(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != loop.StopCancelled || causeOf(res.Err) != tc.Cause {
				t.Errorf("run ended %q with %v, want cancelled with %v", res.StopReason, res.Err, tc.Cause)
			}
			evs, _ := s.Events(0)
			wantErr := loop.CancelReason(tc.Cause)
			if tc.Cause == loop.ErrCancelled {
				wantErr = "" // the user's cancel is what cancelled means
			}
			var ended []server.Event
			for _, e := range evs {
				if e.Type == loop.EventRunEnded {
					ended = append(ended, e)
				}
			}
			if len(ended) != 1 || ended[0].Error != wantErr {
				t.Errorf("run_ended = %+v, want error %q", ended, wantErr)
			}
		})
	}
}

// Over streamable HTTP too: the client dropping the connection of a
// zero_run in flight is a disconnect, Zero stopping (ServeHTTP's ctx) a
// shutdown. net/http and mcp-go end the request's context without a
// cause in both.
func TestHTTPRunEndsForItsCause(t *testing.T) {
	t.Parallel()
	for _, tc := range servertest.EndCauses("")[:2] { // HTTP has no cancel of its own to test here
		t.Run(tc.How, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, nil, llmtest.Reply{Content: answer("never said"), ChunkSize: 4, HoldAfter: 1})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			serveCtx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			served := make(chan error, 1)
			go func() { // owned: awaited below
				served <- ServeHTTP(serveCtx, ln, "secret-token", Options{Manager: env.Manager, Catalog: env.Catalog})
				close(served)
			}()
			defer func() {
				shutdown()
				<-served
			}()
			url := "http://" + ln.Addr().String() + "/mcp"
			session := httpSession(t, url, "secret-token")

			held := env.Model.Held()
			callCtx, drop := context.WithCancel(context.Background())
			defer drop()
			go func() { // ends with callCtx or the server at the latest
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"take your time","workspace":%q}}}`, env.Workspace)
				req, err := http.NewRequestWithContext(callCtx, http.MethodPost, url, strings.NewReader(body))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range session {
					req.Header.Set(k, v)
				}
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			<-held // the run streams the model's reply, and zero_run waits for it
			s := theRunningSession(t, env.Manager)

			if tc.Cause == loop.ErrDisconnected {
				drop() // the client closes the call's connection
			} else {
				shutdown()
				<-served
			}
			res, err := s.WaitRun(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != loop.StopCancelled || causeOf(res.Err) != tc.Cause {
				t.Errorf("run ended %q with %v, want cancelled with %v", res.StopReason, res.Err, tc.Cause)
			}
		})
	}
}

// theRunningSession is the one session of m, which runs.
func theRunningSession(t *testing.T, m *server.Manager) *server.Session {
	t.Helper()
	infos := m.List()
	if len(infos) != 1 || !infos[0].Running {
		t.Fatalf("sessions = %+v, want one running", infos)
	}
	s, err := m.Get(infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// causeOf names the cause of a cancelled run's error: loop.ErrDisconnected,
// loop.ErrShutdown or loop.ErrCancelled (the user's); nil for no cancel.
func causeOf(err error) error {
	for _, c := range []error{loop.ErrDisconnected, loop.ErrShutdown, loop.ErrCancelled} {
		if errors.Is(err, c) {
			return c
		}
	}
	return nil
}
