package acp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/vision"
)

// item is something the face itself says in a session's stream (a message,
// a ready update, a replay of the log) at its place among the engine's
// events: after the event with Seq after.
type item struct {
	idx     uint64
	after   int64
	replay  bool
	message string
	update  *sdk.SessionUpdate
}

// sessState is one session as this connection sees it: a drainer goroutine
// follows the session's events (server.Follower) and sends them, with the
// face's own items in their place, to the client in order, so the run
// never waits on the pipe.
type sessState struct {
	a    *agent
	sess *server.Session
	id   string
	gate <-chan struct{}  // nil, or closed once the client knows the session
	fol  *server.Follower // owned by the drainer

	mu      sync.Mutex
	items   []item
	next    uint64        // index of the last item enqueued
	sent    uint64        // index of the last item sent
	sentSeq int64         // Seq of the last event sent
	sentCh  chan struct{} // closed (and replaced) when sent or sentSeq grows
	wake    chan struct{} // capacity 1: items are waiting
	stopCh  chan struct{} // closed by detach
	stopped bool
	gen     uint64 // prompts received
	genCh   chan struct{}
	asks    map[string]context.CancelFunc // approval or question id → its request to the client
}

// attach returns the connection's state for sess, following it from now on
// the first time.
func (a *agent) attach(sess *server.Session, gate <-chan struct{}) (*sessState, error) {
	st, _, err := a.attachWith(sess, gate, false)
	return st, err
}

// attachReplay attaches and queues a replay of the whole log ahead of any
// newer event.
func (a *agent) attachReplay(sess *server.Session) (*sessState, error) {
	st, _, err := a.attachWith(sess, nil, true)
	return st, err
}

func (a *agent) attachWith(sess *server.Session, gate <-chan struct{}, replay bool) (*sessState, bool, error) {
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		return nil, false, sdk.NewInternalError(map[string]any{"error": "the connection is closing"})
	}
	st := a.sessions[sess.ID()]
	fresh := st == nil
	if fresh {
		// The follower starts at the log's cursor; a replay item at the
		// same place sends what came before.
		cur := sess.Cursor()
		st = &sessState{a: a, sess: sess, id: sess.ID(), gate: gate, fol: sess.Follow(cur), sentSeq: cur,
			sentCh: make(chan struct{}), wake: make(chan struct{}, 1), stopCh: make(chan struct{}),
			genCh: make(chan struct{}), asks: map[string]context.CancelFunc{}}
		if replay { // at the follower's start: nothing is sent twice
			st.next = 1
			st.items = []item{{idx: 1, after: cur, replay: true}}
			st.wake <- struct{}{}
		}
		a.sessions[st.id] = st
	}
	a.mu.Unlock()
	if replay && !fresh {
		st.enqueue(item{replay: true})
	}
	if fresh && !a.spawn(st.drain) {
		st.detach()
		return nil, false, sdk.NewInternalError(map[string]any{"error": "the connection is closing"})
	}
	return st, fresh, nil
}

// enqueue puts it after the events logged so far and returns its index for
// waitSent.
func (st *sessState) enqueue(it item) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stopped {
		return st.next
	}
	st.next++
	it.idx = st.next
	it.after = st.sess.Cursor()
	st.items = append(st.items, it)
	select {
	case st.wake <- struct{}{}:
	default:
	}
	return st.next
}

// nextPrompt counts a prompt of the session and wakes the watchers.
func (st *sessState) nextPrompt() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
	close(st.genCh)
	st.genCh = make(chan struct{})
	return st.gen
}

func (st *sessState) promptGen() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.gen
}

func (st *sessState) promptSignal() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.genCh
}

// waitSent waits until the item with index idx was written to the client.
func (st *sessState) waitSent(ctx context.Context, idx uint64) error {
	return st.waitFor(ctx, func() bool { return st.sent >= idx })
}

