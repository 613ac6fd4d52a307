package term

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/zeroagent/zero/server"
)

// runUsage is the line the chat shows after a run: what its model calls
// used ("used 9.0k tokens in (40% cached), 129 out, cost 0.0123").
func runUsage(u *server.Usage) string {
	return "used " + u.Line()
}

// UsageLines are a session's totals, all and by role, as /cost and `zero
// sessions show` print them; "no model calls yet" when there were none.
func UsageLines(u *server.Usage) []string {
	if u == nil {
		return []string{"no model calls yet"}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(name string, c *server.UsageCount) {
		if c != nil {
			fmt.Fprintf(tw, "%s\t%d calls\t%s\n", name, c.Calls, c.Line())
		}
	}
	row("all", &u.UsageCount)
	if r := u.Roles; r != nil {
		row("chat", r.Chat)
		row("utility", r.Utility)
		row("embedding", r.Embedding)
	}
	tw.Flush()
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	switch {
	case u.Estimated:
		lines = append(lines, "~: counted by Zero where the endpoint reported no usage")
	case u.Cost == nil:
		lines = append(lines, "cost unknown: the endpoint reports none and models.<role>.price is not set")
	case u.CostPartial:
		lines = append(lines, "at least: some calls' cost is unknown (no reported cost, no models.<role>.price)")
	}
	return lines
}
