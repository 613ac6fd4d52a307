package acp

import (
	"context"
	"errors"
	"io"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// A prompt in flight ends its run for what ended it: the editor closing
// the connection is a disconnect, Zero stopping (Serve's ctx, as on
// SIGINT or SIGTERM) a shutdown, and only session/cancel the user's
// cancel. The prompt's watcher must not record its own guess first.
func TestRunEndsForItsCause(t *testing.T) {
	t.Parallel()
	for _, tc := range servertest.EndCauses("session/cancel") {
		t.Run(tc.How, func(t *testing.T) {
			t.Parallel()
			// The model holds mid-reply until the run is cancelled: the
			// run cannot end on its own.
			env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
				{Content: answer("never said"), ChunkSize: 4, HoldAfter: 1},
			}})
			serveCtx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			served := make(chan error, 1)
			go func() { // owned: awaited below
				served <- Serve(serveCtx, inR, outW, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
				outW.Close()
				close(served)
			}()
			h := &harness{env: env, client: newFakeClient(), in: inW}
			h.conn = sdk.NewClientSideConnection(h.client, inW, outR)
			h.conn.SetLogger(discard())
			defer func() {
				inW.Close()
				<-served // a Serve that never returns after EOF is a hang: go test's -timeout names it
			}()
			h.init(t, false)
			s := h.newSession(t)
			sess, err := env.Manager.Get(string(s.SessionId))
			if err != nil {
				t.Fatal(err)
			}

			held := env.Model.Held()
			promptCtx, cancelPrompt := context.WithCancel(context.Background())
			defer cancelPrompt()
			go func() { // ends with the connection or promptCtx
				_, _ = h.prompt(promptCtx, s.SessionId, "take your time")
			}()
			<-held // the run streams the model's reply

			switch tc.Cause {
			case loop.ErrDisconnected:
				inW.Close() // the editor goes away
				<-served
			case loop.ErrShutdown:
				shutdown() // Zero got SIGTERM
				<-served
			default:
				if err := h.conn.Cancel(t.Context(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
					t.Fatalf("session/cancel: %v", err)
				}
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

// When Zero stops, a prompt's watcher may wake (its context is a child of
// Serve's) before Serve does: it must leave the run to Serve's shutdown,
// which records why the connection ended, rather than record a guess of
// its own first. The scheduling TestRunEndsForItsCause leaves to chance
// is fixed here: the watcher runs to its end, then Serve's shutdown
// cancels.
func TestWatcherLeavesTheEndToServe(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: answer("never said"), ChunkSize: 4, HoldAfter: 1},
	}})
	sess, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	held := env.Model.Held()
	n, _, err := sess.Send("take your time")
	if err != nil {
		t.Fatal(err)
	}
	<-held // the run streams the model's reply
	serveCtx, shutdown := context.WithCancel(context.Background())
	base, stop := context.WithCancel(serveCtx)
	defer stop()
	shutdown() // Zero got SIGTERM: the agent's context ends with Serve's
	a := &agent{ctx: base}
	a.watch(context.Background(), make(chan struct{}), &sessState{sess: sess}, 0)
	sess.CancelWith(loop.ErrShutdown) // what Serve's shutdown does next
	res, err := sess.WaitRun(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != loop.StopCancelled || causeOf(res.Err) != loop.ErrShutdown {
		t.Errorf("run ended %q with %v, want cancelled with %v", res.StopReason, res.Err, loop.ErrShutdown)
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