// waitEvents waits until the events up to Seq seq were written to the
// client.
func (st *sessState) waitEvents(ctx context.Context, seq int64) error {
	return st.waitFor(ctx, func() bool { return st.sentSeq >= seq })
}

func (st *sessState) waitFor(ctx context.Context, done func() bool) error {
	for {
		st.mu.Lock()
		ok, ch := done(), st.sentCh
		st.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-st.stopCh:
			return errDetached
		case <-st.a.ctx.Done():
			return st.a.ctx.Err()
		}
	}
}

var errDetached = errors.New("session detached from the connection")

// detach stops the drainer; the permission requests it started are
// withdrawn.
func (st *sessState) detach() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stopped {
		return
	}
	st.stopped = true
	close(st.stopCh)
	for id, cancel := range st.asks {
		cancel()
		delete(st.asks, id)
	}
}

// drain sends the session's events and the face's items to the client in
// order; it ends with the connection, when the session is detached, or
// when the session is closed and everything was sent.
func (st *sessState) drain() {
	ctx := st.a.ctx
	if st.gate != nil {
		select {
		case <-st.gate:
		case <-st.stopCh:
			return
		case <-ctx.Done():
			return
		}
	}
	m := newMapper(st.sess.Spec().Roots)
	m.image = st.sess.Image
	m.options = func() []sdk.SessionConfigOption { return st.a.configOptions(st.sess) }
	send := func(u sdk.SessionUpdate) {
		if err := st.a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(st.id), Update: u}); err != nil {
			st.a.opts.Logger.Debug("session/update not sent", "session", st.id, "err", err)
		}
	}
	sendItem := func(it item) {
		m.flush(send)
		switch {
		case it.replay:
			m.reset()
			evs, _ := st.sess.Events(0)
			for _, e := range server.Coalesce(evs) {
				if e.Seq > it.after {
					break
				}
				m.event(e, true, send, nil)
			}
		case it.message != "":
			send(sdk.UpdateAgentMessageText(it.message))
		case it.update != nil:
			send(*it.update)
		}
	}
	var pending []item // items placed after the events sent so far
	for {
		select {
		case <-st.wake:
		case <-st.fol.Ready():
		case <-st.stopCh:
			return
		case <-ctx.Done():
			return
		}
		// Events first, then the items: an item placed after the events
		// taken (its request raced this read) waits for the next round.
		b := st.fol.Take()
		st.mu.Lock()
		items := append(pending, st.items...)
		st.items = nil
		st.mu.Unlock()
		if b.Missed > 0 {
			send(sdk.UpdateAgentThoughtText(fmt.Sprintf("\n\n(%d events of this session were dropped before they could be sent)\n\n", b.Missed)))
		}
		var last uint64 // index of the last item sent
		pending = server.Interleave(b.Events, items, func(it item) int64 { return it.after }, st.fol.Cursor(),
			func(e server.Event) { m.event(e, false, send, st) },
			func(it item) { sendItem(it); last = it.idx })
		m.flush(send)
		st.mu.Lock()
		st.sent = max(st.sent, last)
		st.sentSeq = st.fol.Cursor()
		close(st.sentCh)
		st.sentCh = make(chan struct{})
		st.mu.Unlock()
		if b.Closed {
			st.detach()
			return
		}
	}
}

// Permission option ids; the kinds say the same to the client.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject_once"
)

