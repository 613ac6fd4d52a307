package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/tools"
)

// printConfig prints the effective configuration as config.Print does,
// with the value in force where a zero value stands for a default (an
// empty base_url is OpenAI's endpoint, a memory of "" is 4g, a timeout of 0
// is 300 s), and "(default)" where the value comes from Zero's defaults.
func printConfig(w io.Writer, cfg *config.Effective) error {
	var buf bytes.Buffer
	if err := cfg.Print(&buf); err != nil {
		return err
	}
	type line struct{ text, comment string }
	var lines []line
	var path []string // the section keys above the line
	width := 0
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := configLine.FindStringSubmatch(sc.Text())
		if m == nil { // a comment line, or one this does not understand: as it is
			lines = append(lines, line{text: sc.Text()})
			continue
		}
		indent, name, value, comment := m[1], m[2], m[3], m[4]
		depth := len(indent) / 2
		path = append(path[:min(depth, len(path))], name)
		if value == "" && comment == "" { // a section
			lines = append(lines, line{text: sc.Text()})
			continue
		}
		key := strings.Join(path, ".")
		// A price's 0 that a source set is free; only one nobody set is unknown.
		if shown, ok := inForce(key, value); ok && (!strings.Contains(key, ".price.") || strings.Contains(comment, "default")) {
			value = shown
		}
		if rest, ok := strings.CutPrefix(comment, "default"); ok {
			comment = "(default)" + rest
		}
		text := indent + name + ": " + value
		width = max(width, len(text))
		lines = append(lines, line{text, comment})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l.text)
		if l.comment != "" {
			bw.WriteString(strings.Repeat(" ", max(0, width-len(l.text))+2) + "# " + l.comment)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// configLine is one "key: value  # comment" line of config.Print.
var configLine = regexp.MustCompile(`^( *)([a-z_]+):(?: (.*?))?(?: {2,}# (.*))?$`)

// inForce is what a zero value of key stands for, as the code that reads
// the key applies it; ok is false when the value is what is in force.
func inForce(key, value string) (string, bool) {
	zero := value == `""` || value == "0" || value == "[]"
	if !zero {
		return "", false
	}
	if role, leaf, ok := strings.Cut(strings.TrimPrefix(key, "models."), "."); ok && strings.HasPrefix(key, "models.") {
		switch leaf {
		case "base_url":
			return llm.DefaultBaseURL, true
		case "model":
			if role == "embedding" {
				return "<not set: memories are searched by keywords>", true
			}
			return "<not set>", true
		case "context_length":
			if role == "embedding" {
				return "0 (not used: embeddings are sent as they are)", true
			}
		case "max_output_tokens":
			switch role {
			case "chat":
				return "0 (a quarter of the context window, at most 8192)", true
			case "utility":
				return "0 (2048)", true
			}
			return "0 (not used)", true
		case "tool_protocol":
			if role == "embedding" {
				return `"" (not used)`, true
			}
			return "auto (native tool calls where the endpoint takes them, else Agent Zero's JSON)", true
		case "vision":
			if role != "chat" {
				return `"" (not used)`, true
			}
			return "auto (images are sent unless the endpoint says or shows the model cannot see them)", true
		case "rate_limit.requests", "rate_limit.input_tokens", "rate_limit.output_tokens":
			return "0 (no limit)", true
		case "price.input", "price.output", "price.cached":
			return "<not set: the cost is unknown unless the endpoint reports it>", true
		case "timeouts.header":
			return fmt.Sprint(config.DefaultTimeouts.Header), true
		case "timeouts.idle":
			return fmt.Sprint(config.DefaultTimeouts.Idle), true
		case "timeouts.total":
			return fmt.Sprint(config.DefaultTimeouts.Total), true
		}
		return "", false
	}
	switch key {
	case "sandbox.memory":
		return fmt.Sprintf("%dg", config.DefaultSandboxMemory>>30), true
	case "sandbox.cpus", "limits.tokens", "limits.cost":
		return "0 (no limit)", true
	case "sandbox.pids":
		return fmt.Sprint(config.DefaultSandboxPids), true
	case "sandbox.user":
		return "<the workspace's owner>", true
	case "sandbox.hide":
		return "[] (besides the built-in credential folders and sockets)", true
	case "sandbox.provision":
		return "<built-in: a Python venv at /opt/venv>", true
	case "search.url":
		return "<not set: no search_engine tool>", true
	case "search.timeout":
		return fmt.Sprint(tools.DefaultSearchTimeout), true
	case "document_query.timeout":
		return fmt.Sprint(tools.DefaultDocumentTimeout), true
	}
	return "", false
}
