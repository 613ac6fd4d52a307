package commands

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/cut"
)

// MaxArgs is how much of the arguments a command takes.
const MaxArgs = 16 << 10

var (
	// bangRE is Claude Code's !`command`: a command its CLI runs on the
	// host before the prompt is sent.
	bangRE = regexp.MustCompile("!`([^`\n]*)`")
	argRE  = regexp.MustCompile(`\$(ARGUMENTS|[1-9])`)
	// geminiBangRE is Gemini CLI's !{command}.
	geminiBangRE = regexp.MustCompile(`!\{([^}\n]*)\}`)
	// toolRE is a tool's name as Zero spells it (text_editor, github.create_issue).
	toolRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[A-Za-z0-9_-]+)?$`)
)

// Expand is the command's prompt with args in place: $ARGUMENTS is all of
// them, $1…$9 each (split at spaces, "quoted words" kept together); when
// the body names none, the arguments follow it. A !`command` is not run:
// it becomes a request that the agent run it itself (in its sandbox, under
// the approval policy).
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	args = cut.Head(args, MaxArgs) // on a character boundary
	if c.Gemini {
		return c.expandGemini(args)
	}
	pos := splitArgs(args)
	used := false
	body := argRE.ReplaceAllStringFunc(c.Body, func(m string) string {
		used = true
		if m == "$ARGUMENTS" {
			return args
		}
		n, _ := strconv.Atoi(m[1:])
		if n <= len(pos) {
			return pos[n-1]
		}
		return ""
	})
	body = unrun(body, bangRE)
	if !used && args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	return body
}

// expandGemini is Gemini CLI's expansion: {{args}} is the arguments (else
// they follow the prompt), and a !{command} is not run.
func (c Command) expandGemini(args string) string {
	body := c.Body
	used := strings.Contains(body, "{{args}}")
	body = strings.ReplaceAll(body, "{{args}}", args)
	body = unrun(body, geminiBangRE)
	if !used && args != "" {
		body += "\n\n" + args
	}
	return body
}

// unrun replaces each command re finds (its first group) with a request
// that the agent run it itself.
func unrun(body string, re *regexp.Regexp) string {
	ran := false
	body = re.ReplaceAllStringFunc(body, func(m string) string {
		ran = true
		return "(the output of `" + re.FindStringSubmatch(m)[1] + "`)"
	})
	if ran {
		body += "\n\nThe command file asked for the output of the commands marked above; Zero does not run them for it. " +
			"Run each yourself with your tools before you go on."
	}
	return body
}

// splitArgs splits at white space, keeping "double" or 'single' quoted
// words together without their quotes.
func splitArgs(s string) []string {
	var out []string
	var b strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// claudeTools maps Claude Code's tool names (allowed-tools) to Zero's.
var claudeTools = map[string][]string{
	"bash":         {"code_execution_tool"},
	"read":         {"text_editor"},
	"edit":         {"text_editor"},
	"multiedit":    {"text_editor"},
	"write":        {"text_editor"},
	"notebookedit": {"text_editor"},
	"grep":         {"code_execution_tool"},
	"glob":         {"code_execution_tool"},
	"ls":           {"code_execution_tool"},
	"task":         {"call_subordinate"},
	"todowrite":    {"todo"},
	"webfetch":     {"search_engine", "document_query"},
	"websearch":    {"search_engine"},
}

// Tools is the names of Zero's tools that allowed-tools lets the agent
// use, with "response" always among them; nil means the command does not
// narrow them. A name Zero does not know adds nothing (an unknown name
// never widens); a tool's own name (text_editor, an MCP server's
// server.tool) is taken as it is, and Bash(git add:*) counts as Bash.
func (c Command) Tools() []string {
	if c.AllowedTools == nil {
		return nil
	}
	out := []string{"response"}
	add := func(n string) {
		for _, have := range out {
			if have == n {
				return
			}
		}
		out = append(out, n)
	}
	for _, t := range c.AllowedTools {
		name, _, _ := strings.Cut(t, "(")
		name = strings.TrimSpace(name)
		if zs, ok := claudeTools[strings.ToLower(name)]; ok {
			for _, z := range zs {
				add(z)
			}
			continue
		}
		if strings.HasPrefix(name, "mcp__") { // Claude Code's mcp__server__tool
			if parts := strings.SplitN(strings.TrimPrefix(name, "mcp__"), "__", 2); len(parts) == 2 {
				add(parts[0] + "." + parts[1])
			}
			continue
		}
		if toolRE.MatchString(name) {
			add(name) // a Zero tool's own name
		}
	}
	return out
}
