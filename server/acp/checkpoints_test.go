package acp

import (
	"errors"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// jsonTools has the model ask for tools in Agent Zero's JSON protocol (the
// scripted replies below are such requests).
var jsonTools = map[string]string{"models.chat.tool_protocol": "json"}

// since is what came after the first n updates.
func since(us []sdk.SessionUpdate, n int) []sdk.SessionUpdate { return us[min(n, len(us)):] }

// ask sends a slash command (or any message) and returns what the face
// said to it.
func (h *harness) ask(t *testing.T, id sdk.SessionId, text string) string {
	t.Helper()
	n := len(h.client.of(id))
	resp, err := h.prompt(t.Context(), id, text)
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("%s = %+v, %v", text, resp, err)
	}
	return messageText(since(h.client.of(id), n))
}

func lastRequest(env *servertest.Env) string {
	reqs := env.Model.Requests()
	return promptOf(reqs[len(reqs)-1])
}

// TestUndo is issue 27's: an ACP run writes a file with text_editor,
// creates one and deletes another with a command; /undo leaves the
// workspace exactly as it was (every file, its content, the user's .git
// and the ignored build output), says what it did, and the next model
// request no longer holds the run. The checkpoint and the rewind are
// shown, live and when the session is loaded again.
func TestUndo(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonTools, Replies: servertest.UndoReplies()})
	servertest.SeedMess(t, env.Workspace)
	before := servertest.Listing(t, env.Workspace)
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)

	n := len(h.client.of(s.SessionId))
	if got := h.ask(t, s.SessionId, "make the mess"); got != "mess made" {
		t.Fatalf("the run answered %q", got)
	}
	run := since(h.client.of(s.SessionId), n)
	if len(run) == 0 || run[0].AgentThoughtChunk == nil || !strings.HasPrefix(run[0].AgentThoughtChunk.Content.Text.Text, "\n(checkpoint 1 before run 1: the conversation and ") {
		t.Errorf("the run does not open with its checkpoint: %s\n%q", describe(run), thoughtText(run))
	}
	after := servertest.Listing(t, env.Workspace)
	if after["kept.txt"] != "changed by the agent\n" || after["out/made.txt"] != "new\n" || after["gone.txt"] != "" {
		t.Fatalf("the run did not change the workspace as scripted: %v", after)
	}

	said := h.ask(t, s.SessionId, "/undo")
	if diff := cmp.Diff(before, servertest.Listing(t, env.Workspace)); diff != "" {
		t.Errorf("the workspace after /undo (-before +after):\n%s", diff)
	}
	for _, want := range []string{
		"**Rewound** the files and the conversation to checkpoint 1.",
		"- Restored 2 files: `gone.txt`, `kept.txt`",
		"- Removed 1 file and 1 folder made since: `out/`, `out/made.txt`",
		"messages left the conversation",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("/undo said\n%s\nwant it to hold %q", said, want)
		}
	}
	h.client.mu.Lock()
	asked := len(h.client.perms)
	h.client.mu.Unlock()
	if asked != 0 {
		t.Errorf("/undo asked the user %d times with nothing changed outside the agent", asked)
	}

	if got := h.ask(t, s.SessionId, "after the undo"); got != "fresh" {
		t.Fatalf("the run after the undo answered %q", got)
	}
	if text := lastRequest(env); strings.Contains(text, "make the mess") || strings.Contains(text, "changed by the agent") || strings.Contains(text, "done-shell") {
		t.Errorf("the request after /undo still holds the undone run:\n%s", text)
	}
	if got := h.ask(t, s.SessionId, "/undo keep please"); !strings.Contains(got, `not "please"`) {
		t.Errorf("/undo with a stray word said %q", got)
	}

	// Loaded again, the conversation shows each run's checkpoint after its
	// message, and the rewind.
	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	us := h2.client.of(s.SessionId)
	if len(us) < 2 || us[0].UserMessageChunk == nil || us[1].AgentThoughtChunk == nil ||
		!strings.Contains(us[1].AgentThoughtChunk.Content.Text.Text, "checkpoint 1 before run 1") {
		t.Errorf("the replay does not show the checkpoint after the run's message: %s", describe(us))
	}
	if got := messageText(us); !strings.Contains(got, "mess made\n\n**Rewound** the files and the conversation to checkpoint 1.") || !strings.Contains(got, "fresh") {
		t.Errorf("the replayed messages:\n%s", got)
	}
	// Checkpoint ids are never given twice: the next run's is 2.
	if got := thoughtText(us); !strings.Contains(got, "checkpoint 2 before run 2") {
		t.Errorf("the replay lacks the second run's checkpoint: %q", got)
	}
}