// ask puts an approval request to the client on a goroutine of its own (the
// drainer goes on) and answers the broker with the user's choice.
func (st *sessState) ask(req server.Request, kind sdk.ToolKind) {
	approvals := st.a.opts.Manager.Approvals()
	if approvals == nil {
		return
	}
	st.mu.Lock()
	if st.stopped || st.asks[req.ID] != nil {
		st.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(st.a.ctx)
	st.asks[req.ID] = cancel
	st.mu.Unlock()
	title := req.Title
	if title == "" {
		title = req.Tool
	}
	var raw any
	if len(req.Args) > 0 {
		raw = req.Args
	}
	params := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(st.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(req.Item), Title: &title, Kind: &kind,
			Status: sdk.Ptr(sdk.ToolCallStatusPending), RawInput: raw},
		Options: []sdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow in this session", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	}
	run := func() {
		defer cancel()
		resp, err := st.a.conn.RequestPermission(ctx, params)
		st.mu.Lock()
		delete(st.asks, req.ID)
		st.mu.Unlock()
		if ctx.Err() != nil {
			return // answered elsewhere, run over, or the client left
		}
		var aerr error
		switch {
		case err != nil:
			st.a.opts.Logger.Warn("permission request failed", "session", st.id, "err", err)
			aerr = approvals.Deny(req.ID, "the editor could not ask the user")
		case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowAlways:
			aerr = approvals.Approve(req.ID, true)
		case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowOnce:
			aerr = approvals.Approve(req.ID, false)
		case resp.Outcome.Selected != nil:
			aerr = approvals.Deny(req.ID, "the user refused")
		default:
			aerr = approvals.Deny(req.ID, "the user dismissed the request")
		}
		if aerr != nil {
			st.a.opts.Logger.Debug("approval answer not taken", "session", st.id, "err", aerr)
		}
	}
	if !st.a.spawn(run) {
		cancel()
	}
}

// withdraw cancels the permission request of an approval that was resolved
// some other way (the run ended, another face answered).
func (st *sessState) withdraw(id string) {
	st.mu.Lock()
	cancel := st.asks[id]
	delete(st.asks, id)
	st.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// askPending puts the approvals a session already waits for to the client
// (after load or resume: their events were only replayed).
func (a *agent) askPending(st *sessState) {
	approvals := a.opts.Manager.Approvals()
	if approvals == nil {
		return
	}
	for _, r := range approvals.Pending(st.id) {
		st.ask(r, toolKind(r.Kind))
	}
	a.askPendingQuestions(st)
}

// promptInput makes the user message of a prompt's blocks: text as is,
// resource links inline, embedded text resources appended as context, and
// images (image blocks, embedded image blobs, links to image files in the
// session's workspace) attached, each checked by server.Attach. A block
// Zero cannot take is an error that names it, never dropped quietly.
func promptInput(blocks []sdk.ContentBlock, roots []string) (loop.Input, error) {
	var b, ctx strings.Builder
	var atts []server.Attachment
	add := func(what, name, mime, data string) error {
		if len(atts) == loop.MaxInputImages {
			return fmt.Errorf("%w: more than %d images in one prompt", loop.ErrBadImage, loop.MaxInputImages)
		}
		if len(data) > base64.StdEncoding.EncodedLen(vision.MaxSourceBytes)+4 {
			return fmt.Errorf("%s %s: %w: over %d MiB", what, name, vision.ErrTooLarge, vision.MaxSourceBytes>>20)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return fmt.Errorf("%s %s: its data is not base64: %v", what, name, err)
		}
		atts = append(atts, server.Attachment{Name: name, MIME: mime, Data: raw})
		return nil
	}
	for i, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			l := c.ResourceLink
			fmt.Fprintf(&b, "[@%s](%s)", l.Name, l.Uri)
			if path, ok := strings.CutPrefix(l.Uri, "file://"); ok && isImageLink(l) {
				a, err := server.AttachFile(roots, path)
				if err != nil {
					return loop.Input{}, err
				}
				if len(atts) == loop.MaxInputImages {
					return loop.Input{}, fmt.Errorf("%w: more than %d images in one prompt", loop.ErrBadImage, loop.MaxInputImages)
				}
				a.Name = l.Name
				atts = append(atts, a)
			}
		case c.Resource != nil:
			switch r := c.Resource.Resource; {
			case r.TextResourceContents != nil:
				fmt.Fprintf(&b, "[@%s](%s)", uriName(r.TextResourceContents.Uri), r.TextResourceContents.Uri)
				fmt.Fprintf(&ctx, "\n\n<context uri=%q>\n%s\n</context>", r.TextResourceContents.Uri, r.TextResourceContents.Text)
			case r.BlobResourceContents != nil:
				blob := r.BlobResourceContents
				name := uriName(blob.Uri)
				if blob.MimeType != nil && strings.HasPrefix(*blob.MimeType, "image/") {
					fmt.Fprintf(&b, "[@%s](%s)", name, blob.Uri)
					if err := add("resource", name, *blob.MimeType, blob.Blob); err != nil {
						return loop.Input{}, err
					}
					continue
				}
				fmt.Fprintf(&b, "[@%s](%s) (binary, not included)", name, blob.Uri)
			}
		case c.Image != nil:
			name := fmt.Sprintf("image %d", i+1)
			if c.Image.Uri != nil && *c.Image.Uri != "" {
				name = uriName(*c.Image.Uri)
			}
			if err := add("image", name, c.Image.MimeType, c.Image.Data); err != nil {
				return loop.Input{}, err
			}
		case c.Audio != nil:
			b.WriteString("[an audio clip was attached; zero cannot hear audio]")
		}
	}
	return server.Attach(b.String()+ctx.String(), atts)
}

