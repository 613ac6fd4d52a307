// Command mcpconformance is Zero's MCP client as the official MCP
// conformance suite (npm @modelcontextprotocol/conformance, pinned in
// e2e/package.json) drives a client: `conformance client --command BIN`
// starts each scenario's servers on localhost and runs `BIN <server URL>`
// with the scenario's name in MCP_CONFORMANCE_SCENARIO and, for some, its
// data in MCP_CONFORMANCE_CONTEXT (JSON: a pre-registered client's ID and
// secret, a private key...). The suite then judges what the servers saw.
//
// It is not a client of its own: it is Zero's pool (mcpclient.NewPool)
// over one server, with Zero's OAuth (mcpauth) as its HTTP transport and
// a token store in a temporary folder, exactly as a session would use a
// server from config.yaml. Only the person is played: a question
// (elicitation) is accepted with nothing filled in, so that Zero's own
// defaults answer it, and "the browser" that opens the authorization page
// is an HTTP GET that follows the authorization server's redirect into
// Zero's loopback listener, as `zero mcp login` would receive it.
//
// Per scenario it lists the tools (which connects, initializes and logs
// in) and calls the tool the scenario needs: add_numbers {a: 5, b: 3} for
// tools_call, the scenario's own tool for elicitation and sse-retry, the
// first tool listed for the auth scenarios. It exits 1 with the error on
// stderr when anything failed, else it prints "mcpconformance: passed" on
// stderr (the suite keeps stderr per scenario; e2e's TestConformance reads
// that line, since the suite in --suite mode ignores a client's exit
// code). Logs go to stderr only; stdout stays empty.
//
// e2e/conformance_test.go builds it and runs the suite; the scenarios
// Zero cannot pass are in e2e/conformance-expected.yml, each with why.
package main