// A file the user changed after the run is a conflict the face asks about
// with session/request_permission, naming the files; "keep" keeps the
// user's edit and takes back the rest. Cancel changes nothing, and an
// editor that cannot be asked is told what to send instead.
func TestUndoConflict(t *testing.T) {
	t.Parallel()
	for _, tc := range []string{"keep", "cancel", "cannot ask"} {
		t.Run(tc, func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{Settings: jsonTools, Replies: servertest.UndoReplies()})
			servertest.SeedMess(t, env.Workspace)
			c := newFakeClient()
			switch tc {
			case "keep", "cancel":
				c.choose = func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
					return sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(tc))
				}
			case "cannot ask":
				c.permErr = errors.New("this editor shows no dialogs")
			}
			h := start(t, env, c)
			h.init(t, false)
			s := h.newSession(t)
			h.ask(t, s.SessionId, "make the mess")
			servertest.Put(t, env.Workspace, "kept.txt", "the user fixed it by hand\n")
			servertest.Put(t, env.Workspace, "mine.txt", "the user's new file\n")
			touched := servertest.Listing(t, env.Workspace)

			n := len(c.of(s.SessionId))
			said := h.ask(t, s.SessionId, "/undo")
			c.mu.Lock()
			perms := slices.Clone(c.perms)
			c.mu.Unlock()
			if len(perms) != 1 {
				t.Fatalf("%d permission requests, want 1", len(perms))
			}
			p := perms[0]
			var opts []string
			for _, o := range p.Options {
				opts = append(opts, string(o.OptionId)+":"+o.Name)
			}
			if diff := cmp.Diff([]string{"keep:Keep my changes", "overwrite:Overwrite them", "cancel:Cancel"}, opts); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if p.ToolCall.Title == nil || !strings.Contains(*p.ToolCall.Title, "kept.txt, mine.txt") {
				t.Errorf("the question's title does not name the files: %v", p.ToolCall.Title)
			}
			var locs []string
			for _, l := range p.ToolCall.Locations {
				locs = append(locs, l.Path)
			}
			if diff := cmp.Diff([]string{filepath.Join(env.Workspace, "kept.txt"), filepath.Join(env.Workspace, "mine.txt")}, locs); diff != "" {
				t.Errorf("locations (-want +got):\n%s", diff)
			}
			// The question is a tool call the editor knows before it is asked.
			us := since(c.of(s.SessionId), n)
			if !strings.HasPrefix(describe(us), "tool_call:edit:pending") || us[0].ToolCall.ToolCallId != p.ToolCall.ToolCallId {
				t.Errorf("updates around the question: %s", describe(us))
			}
			ws := servertest.Listing(t, env.Workspace)
			switch tc {
			case "keep":
				if ws["kept.txt"] != "the user fixed it by hand\n" || ws["mine.txt"] != "the user's new file\n" {
					t.Errorf("the user's changes were lost: %v", ws)
				}
				if ws["gone.txt"] != "deleted by a command\n" || ws["out/made.txt"] != "" {
					t.Errorf("the rest was not taken back: %v", ws)
				}
				if !strings.Contains(said, "- Kept 2 files changed outside the agent: `kept.txt`, `mine.txt`") {
					t.Errorf("/undo said:\n%s", said)
				}
				if !strings.Contains(describe(us), "update:completed:content") {
					t.Errorf("the question's tool call did not complete: %s", describe(us))
				}
			case "cancel":
				if diff := cmp.Diff(touched, ws); diff != "" {
					t.Errorf("a cancelled undo changed the workspace:\n%s", diff)
				}
				if said != "Cancelled: nothing was changed." {
					t.Errorf("/undo said %q", said)
				}
			case "cannot ask":
				if diff := cmp.Diff(touched, ws); diff != "" {
					t.Errorf("an unasked undo changed the workspace:\n%s", diff)
				}
				if !strings.Contains(said, "since checkpoint 1: `kept.txt`, `mine.txt`. Nothing was changed. Send `/undo keep`") ||
					!strings.Contains(said, "`/undo overwrite`") {
					t.Errorf("/undo said %q", said)
				}
				// As told: overwriting takes everything back.
				h.ask(t, s.SessionId, "/undo overwrite")
				ws = servertest.Listing(t, env.Workspace)
				if ws["kept.txt"] != "the user's text\n" || ws["mine.txt"] != "" || ws["gone.txt"] == "" {
					t.Errorf("after /undo overwrite: %v", ws)
				}
			}
		})
	}
}

