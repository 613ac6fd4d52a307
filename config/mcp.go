package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/zeroagent/zero/mcpconf"
	"go.yaml.in/yaml/v3"
)

var mcpName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// mcpServers reads the mcp_servers section: a mapping of server names.
func (p *fileParser) mcpServers(v *yaml.Node) {
	if isNull(v) {
		return
	}
	if v.Kind != yaml.MappingNode {
		p.fail(v.Line, "mcp_servers", "must be a mapping of server names to their settings, got "+describe(v))
		return
	}
	if p.servers == nil {
		p.servers = map[string]mcpconf.Server{}
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, sv := v.Content[i], resolve(v.Content[i+1])
		key := "mcp_servers." + k.Value
		if k.Kind != yaml.ScalarNode || !mcpName.MatchString(k.Value) {
			p.fail(k.Line, "mcp_servers", "a server name is letters, digits, '.', '_' or '-', got "+describe(k))
			continue
		}
		if _, dup := p.servers[k.Value]; dup {
			p.fail(k.Line, key, "duplicate server")
			continue
		}
		s := mcpconf.Server{Name: k.Value}
		if err := sv.Decode(&s); err != nil {
			p.fail(sv.Line, key, fmt.Sprintf("must be a mapping of command, args, env, cwd, url, headers, disabled, tools: %v", err))
			continue
		}
		if (s.Command == "") == (s.URL == "") {
			p.fail(sv.Line, key, "needs either command (a program started on stdio) or url (streamable HTTP), not both")
			continue
		}
		if s.URL != "" {
			if msg := checkURL(s.URL); msg != "" {
				p.fail(sv.Line, key+".url", msg)
				continue
			}
		}
		s.Origin = p.layer + " " + p.path + ":" + strconv.Itoa(k.Line)
		p.servers[k.Value] = s
	}
}

// MCPServerNames are the configured servers' names, sorted.
func (e *Effective) MCPServerNames() []string {
	var names []string
	for n := range e.MCPServers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