// isImageLink reports whether a resource link names a picture: by its MIME
// type, else by its file's extension (the bytes decide in the end).
func isImageLink(l *sdk.ContentBlockResourceLink) bool {
	if l.MimeType != nil {
		return strings.HasPrefix(*l.MimeType, "image/")
	}
	switch strings.ToLower(filepath.Ext(l.Uri)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp":
		return true
	}
	return false
}

func uriName(uri string) string {
	return filepath.Base(strings.TrimPrefix(uri, "file://"))
}

// Config option ids.
const (
	configMode    = "mode"
	configProfile = "profile"
	configModel   = "model"
)

func (a *agent) profiles() []server.Choice {
	if a.opts.Catalog == nil {
		return nil
	}
	return a.opts.Catalog.Profiles()
}

func (a *agent) models() []server.Choice {
	if a.opts.Catalog == nil {
		return nil
	}
	return a.opts.Catalog.Models()
}

func (a *agent) offered(list []server.Choice, id string) bool {
	for _, c := range list {
		if c.ID == id {
			return true
		}
	}
	return false
}

// configOptions are the session mode (category "mode", the selector
// editors cycle with a key), the profile and the model selectors, in that
// order of display.
func (a *agent) configOptions(sess *server.Session) []sdk.SessionConfigOption {
	spec := sess.Spec()
	opts := []sdk.SessionConfigOption{selectOption(configMode, "Mode", "Plan mode reads and thinks without changing anything.",
		sdk.Ptr(sdk.SessionConfigOptionCategoryMode), modeChoices(), sess.Mode())}
	if ps := a.profiles(); len(ps) > 0 {
		opts = append(opts, selectOption(configProfile, "Profile", "The agent profile: its prompts and role.",
			nil, ps, spec.Profile))
	}
	if ms := a.models(); len(ms) > 0 {
		opts = append(opts, selectOption(configModel, "Model", "The chat model.",
			sdk.Ptr(sdk.SessionConfigOptionCategoryModel), ms, spec.Model))
	}
	return opts
}

// modeChoices are server.Modes as choices.
func modeChoices() []server.Choice {
	out := make([]server.Choice, len(server.Modes))
	for i, m := range server.Modes {
		out[i] = server.Choice{ID: m.ID, Name: m.Name, Description: m.Description}
	}
	return out
}

// modeState is the session's mode for clients that know ACP's modes and
// not config options (those that know both use the options).
func modeState(sess *server.Session) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(sess.Mode())}
	for _, m := range server.Modes {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.ID), Name: m.Name, Description: sdk.Ptr(m.Description)})
	}
	return st
}