// Two runs, two checkpoints: /rewind lists them; /rewind 2 conversation
// takes back the second run's messages only, /rewind 1 everything since
// the first run; bad numbers and words are told.
func TestRewind(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonTools, Replies: []llmtest.Reply{
		{Match: "after first", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "one written"}}`},
		{Match: "after second", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "two written"}}`},
		{Match: "third question", Content: `{"thoughts": ["c"], "headline": "C", "tool_name": "response", "tool_args": {"text": "three"}}`},
		{Match: "first question", Content: `{"thoughts": ["w"], "headline": "W", "tool_name": "text_editor:write", "tool_args": {"path": "one.txt", "content": "after first\n"}}`},
		{Match: "second question", Content: `{"thoughts": ["w"], "headline": "W", "tool_name": "text_editor:write", "tool_args": {"path": "two.txt", "content": "after second\n"}}`},
	}})
	servertest.Put(t, env.Workspace, "base.txt", "base\n")
	before := servertest.Listing(t, env.Workspace)
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if got := h.ask(t, s.SessionId, "/rewind"); !strings.Contains(got, "There is no checkpoint yet") {
		t.Errorf("/rewind with no run said %q", got)
	}
	h.ask(t, s.SessionId, "first question")
	h.ask(t, s.SessionId, "second question")

	list := h.ask(t, s.SessionId, "/rewind")
	line := regexp.MustCompile(`(?m)^- \*\*(\d)\*\* · before run (\d) · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d · "([a-z ]+)" · the conversation and (\d+) files? \(\d+ bytes\)$`)
	var got [][]string
	for _, m := range line.FindAllStringSubmatch(list, -1) {
		got = append(got, m[1:])
	}
	want := [][]string{{"1", "1", "first question", "1"}, {"2", "2", "second question", "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/rewind listed (-want +got):\n%s\n%s", diff, list)
	}

	for cmd, want := range map[string]string{
		"/rewind 9":          "There is no checkpoint 9: /rewind lists them.",
		"/rewind x":          `"x" is not a checkpoint number`,
		"/rewind 2 sideways": `not "sideways"`,
	} {
		if got := h.ask(t, s.SessionId, cmd); !strings.Contains(got, want) {
			t.Errorf("%s said %q, want %q in it", cmd, got, want)
		}
	}

	said := h.ask(t, s.SessionId, "/rewind 2 conversation")
	if !strings.Contains(said, "**Rewound** the conversation to checkpoint 2.") || strings.Contains(said, "Restored") {
		t.Errorf("/rewind 2 conversation said:\n%s", said)
	}
	if ws := servertest.Listing(t, env.Workspace); ws["two.txt"] != "after second\n" {
		t.Errorf("/rewind 2 conversation changed the files: %v", ws)
	}
	h.ask(t, s.SessionId, "third question")
	if text := lastRequest(env); !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the request after /rewind 2 conversation:\n%s", text)
	}

	// Back to before the first run: both files go. two.txt was made by a
	// run whose checkpoint the conversation rewind dropped: the user may be
	// asked about it (it changed since the last checkpoint's run), and
	// overwrites.
	h.client.mu.Lock()
	h.client.choose = func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected(optOverwrite)
	}
	h.client.mu.Unlock()
	said = h.ask(t, s.SessionId, "/rewind 1")
	if diff := cmp.Diff(before, servertest.Listing(t, env.Workspace)); diff != "" {
		t.Errorf("after /rewind 1 (-want +got):\n%s\n%s", diff, said)
	}
	if got := h.ask(t, s.SessionId, "/rewind"); !strings.Contains(got, "There is no checkpoint yet") {
		t.Errorf("/rewind after going back to the first checkpoint said %q", got)
	}
}

