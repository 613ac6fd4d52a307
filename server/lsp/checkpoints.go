package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/server"
)

// Checkpoints, undo, rewind, fork and compact (see server/checkpoint.go):
//
//   - zero/checkpoints {sessionId} answers {checkpoints: [checkpointInfo]},
//     oldest first;
//   - zero/undo {sessionId, conflicts?} and zero/rewind {sessionId, to?,
//     files?, conversation?, conflicts?} answer the server.RewindReport.
//     Files changed outside the agent since the checkpoint fail them with
//     codeConflict, data {conflicts: [paths], to}, and nothing changed:
//     ask the person, and send again with conflicts "keep" or "overwrite";
//   - zero/fork {sessionId, atRun?} answers {sessionId} of the new
//     session (zero/loadSession follows it);
//   - zero/compact {sessionId, focus?} answers {before, after} (tokens).
//
// undo, rewind and compact follow the session as zero/prompt does, and
// answer after the events they caused (rewound, checkpoint,
// history_compressed) were sent.

// codeConflict is the error of a rewind that met files changed outside
// the agent (a *server.ConflictError); its data is conflictData. It is in
// JSON-RPC's range for a server's own errors.
const codeConflict = -32010

// conflictData is a codeConflict error's data: the files changed outside
// the agent since checkpoint To.
type conflictData struct {
	Conflicts []string `json:"conflicts"`
	To        int      `json:"to"`
}

// checkpointInfo is one checkpoint of zero/checkpoints: what it covers
// (summed over the workspace roots).
type checkpointInfo struct {
	ID      int       `json:"id"`
	Run     int       `json:"run"`
	Kind    string    `json:"kind"` // "run" or "compact"
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	// Skipped names what the snapshots leave out and why ("path: why");
	// SkippedMore counts those not named.
	Skipped     []string `json:"skipped,omitempty"`
	SkippedMore int      `json:"skippedMore,omitempty"`
	Partial     bool     `json:"partial,omitempty"`
	// Error says why the files are not covered (only the conversation is).
	Error string `json:"error,omitempty"`
}

// checkpointsResult is zero/checkpoints' result.
type checkpointsResult struct {
	Checkpoints []checkpointInfo `json:"checkpoints"`
}

func infoOf(cp server.Checkpoint) checkpointInfo {
	ci := checkpointInfo{ID: cp.ID, Run: cp.Run, Kind: cp.Kind, Title: cp.Title, Created: cp.Created, Error: cp.Error}
	for _, f := range cp.Files {
		prefix := ""
		if len(cp.Files) > 1 {
			prefix = filepath.Base(f.Root) + "/"
		}
		ci.Files += f.Files
		ci.Bytes += f.Bytes
		ci.Partial = ci.Partial || f.Partial
		ci.SkippedMore += f.SkippedCount
		for _, sk := range f.Skipped {
			ci.Skipped = append(ci.Skipped, prefix+sk.Path+": "+sk.Why)
		}
	}
	return ci
}

func (c *conn) checkpoints(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p sessionParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	cps := sess.Checkpoints()
	out := checkpointsResult{Checkpoints: make([]checkpointInfo, 0, len(cps))}
	for _, cp := range cps {
		out.Checkpoints = append(out.Checkpoints, infoOf(cp))
	}
	return done(out), nil
}

// undoParams are zero/undo's params.
type undoParams struct {
	SessionID *string `json:"sessionId"`
	Conflicts string  `json:"conflicts,omitempty"` // "", "keep" or "overwrite"
}

// rewindParams are zero/rewind's params. To is a checkpoint's id (absent
// or 0: the newest); Files and Conversation choose what goes back
// (neither: both).
type rewindParams struct {
	SessionID    *string `json:"sessionId"`
	To           int     `json:"to,omitempty"`
	Files        bool    `json:"files,omitempty"`
	Conversation bool    `json:"conversation,omitempty"`
	Conflicts    string  `json:"conflicts,omitempty"`
}