func selectOption(id, name, desc string, cat *sdk.SessionConfigOptionCategory, list []server.Choice, current string) sdk.SessionConfigOption {
	if current == "" {
		current = list[0].ID
	}
	vals := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(list))
	for _, c := range list {
		o := sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(c.ID), Name: c.Name}
		if o.Name == "" {
			o.Name = c.ID
		}
		if c.Description != "" {
			o.Description = sdk.Ptr(c.Description)
		}
		vals = append(vals, o)
	}
	return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: sdk.SessionConfigId(id), Name: name, Description: sdk.Ptr(desc), Category: cat,
		CurrentValue: sdk.SessionConfigValueId(current), Options: sdk.SessionConfigSelectOptions{Ungrouped: &vals}, Type: "select",
	}}
}

// commandsUpdate lists the slash commands the face handles itself, then
// the workspace's and the user's saved prompts.
func commandsUpdate(cat server.Catalog, saved []server.Command) *sdk.SessionUpdate {
	hint := "profile name"
	if cat != nil {
		var ids []string
		for _, p := range cat.Profiles() {
			ids = append(ids, p.ID)
		}
		if len(ids) > 0 {
			hint = strings.Join(ids, " | ")
		}
	}
	list := []sdk.AvailableCommand{
		{Name: "reset", Description: "Start the conversation over (history, subordinates and shells go)"},
		{Name: "profile", Description: "Switch the agent profile from the next message on",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}},
		{Name: "plan", Description: "Plan mode on or off: the agent reads and thinks, changes nothing, and answers with a plan",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "on | off (empty: switch)"}}},
		{Name: "act", Description: "Leave plan mode and have the plan carried out"},
		{Name: "pause", Description: "Hold the agent before its next model call"},
		{Name: "resume", Description: "Let a paused agent go on"},
		{Name: "trust", Description: "Review the workspace's code (extensions, tools) and trust exactly those files"},
		{Name: "memory", Description: "List the agent's newest memories of this workspace, or search them",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "what to look for (empty: the newest)"}}},
		{Name: "undo", Description: "Take back the last run (or /compact): the files it changed and its part of the conversation"},
		{Name: "rewind", Description: "List the checkpoints, or go back to one: its files, its conversation, or both",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "checkpoint [files | conversation] (empty: list them)"}}},
		{Name: "compact", Description: "Summarise the conversation now to free the context (/undo takes it back)",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "what the summary should keep (optional)"}}},
		{Name: "fork", Description: "Copy the conversation into a new session to go on there; this one stays as it is",
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "run to fork after (empty: the last)"}}},
	}
	own := map[string]bool{}
	for _, c := range list {
		own[c.Name] = true
	}
	for _, c := range saved {
		if own[c.Name] {
			continue // the face's own command wins (server.Builtin may not list it yet)
		}
		ac := sdk.AvailableCommand{Name: c.Name, Description: cmp.Or(c.Description, c.Name) + " (" + c.Source + ")"}
		if c.Hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Hint}}
		}
		list = append(list, ac)
	}
	return &sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: list}}
}

