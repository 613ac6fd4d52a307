package term

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
)

// renderer shows a run as a person wants to watch it: reasoning and
// thoughts dimmed, each tool call with its headline, live command output,
// and the final answer.
type renderer struct {
	w      io.Writer
	color  bool
	block  string // what is being streamed now, and by which agent: "1/reasoning"
	atBOL  bool   // the cursor is at the beginning of a line
	indent string // the current agent's indentation: subordinates nest
	// lastError is the last error shown, so the caller need not repeat it.
	lastError string
	// streamed are the tool calls whose output was shown live: their
	// result repeats it, and is not shown again, however many lines
	// (the user's own message, an approval) came between.
	streamed map[string]bool
	// live is set on a terminal that shows the line being written as it
	// changes: an image pull's progress is one line, rewritten in place.
	// Elsewhere (a pipe, the chat's scrollback) a pull says when it starts
	// and when it ends, each on a line of its own.
	live  bool
	width func() int // the live terminal's columns now (0: unknown), read at each redraw: it may be resized
	// pulling is set while a live pull's line is on the screen, unended;
	// pullsSaid are the tool calls whose pull was said to start.
	pulling   bool
	pullsSaid map[string]bool
	// tools says, as every face does, which tool call an event is about,
	// its title and how it stands.
	tools *server.Presenter
}

func newRenderer(w io.Writer, color bool) *renderer {
	return &renderer{w: w, color: color, atBOL: true, streamed: map[string]bool{}, pullsSaid: map[string]bool{}, tools: server.NewPresenter()}
}

const (
	dim    = "\x1b[2m"
	italic = "\x1b[3m"
	bold   = "\x1b[1m"
	cyan   = "\x1b[36m"
	yellow = "\x1b[33m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	reset  = "\x1b[0m"
)

func (r *renderer) style(s string, codes ...string) string {
	if !r.color || s == "" {
		return s
	}
	return strings.Join(codes, "") + s + reset
}

// write prints s, indenting every line it starts.
func (r *renderer) write(s string) {
	for s != "" {
		if r.atBOL && r.indent != "" {
			fmt.Fprint(r.w, r.indent)
		}
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			fmt.Fprint(r.w, s)
			r.atBOL = false
			return
		}
		fmt.Fprint(r.w, s[:i+1])
		r.atBOL, s = true, s[i+1:]
	}
}

// in reports whether the current agent is streaming block.
func (r *renderer) in(block string) bool { return r.block == r.indent+"/"+block }

// enter starts a new block, ending the previous line if needed.
func (r *renderer) enter(block, label string) {
	if block != "" {
		block = r.indent + "/" + block
	}
	if r.block == block {
		return
	}
	if !r.atBOL {
		r.write("\n")
	}
	r.block = block
	if label != "" {
		r.write(label)
	}
}

func (r *renderer) line(s string) {
	r.enter("", "")
	r.block = ""
	r.write(s + "\n")
}

