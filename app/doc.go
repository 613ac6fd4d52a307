// Package app is Zero's one composition root. From the configuration
// (config), the user's trust in the workspace's code (trust), the profiles,
// the store, the sandbox, the built-in, user and MCP tools, it builds what
// every face and subcommand runs on: an App per workspace (its settings,
// its sandbox, its tools and model clients) and a Host over them, whose
// server.Manager the faces are handed (cmd/zero does the handing). The
// approval policy of each session is set here, from server.PolicyFor, and
// nowhere else.
//
// What it reads of the process's environment goes through an Env, so that
// tests build hosts side by side in one process (internal/servertest).
package app
