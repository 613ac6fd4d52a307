package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

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
			p.fail(sv.Line, key, fmt.Sprintf("must be a mapping of command, args, env, cwd, url, headers, oauth, disabled, tools: %v", err))
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
		if s.OAuth != nil {
			if s.URL == "" {
				p.fail(sv.Line, key+".oauth", "is for a url server (OAuth protects HTTP); a stdio server gets its credentials in env")
				continue
			}
			if msg := checkOAuth(s.OAuth); msg != "" {
				p.fail(sv.Line, key+".oauth", msg)
				continue
			}
		}
		s.Origin = p.layer + " " + p.path + ":" + strconv.Itoa(k.Line)
		p.servers[k.Value] = s
	}
}

// signingAlgs are the algorithms a private_key_jwt assertion may be
// signed with.
var signingAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// checkOAuth checks what of a server's oauth settings can be checked
// without the server: the grant and what it needs. It never quotes the
// secret or the key.
func checkOAuth(o *mcpconf.OAuth) string {
	switch o.Grant {
	case "", "authorization_code":
		if o.PrivateKey != "" {
			return "private_key signs the client_credentials grant only (grant: client_credentials)"
		}
	case "client_credentials":
		if o.ClientID == "" || (o.ClientSecret == "") == (o.PrivateKey == "") {
			return "grant client_credentials needs client_id and either client_secret or private_key (not both)"
		}
		if o.ClientMetadataURL != "" {
			return "client_metadata_url is for the authorization_code grant"
		}
	default:
		return "grant must be authorization_code (the default: the user logs in, `zero mcp login NAME`) or client_credentials, got " + strconv.Quote(o.Grant)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return "client_secret needs the client_id it belongs to"
	}
	if o.SigningAlg != "" && (o.PrivateKey == "" || !slices.Contains(signingAlgs, o.SigningAlg)) {
		return "signing_alg goes with private_key and is one of " + strings.Join(signingAlgs, ", ")
	}
	if u := o.ClientMetadataURL; u != "" {
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || pu.Host == "" || strings.Trim(pu.Path, "/") == "" {
			return "client_metadata_url must be an https:// URL with a path (the client ID metadata document), got " + strconv.Quote(u)
		}
	}
	return ""
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
