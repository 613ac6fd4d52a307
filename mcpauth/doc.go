// Package mcpauth logs Zero in to MCP servers behind OAuth 2.1, as the MCP
// authorization spec (2025-11-25) has a client do, and keeps the tokens.
//
// A URL server that answers 401 is asked where its authorization server
// is (its protected resource metadata), the person logs in there through
// the browser (`zero mcp login NAME`: Options.Open), and the token goes
// with every later request, refreshed when it expires. A server
// configured for the client credentials grant (oauth.grant) gets its
// token without a person, with the client's secret or signed assertion.
// A session never opens a browser: a server that needs the person fails
// with *LoginRequired, which says what to run.
//
// # Which library does what
//
// mcp-go speaks the protocol and never sees a token: Auth.Transport wraps
// the round tripper of its HTTP requests, adds the Authorization header
// and, when the server refuses, logs in once and sends the request again.
//
// The authorization code grant is go-sdk's auth.AuthorizationCodeHandler
// (github.com/modelcontextprotocol/go-sdk): discovery from the 401's
// WWW-Authenticate (protected resource metadata at the challenge's URL,
// then the well-known URL with the server's path, then at the root; its
// resource checked against the server's URL), the authorization server's
// metadata (RFC 8414 and OpenID Connect, with path insertion), the
// client (a client ID metadata document, else a configured client, else
// dynamic registration), the scopes (the challenge's, else the resource's
// scopes_supported; the union with those granted on a 403
// insufficient_scope), PKCE S256, the resource parameter (RFC 8707), the
// iss check of RFC 9207, the 2025-03-26 fallbacks, and the code exchange
// (on golang.org/x/oauth2). Zero gives it the loopback redirect
// (loopback.go), the scopes asked before and configured (ScopeFilter),
// and an HTTP client (discover.go) that notes the issuer and the
// registration go-sdk does not return, reuses the registration of the last
// login, and stops at metadata for another resource.
//
// Zero's own, on go-sdk's discovery functions (oauthex) and golang-jwt:
// the refresh (x/oauth2 sends no resource parameter on one), and the
// client credentials grant with a secret or a private_key_jwt assertion
// (go-sdk's extauth handler sends no resource, ties its token source to
// the first request's context and has no private_key_jwt) (token.go,
// cc.go, jwt.go). The tokens are files of the user (store.go).
package mcpauth