func (r *renderer) event(e server.Event) {
	// Everything but command output (which the sandbox cleans) is the
	// model's or a tool's text: it must not act on the terminal (move the
	// cursor, clear a line, retitle the window) or it could make an
	// approval question say what it does not ask.
	if e.Type != loop.EventToolOutputDelta {
		e.Text, e.Title, e.Error, e.Profile = termsafe.Visible(e.Text), termsafe.Visible(e.Title), termsafe.Visible(e.Error), termsafe.Visible(e.Profile)
	}
	if r.pulling && e.Type != server.EventSandboxPull {
		r.clearPull() // what comes now takes the progress line's place
	}
	prefix := ""
	if e.Agent > 0 {
		prefix = fmt.Sprintf("A%d ", e.Agent)
	}
	if indent := strings.Repeat("  ", e.Agent); indent != r.indent {
		if !r.atBOL {
			r.write("\n")
		}
		r.indent, r.block = indent, ""
	}
	if r.checkpointEvent(e) {
		return
	}
	switch e.Type {
	case loop.EventRunStarted, loop.EventIntervention:
		// The message itself is the chat's to show (zero run's person
		// typed it); its pictures are said, as a terminal cannot show them.
		if len(e.Images) > 0 {
			r.line(r.style(prefix+imagesLine("attached", e.Images), dim))
		}
	case loop.EventReasoningDelta:
		r.enter("reasoning", r.style(prefix+"reasoning: ", dim))
		r.write(r.style(e.Text, dim))
	case loop.EventThoughtsDelta:
		r.enter("thoughts", r.style(prefix+"thinking: ", dim, italic))
		r.write(r.style(e.Text, dim, italic))
	case loop.EventToolCall:
		v, ok := r.tools.Tool(e)
		if !ok { // the response tool's call: the answer follows
			return
		}
		title, detail := v.Title, v.Name
		var args map[string]any
		_ = json.Unmarshal(e.Args, &args)
		if code, ok := args["code"].(string); ok && strings.TrimSpace(code) != "" {
			r.line(r.style(prefix+"● "+title, bold, cyan) + r.style("  "+detail, dim))
			for _, l := range strings.Split(strings.TrimRight(code, "\n"), "\n") {
				r.line(r.style("  $ "+termsafe.Visible(l), dim))
			}
			return
		}
		r.line(r.style(prefix+"● "+title, bold, cyan) + r.style("  "+termsafe.Visible(detail+" "+summarizeArgs(e.Args)), dim))
	case loop.EventToolOutputDelta:
		r.enter("output", "")
		r.write(e.Text)
		if e.Item != "" {
			r.streamed[e.Item] = true
		}
	case loop.EventToolResult:
		streamed := r.streamed[e.Item] || e.Item == "" && r.in("output")
		delete(r.streamed, e.Item)
		v, ok := r.tools.Tool(e)
		switch {
		case !ok: // the response tool's result: the answer says it
		case v.Status == loop.ToolFailed:
			r.line(r.style(prefix+"✗ "+firstLineOf(e.Text), red))
			if e.Error != "" { // what the run reports, should it end on it: said now
				r.lastError = e.Error
			}
		case v.Status == loop.ToolCancelled:
			// The run's end says it was cancelled, once; a tool the
			// user's message kept from running is followed by the message.
			r.enter("", "")
		case v.Running:
			// The text repeats the output and adds a note for the model;
			// the user is told in plain words.
			r.line(r.style(prefix+"(still running: the agent can wait for it, type into it or stop it)", dim))
		case !streamed:
			// Nothing was streamed (for example a quick note): show the result.
			if t := strings.TrimSpace(e.Text); t != "" {
				r.line(r.style(t, dim))
			}
		default:
			r.enter("", "")
		}
		if ok && len(e.Images) > 0 {
			// What vision_load or an MCP tool brought for the model to see.
			r.line(r.style(prefix+imagesLine("", e.Images), dim))
		}
	case loop.EventResponseDelta:
		if e.Agent > 0 {
			return
		}
		r.enter("response", "\n")
		r.write(e.Text)
	case loop.EventResponse:
		if e.Agent > 0 {
			return
		}
		if !r.in("response") { // not streamed (rewritten by an extension, or a fake model)
			r.enter("response", "\n")
			r.write(e.Text)
		}
		r.enter("", "") // end the answer's line
	case loop.EventWarning:
		r.line(r.style(prefix+"! "+e.Text, yellow))
	case loop.EventPlan:
		if e.Plan == nil {
			return
		}
		done := 0
		for _, it := range e.Plan.Items {
			if it.Status == loop.PlanCompleted {
				done++
			}
		}
		r.line(r.style(fmt.Sprintf("%splan: %d of %d done", prefix, done, len(e.Plan.Items)), bold))
		for _, it := range e.Plan.Items {
			text := termsafe.Visible(it.Content)
			if it.Priority == "high" {
				text += " (high)"
			}
			switch it.Status {
			case loop.PlanCompleted:
				r.line(r.style("  ✓ "+text, dim))
			case loop.PlanInProgress:
				r.line(r.style("  ▸ "+text, bold, cyan))
			default:
				r.line("  ○ " + text)
			}
		}
	case server.EventModeChanged:
		if e.Text == server.ModePlan {
			r.line(r.style("plan mode is on: the agent reads and thinks, changes nothing, and answers with a plan", yellow))
		} else {
			r.line(r.style("plan mode is off: the agent may edit files and run commands again", dim))
		}
	case loop.EventHistoryCompressed:
		r.line(r.style(prefix+"("+e.Text+")", dim))
	case loop.EventError:
		r.line(r.style(prefix+"error: "+e.Text, red))
		r.lastError = e.Text
	case loop.EventSubordinateStarted:
		r.line(r.style(fmt.Sprintf("→ A%d (%s): %s", e.Agent, e.Profile, firstLineOf(e.Text)), bold))
	case loop.EventSubordinateEnded:
		if e.Error != "" {
			r.line(r.style(fmt.Sprintf("← A%d stopped: %s", e.Agent, e.Error), yellow))
			return
		}
		r.line(r.style(fmt.Sprintf("← A%d answered: %s", e.Agent, firstLineOf(e.Text)), bold))
	case loop.EventRunEnded:
		if e.StopReason == loop.StopResponse {
			r.enter("", "")
		}
	case server.EventSandboxPull:
		r.pull(e, prefix)
	}
}

// pull shows how the sandbox image's pull goes: on a live terminal one
// line rewritten in place, then the line that says it was pulled;
// elsewhere the line that says it started and the one that says it ended.
// A failed pull is said by the failed command's result.
func (r *renderer) pull(e server.Event, prefix string) {
	if e.Text == "" {
		return
	}
	switch e.Status {
	case server.PullDone, server.PullFailed:
		delete(r.pullsSaid, e.Item)
	}
	switch e.Status {
	case server.PullDone:
		if r.pulling {
			r.clearPull()
		}
		r.line(r.style(prefix+"✓ "+e.Text, dim))
	case server.PullFailed:
		if r.pulling {
			r.clearPull()
		}
	default:
		if r.live {
			if !r.pulling {
				r.enter("", "")
				r.block = ""
			}
			// At the beginning of a line (enter ended the one before): the
			// line is drawn anew, never wrapped into a second one (which
			// the next one could not erase).
			text := prefix + "… " + e.Text
			width := 0
			if r.width != nil {
				width = r.width()
			}
			if room := width - 1 - len(r.indent); width > 0 && ansi.StringWidth(text) > room {
				text = ansi.Truncate(text, max(room, 1), "…")
			}
			fmt.Fprint(r.w, "\r\x1b[K"+r.indent+r.style(text, dim))
			r.pulling = true
			return
		}
		if !r.pullsSaid[e.Item] {
			r.pullsSaid[e.Item] = true
			r.line(r.style(prefix+"… "+e.Text, dim))
		}
	}
}

// clearPull erases the live pull's line: the cursor is at its beginning.
func (r *renderer) clearPull() {
	fmt.Fprint(r.w, "\r\x1b[K")
	r.pulling = false
}

// summarizeArgs shows the arguments of a tool call on one short line.
func summarizeArgs(raw []byte) string {
	s := string(raw)
	if s == "" || s == "{}" || s == "null" {
		return ""
	}
	s = strings.ReplaceAll(s, `\n`, " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