// /compact summarises with the utility model, the focus in its request;
// the face says tokens before and after, shows the compaction and its
// checkpoint, and /undo takes it back.
func TestCompact(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonTools, Replies: []llmtest.Reply{
		{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "` + strings.Repeat("long answer ", 60) + `"}}`},
		{Match: "next question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "ok"}}`},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if got := h.ask(t, s.SessionId, "/compact"); !strings.HasPrefix(got, "Nothing to compact yet") {
		t.Errorf("/compact of an empty conversation said %q", got)
	}
	h.ask(t, s.SessionId, "first question")
	n := len(h.client.of(s.SessionId))
	said := h.ask(t, s.SessionId, "/compact keep the parser")
	if !regexp.MustCompile(`^Compacted the conversation: \d+ → \d+ tokens\. /undo takes the compaction back\.$`).MatchString(said) {
		t.Errorf("/compact said %q", said)
	}
	thoughts := thoughtText(since(h.client.of(s.SessionId), n))
	if !strings.Contains(thoughts, "(history compacted from") || !strings.Contains(thoughts, "(checkpoint 2 before compacting: the conversation)") {
		t.Errorf("the compaction's thought lines: %q", thoughts)
	}
	h.ask(t, s.SessionId, "next question")
	if text := lastRequest(env); !strings.Contains(text, "SUMMARY: they talked about the parser.") || strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after /compact:\n%s", text)
	}
	h.ask(t, s.SessionId, "/undo") // the run after
	h.ask(t, s.SessionId, "/undo") // the compaction
	h.ask(t, s.SessionId, "next question")
	if text := lastRequest(env); strings.Contains(text, "SUMMARY") || !strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after undoing the compaction:\n%s", text)
	}
}

var forkID = regexp.MustCompile("as a new session: `([^`]+)`")