// command handles a slash command; ok is false for any other message, which
// goes to the agent.
func (a *agent) command(ctx context.Context, st *sessState, msg string) (reply string, ok bool) {
	fields := strings.Fields(msg)
	if len(fields) == 0 || !strings.HasPrefix(fields[0], "/") {
		return "", false
	}
	sess := st.sess
	switch fields[0] {
	case "/reset":
		if err := sess.Reset(); err != nil {
			if errors.Is(err, loop.ErrBusy) {
				return "A run is in progress: cancel it before /reset.", true
			}
			return "Could not reset: " + err.Error(), true
		}
		return "The conversation starts over.", true
	case "/trust":
		return a.trustCommand(ctx, st), true
	case "/act": // in plan mode it is a run (see Prompt)
		return "Plan mode is not on: there is no plan to carry out.", true
	case "/plan":
		mode, err := server.PlanSwitch(sess.Mode(), strings.Join(fields[1:], " "))
		if err != nil {
			return err.Error() + ".", true
		}
		if err := sess.SetMode(mode); err != nil {
			return "Could not switch plan mode: " + err.Error(), true
		}
		if mode == server.ModePlan {
			return "Plan mode is on: the agent reads and thinks, changes nothing, and answers with a plan. /act carries the plan out.", true
		}
		return "Plan mode is off.", true
	case "/memory":
		return a.memoryCommand(ctx, st, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "/memory"))), true
	case "/undo":
		return a.undoCommand(ctx, st, fields[1:]), true
	case "/rewind":
		return a.rewindCommand(ctx, st, fields[1:]), true
	case "/compact":
		return a.compactCommand(ctx, st, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "/compact"))), true
	case "/fork":
		return a.forkCommand(ctx, st, fields[1:]), true
	case "/pause":
		sess.Pause()
		return "Paused: the agent stops before its next model call. Send /resume to go on.", true
	case "/resume":
		if !sess.Paused() {
			return "The agent is not paused.", true
		}
		sess.Resume()
		return "Resumed.", true
	case "/profile":
		cur := sess.Spec().Profile
		ps := a.profiles()
		if cur == "" && len(ps) > 0 {
			cur = ps[0].ID
		}
		if len(fields) < 2 {
			var names []string
			for _, p := range ps {
				names = append(names, p.ID)
			}
			return fmt.Sprintf("The profile is %s. Available: %s.", cur, strings.Join(names, ", ")), true
		}
		name := fields[1]
		if a.opts.Catalog != nil && !a.offered(ps, name) {
			return fmt.Sprintf("There is no profile %q.", name), true
		}
		if err := sess.Configure(ctx, name, ""); err != nil {
			if errors.Is(err, loop.ErrBusy) {
				return "A run is in progress: switch the profile when it ends.", true
			}
			return "Could not switch the profile: " + err.Error(), true
		}
		if opts := a.configOptions(sess); len(opts) > 0 {
			st.enqueue(item{update: &sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: opts}}})
		}
		return fmt.Sprintf("The profile is now %s (from the next message on).", name), true
	}
	return "", false
}

// argPath is the "path" argument of a file tool call.
func argPath(args json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// memoryCommand answers /memory [query]: the newest memories of the
// session's workspace and the user's, or the most relevant to query.
func (a *agent) memoryCommand(ctx context.Context, st *sessState, query string) string {
	ws := ""
	if roots := st.sess.Spec().Roots; len(roots) > 0 {
		ws = roots[0]
	}
	list, err := a.opts.Manager.Memories(ctx, server.MemoryQuery{Workspace: ws, Query: query, Limit: 20})
	if err != nil {
		return "Could not read the memory: " + err.Error()
	}
	if len(list) == 0 {
		if query != "" {
			return fmt.Sprintf("No memory about %q.", query)
		}
		return "The agent remembers nothing yet for this workspace."
	}
	var b strings.Builder
	for _, m := range list {
		fmt.Fprintf(&b, "- **%s** (%s, %s memory, %s): %s\n", m.ID, m.Area, m.Scope, m.Timestamp, cut.Clip(strings.ReplaceAll(m.Text, "\n", " "), 300))
	}
	return b.String()
}

// badWorkspace is the "Invalid params" answer for a session whose folder
// the host refused (one as broad as the home directory that nobody chose):
// the client shows it as a bad cwd, with the host's word on how to choose
// another, not as an internal error. It is nil for any other error.
func badWorkspace(err error) error {
	var ws interface{ InvalidWorkspace() bool }
	if !errors.As(err, &ws) || !ws.InvalidWorkspace() {
		return nil
	}
	return invalidParams("cwd", ws.(error).Error())
}