func checkConflicts(v string) error {
	switch v {
	case "", server.ConflictsKeep, server.ConflictsOverwrite:
		return nil
	}
	return invalidParams("conflicts", "%q is not %q or %q", v, server.ConflictsKeep, server.ConflictsOverwrite)
}

func (c *conn) undo(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p undoParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	return c.rewindWith("zero/undo", rewindParams{SessionID: p.SessionID, Conflicts: p.Conflicts})
}

func (c *conn) rewind(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p rewindParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.To < 0 {
		return continuation{}, invalidParams("to", "must not be negative (a checkpoint's id; 0 or absent: the newest)")
	}
	return c.rewindWith("zero/rewind", p)
}

func (c *conn) rewindWith(method string, p rewindParams) (continuation, error) {
	if err := checkConflicts(p.Conflicts); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	t, ok := c.track(sess, nil)
	if !ok {
		return continuation{}, errConnClosing
	}
	o := server.RewindOptions{To: p.To, Files: p.Files, Conversation: p.Conversation, Conflicts: p.Conflicts}
	return later(func(context.Context) (any, error) {
		// Not cancelled by $/cancelRequest: half a restore is worse than
		// none. It ends with the connection.
		rep, err := sess.Rewind(c.ctx, o)
		if err != nil {
			var ce *server.ConflictError
			switch {
			case errors.As(err, &ce):
				return nil, err
			case errors.Is(err, server.ErrNoCheckpoint) && p.To != 0:
				return nil, invalidParams("to", "%v", err)
			}
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if err := c.flushed(t); err != nil {
			return nil, err
		}
		return rep, nil
	}), nil
}

// forkParams are zero/fork's params: the run to cut after (absent or 0:
// every run that ended).
type forkParams struct {
	SessionID *string `json:"sessionId"`
	AtRun     int     `json:"atRun,omitempty"`
}

func (c *conn) fork(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p forkParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.SessionID == nil || *p.SessionID == "" {
		return continuation{}, invalidParams("sessionId", "required")
	}
	if p.AtRun < 0 {
		return continuation{}, invalidParams("atRun", "must not be negative (a run's number; 0 or absent: the last that ended)")
	}
	id := *p.SessionID
	return later(func(ctx context.Context) (any, error) {
		info, err := c.opts.Manager.Fork(ctx, id, p.AtRun)
		switch {
		case errors.Is(err, server.ErrNotFound):
			return nil, fmt.Errorf("sessionId: %w %q", ErrUnknownSession, id)
		case errors.Is(err, server.ErrInvalid):
			return nil, invalidParams("atRun", "%v", err)
		case err != nil:
			return nil, fmt.Errorf("zero/fork: %w", err)
		}
		return newSessionResult{SessionID: info.ID}, nil
	}), nil
}

// compactParams are zero/compact's params: focus guides the summary.
type compactParams struct {
	SessionID *string `json:"sessionId"`
	Focus     string  `json:"focus,omitempty"`
}

func (c *conn) compact(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p compactParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	t, ok := c.track(sess, nil)
	if !ok {
		return continuation{}, errConnClosing
	}
	return later(func(ctx context.Context) (any, error) {
		ch, err := sess.Compact(ctx, p.Focus)
		if err != nil {
			return nil, fmt.Errorf("zero/compact: %w", err)
		}
		if err := c.flushed(t); err != nil {
			return nil, err
		}
		return ch, nil
	}), nil
}

// flushed waits until the events the session logged so far were sent, so
// that an answer comes after the events its request caused.
func (c *conn) flushed(t *tracked) error {
	ch := make(chan struct{})
	t.push(qitem{flushed: ch})
	select {
	case <-ch:
		return nil
	case <-t.ended: // the session closed: no more events to wait for
		return nil
	case <-c.ctx.Done():
		return errConnClosing
	}
}
