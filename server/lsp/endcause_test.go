package lsp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// A zero/prompt in flight ends its run for what ended it: the editor
// closing the connection is a disconnect, Zero stopping (Serve's ctx, as
// on SIGINT or SIGTERM) a shutdown, and only the client's zero/cancel the
// user's cancel.
func TestRunEndsForItsCause(t *testing.T) {
	t.Parallel()
	for _, tc := range servertest.EndCauses("zero/cancel") {
		t.Run(tc.How, func(t *testing.T) {
			t.Parallel()
			// The model holds mid-reply until the run is cancelled: the
			// run cannot end on its own.
			env := newEnv(t, nil, llmtest.Reply{Content: answer("never said"), ChunkSize: 4, HoldAfter: 1})
			a, b := net.Pipe()
			serveCtx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			served := make(chan error, 1)
			go func() { // owned: awaited below
				served <- Serve(serveCtx, a, a, Options{Manager: env.Manager, Logger: slog.New(slog.DiscardHandler)})
				close(served)
			}()
			c := &client{t: t, raw: b, changed: make(chan struct{})}
			c.rc = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), c)
			defer func() {
				_ = c.rc.Close()
				<-served // a Serve that never returns after EOF is a hang: go test's -timeout names it
			}()
			c.initialize(env.Workspace)
			id := c.newSession()
			sess, err := env.Manager.Get(id)
			if err != nil {
				t.Fatal(err)
			}

			held := env.Model.Held()
			c.promptAsync("slow", map[string]any{"sessionId": id, "message": "take your time"})
			<-held // the run streams the model's reply

			switch tc.Cause {
			case loop.ErrDisconnected:
				_ = c.rc.Close() // the editor goes away
				<-served
			case loop.ErrShutdown:
				shutdown() // Zero got SIGTERM
				<-served
			default:
				c.call("zero/cancel", map[string]any{"sessionId": id}, nil)
			}
			res, err := sess.WaitRun(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != loop.StopCancelled || causeOf(res.Err) != tc.Cause {
				t.Errorf("run ended %q with %v, want cancelled with %v", res.StopReason, res.Err, tc.Cause)
			}
			wantErr := loop.CancelReason(tc.Cause)
			if tc.Cause == loop.ErrCancelled {
				wantErr = "" // the user's cancel is what cancelled means
			}
			evs, _ := sess.Events(0)
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
