package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/secrets"
)

// doctorCommand checks, in order, what the configured setup needs and says
// for each what is wrong and how to fix it. It exits 0 only when all is in
// order.
func doctorCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero doctor", args, true, doctorHelp, stdout, stderr)
	if a == nil {
		if code == 2 { // the configuration itself is broken: that is the finding
			fmt.Fprintln(stdout, "✗ configuration: see the error above")
			return 1
		}
		return code
	}
	// An unknown profile is the same usage error as in every command.
	if code := a.ProfileGate(stderr); code != 0 {
		return code
	}
	// The report says each finding once: the warnings the checks would log
	// (an MCP server that did not start) are those findings again. ZERO_LOG
	// still asks for the logs.
	if os.Getenv("ZERO_LOG") == "" {
		a.Logger = slog.New(secrets.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}), app.LogSecrets.Load))
	}
	results := app.Diagnose(ctx, a)
	failed := false
	for _, r := range results {
		mark := "✓"
		switch {
		case !r.OK:
			mark, failed = "✗", true
		case r.Note:
			mark = "!"
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", mark, r.Name, r.Detail)
		if r.Fix != "" && (!r.OK || r.Note) {
			fmt.Fprintf(stdout, "    fix: %s\n", r.Fix)
		}
	}
	if failed {
		return 1
	}
	return 0
}