// /fork makes a new session the client can session/load and go on in; the
// original's history is unchanged. session/fork does the same with the
// whole conversation.
func TestFork(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Settings: jsonTools, Replies: []llmtest.Reply{
		{Match: "fork too", Content: `{"thoughts": ["d"], "headline": "D", "tool_name": "response", "tool_args": {"text": "second fork answer"}}`},
		{Match: "question again", Content: `{"thoughts": ["e"], "headline": "E", "tool_name": "response", "tool_args": {"text": "answer again"}}`},
		{Match: "second question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "answer two"}}`},
		{Match: "in the fork", Content: `{"thoughts": ["c"], "headline": "C", "tool_name": "response", "tool_args": {"text": "fork answer"}}`},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "answer one"}}`},
	}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if got := h.ask(t, s.SessionId, "/fork x"); !strings.HasPrefix(got, "/fork takes the number of the run") {
		t.Errorf("/fork x said %q", got)
	}
	h.ask(t, s.SessionId, "first question")
	h.ask(t, s.SessionId, "second question")
	if got := h.ask(t, s.SessionId, "/fork 7"); !strings.HasPrefix(got, "Cannot fork there") {
		t.Errorf("/fork 7 said %q", got)
	}
	said := h.ask(t, s.SessionId, "/fork 1")
	m := forkID.FindStringSubmatch(said)
	if m == nil || !strings.Contains(said, "up to the end of run 1") {
		t.Fatalf("/fork 1 said %q", said)
	}
	fork := sdk.SessionId(m[1])

	// Another connection (or this one) loads the fork and goes on there.
	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: fork, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load of the fork: %v", err)
	}
	var users []string
	for _, u := range h2.client.of(fork) {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if diff := cmp.Diff([]string{"first question"}, users); diff != "" {
		t.Errorf("the fork's replayed messages (-want +got):\n%s", diff)
	}
	if got := thoughtText(h2.client.of(fork)); !strings.Contains(got, "(forked from session "+string(s.SessionId)+" after run 1)") {
		t.Errorf("the fork's replay does not say where it came from: %q", got)
	}
	if got := h2.ask(t, fork, "in the fork"); got != "fork answer" {
		t.Errorf("the fork answered %q", got)
	}
	if text := lastRequest(env); !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", text)
	}
	h.ask(t, s.SessionId, "second question again")
	if text := lastRequest(env); strings.Contains(text, "in the fork") || !strings.Contains(text, "answer two") {
		t.Errorf("the original's request:\n%s\nwant its own history", text)
	}

	// session/fork (unstable): the whole conversation, in the same folder.
	if _, err := h.conn.UnstableForkSession(t.Context(), sdk.UnstableForkSessionRequest{SessionId: s.SessionId, Cwd: t.TempDir()}); !isInvalidParams(err) {
		t.Errorf("session/fork into another folder = %v, want invalid params", err)
	}
	var re *sdk.RequestError
	if _, err := h.conn.UnstableForkSession(t.Context(), sdk.UnstableForkSessionRequest{SessionId: "nope", Cwd: env.Workspace}); !errors.As(err, &re) || re.Code != codeResourceNotFound {
		t.Errorf("session/fork of an unknown session = %v, want resource not found", err)
	}
	resp, err := h.conn.UnstableForkSession(t.Context(), sdk.UnstableForkSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.UnstableMcpServer{}})
	if err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	if resp.SessionId == "" || resp.SessionId == s.SessionId || resp.SessionId == fork || len(resp.ConfigOptions) == 0 || resp.Modes == nil {
		t.Fatalf("session/fork answered %+v", resp)
	}
	h.client.waitFor(t, resp.SessionId, "the fork's commands", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(describe(us), "commands")
	})
	if got := h.ask(t, resp.SessionId, "in the fork too"); got != "second fork answer" {
		t.Errorf("the session/fork fork answered %q", got)
	}
	if text := lastRequest(env); !strings.Contains(text, "second question again") || !strings.Contains(text, "answer two") {
		t.Errorf("the session/fork fork's request:\n%s\nwant the whole conversation", text)
	}
}

func isInvalidParams(err error) bool {
	var re *sdk.RequestError
	return errors.As(err, &re) && re.Code == -32602
}

// initialize advertises session/fork; the commands are offered with
// their hints.
func TestCheckpointCommandsOffered(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	h := start(t, env, newFakeClient())
	resp, err := h.conn.Initialize(t.Context(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil || resp.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("initialize = %+v, %v; want sessionCapabilities.fork", resp, err)
	}
	s := h.newSession(t)
	hints := map[string]string{}
	for _, u := range h.client.of(s.SessionId) {
		if u.AvailableCommandsUpdate == nil {
			continue
		}
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			hint := "-"
			if c.Input != nil && c.Input.Unstructured != nil {
				hint = c.Input.Unstructured.Hint
			}
			if c.Description != "" {
				hints[c.Name] = hint
			}
		}
	}
	want := map[string]string{
		"undo":    "-",
		"rewind":  "checkpoint [files | conversation] (empty: list them)",
		"compact": "what the summary should keep (optional)",
		"fork":    "run to fork after (empty: the last)",
	}
	got := map[string]string{}
	for k := range maps.Keys(want) {
		got[k] = hints[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}
