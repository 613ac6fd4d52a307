package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// maxTranscriptResult bounds a tool result's text in a transcript, in runes.
const maxTranscriptResult = 4000

// Transcript renders a session's event log as markdown, as it happened:
// the user's messages, headlines, tool calls with the approval asked and
// the answer given, their results (a refusal or a failure as such),
// warnings, errors (each once) and the answers.
func Transcript(info Info, evs []Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Zero session %s\n\n", info.ID)
	if len(info.Roots) > 0 {
		fmt.Fprintf(&b, "Workspace: %s  \n", strings.Join(info.Roots, ", "))
	}
	if info.Profile != "" {
		fmt.Fprintf(&b, "Profile: %s  \n", info.Profile)
	}
	fmt.Fprintf(&b, "Runs: %d\n", info.Runs)
	if u := info.Usage; u != nil {
		fmt.Fprintf(&b, "\nUsage: %s\n", u.Line())
		if r := u.Roles; r != nil {
			b.WriteString("\n")
			for _, p := range []struct {
				role string
				c    *UsageCount
			}{{loop.RoleChat, r.Chat}, {loop.RoleUtility, r.Utility}, {loop.RoleEmbedding, r.Embedding}} {
				if p.c != nil {
					fmt.Fprintf(&b, "- %s (%d calls): %s\n", p.role, p.c.Calls, p.c.Line())
				}
			}
		}
	}
	who := func(agent int) string {
		if agent == 0 {
			return "Zero"
		}
		return fmt.Sprintf("Subordinate %d", agent)
	}
	lastErr := "" // the error said last: a run that ended with it does not say it again
	tools := NewPresenter()
	for _, e := range evs {
		switch e.Type {
		case loop.EventRunStarted:
			lastErr = ""
			fmt.Fprintf(&b, "\n## User\n\n%s\n", e.Text)
		case loop.EventIntervention:
			fmt.Fprintf(&b, "\n## User (during the run)\n\n%s\n", e.Text)
		case loop.EventHeadline:
			fmt.Fprintf(&b, "\n_%s: %s_\n", who(e.Agent), e.Text)
		case loop.EventToolCall:
			call, ok := tools.Tool(e)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "\n### %s calls %s\n", who(e.Agent), call.Title)
			if len(call.Args) > 0 {
				args := call.Args
				var v any
				if json.Unmarshal(call.Args, &v) == nil {
					if pretty, err := json.MarshalIndent(v, "", "  "); err == nil {
						args = pretty
					}
				}
				fmt.Fprintf(&b, "\n```json\n%s\n```\n", args)
			}
		case loop.EventToolResult:
			call, ok := tools.Tool(e)
			if !ok {
				continue
			}
			text := e.Text
			if r := []rune(text); len(r) > maxTranscriptResult {
				text = string(r[:maxTranscriptResult]) + "\n… (cut)"
			}
			fmt.Fprintf(&b, "\nResult (%s):\n\n```\n%s\n```\n", call.Status, strings.TrimRight(text, "\n"))
			for _, d := range e.Diffs {
				fmt.Fprintf(&b, "\nChanged %s\n", d.Path)
			}
		case EventApprovalRequested:
			fmt.Fprintf(&b, "\n_%s asked the user to approve %s_\n", who(e.Agent), ApprovalTitle(e))
		case EventApprovalResolved:
			switch e.Status {
			case ApprovalApproved:
				b.WriteString("\n_The user approved it._\n")
			case ApprovalDenied:
				fmt.Fprintf(&b, "\n_Refused: %s._\n", cmp.Or(e.Error, "no reason given"))
			default:
				b.WriteString("\n_Not answered: the run ended first._\n")
			}
		case loop.EventResponse:
			if e.Agent == 0 {
				fmt.Fprintf(&b, "\n## Zero\n\n%s\n", e.Text)
			} else {
				fmt.Fprintf(&b, "\n**%s answered:** %s\n", who(e.Agent), e.Text)
			}
		case loop.EventWarning:
			fmt.Fprintf(&b, "\n> Warning: %s\n", e.Text)
		case loop.EventError:
			lastErr = cmp.Or(e.Error, e.Text)
			fmt.Fprintf(&b, "\n> Error: %s\n", lastErr)
		case loop.EventRunEnded:
			switch {
			case e.StopReason == loop.StopResponse:
			case e.Error == lastErr:
				fmt.Fprintf(&b, "\n_Run ended: %s_\n", e.StopReason)
			default:
				fmt.Fprintf(&b, "\n_Run ended: %s%s_\n", e.StopReason, errSuffix(e.Error))
			}
		}
	}
	return b.String()
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
