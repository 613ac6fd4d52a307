package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/mcpconf"
)

// passed is the line printed on stderr when the scenario ran through:
// e2e's TestConformance looks for it, since the suite's --suite mode
// judges by the servers' checks only, not by the client's exit code.
const passed = "mcpconformance: passed"

// cimdURL is the client ID metadata document URL auth/basic-cimd expects
// a client to use as its client_id (src/scenarios/client/auth/basic-cimd.ts):
// the suite's authorization server accepts it without fetching it.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// call is the tool a scenario needs called, with its arguments.
type call struct {
	tool string
	args map[string]any
}

// calls are the scenarios that are not auth/*: "initialize" only lists;
// the others call their own tool. An auth scenario calls the first tool
// its server lists.
var calls = map[string]*call{
	"initialize":                          nil,
	"tools_call":                          {"add_numbers", map[string]any{"a": 5, "b": 3}},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", map[string]any{}},
	"sse-retry":                           {"test_reconnection", map[string]any{}},
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT (src/schemas/context.ts):
// what a scenario gives its client beyond the server's URL.
type scenarioContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if len(os.Args) != 2 || scenario == "" {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME [MCP_CONFORMANCE_CONTEXT=JSON] mcpconformance SERVER_URL\n(the MCP conformance suite runs it: conformance client --command mcpconformance)")
		os.Exit(2)
	}
	if err := run(scenario, os.Args[1], os.Getenv("MCP_CONFORMANCE_CONTEXT"), log); err != nil {
		fmt.Fprintf(os.Stderr, "mcpconformance: scenario %s failed: %v\n", scenario, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, passed)
}

// run plays one scenario against the server at url.
func run(scenario, url, contextJSON string, log *slog.Logger) error {
	want, known := calls[scenario]
	auth := strings.HasPrefix(scenario, "auth/")
	if !known && !auth {
		return fmt.Errorf("unknown scenario: teach internal/mcpconformance which tool it calls (known: %s and auth/*)", strings.Join(slices.Sorted(maps.Keys(calls)), ", "))
	}
	srv := mcpconf.Server{Name: "conformance", URL: url}
	if auth {
		var c scenarioContext
		if contextJSON != "" {
			if err := json.Unmarshal([]byte(contextJSON), &c); err != nil {
				return fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not the suite's JSON: %w", err)
			}
		}
		srv.OAuth = oauthOf(scenario, c)
	}

	dir, err := os.MkdirTemp("", "mcpconformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	pool, errs := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{
		// Generous (a scenario takes about a second, a login included),
		// and under the 60 s e2e gives the suite's --timeout, so that a
		// client that waits in vain says for what before it is killed.
		InitTimeout:   40 * time.Second,
		CallTimeout:   40 * time.Second,
		Logger:        log,
		Version:       "conformance",
		HTTPTransport: oauthTransport(dir, log),
		Ask:           acceptAsIs,
		Roots:         func() []string { return []string{dir} },
	})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	defer pool.Close()

	ctx := context.Background()
	tools, errs := pool.List(ctx)
	if len(errs) > 0 {
		return fmt.Errorf("listing the tools: %w", errors.Join(errs...))
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	log.Info("listed the tools", "tools", names)
	if auth {
		if len(tools) == 0 {
			return errors.New("the server listed no tool to call")
		}
		want = &call{tools[0].Name, map[string]any{}}
	}
	if want == nil {
		return nil
	}
	if !slices.Contains(names, want.tool) {
		return fmt.Errorf("the server does not list the tool %s (it lists %v)", want.tool, names)
	}
	res, err := pool.Call(ctx, srv.Name, want.tool, want.args)
	if err != nil {
		return fmt.Errorf("calling %s: %w", want.tool, err)
	}
	if res.IsError {
		return fmt.Errorf("%s answered an error: %s", want.tool, res.Text)
	}
	log.Info("called the tool", "tool", want.tool, "result", res.Text)
	return nil
}

// oauthOf is the oauth: entry of config.yaml a user would write for the
// scenario: nothing (everything discovered from the server's 401) unless
// the scenario hands the client a pre-registered client, a client
// credentials grant, or expects a client ID metadata document.
func oauthOf(scenario string, c scenarioContext) *mcpconf.OAuth {
	o := &mcpconf.OAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret, PrivateKey: c.PrivateKeyPEM, SigningAlg: c.SigningAlgorithm}
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		o.Grant = "client_credentials"
	}
	if scenario == "auth/basic-cimd" {
		o.ClientMetadataURL = cimdURL
	}
	if o.ClientID == "" && o.Grant == "" && o.ClientMetadataURL == "" {
		return nil
	}
	return o
}

// acceptAsIs is the person who accepts every question without touching
// the form: whatever the answer needs beyond that (the asker's defaults)
// is Zero's to fill in.
func acceptAsIs(ctx context.Context, q ask.Question) (ask.Answer, error) {
	return ask.Answer{Action: ask.Accept, Content: map[string]any{}}, nil
}
