// Command fakellm serves a scripted OpenAI-compatible chat endpoint on
// loopback, for demos and end-to-end tests without a real model:
//
//	fakellm -script replies.json [-addr 127.0.0.1:0]
//
// It prints the base URL (ending in /v1) as the only line on stdout, logs
// each request to stderr, and stops on SIGINT or SIGTERM, logging how many
// requests it answered (and writing the counts as JSON to the -counts file,
// if given: {"requests":N,"memory_requests":M}, memory_requests being Zero's
// requests to the utility model that the server answers itself). The
// script format is llmtest.Script: {"replies":[{"content":"…"}, …]}, with
// "repeat":N to use the replies N times over. It serves OpenAI's chat
// completions (POST /v1/chat/completions) and Responses API (POST
// /v1/responses) from the same script.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/zeroagent/zero/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run serves until ctx is done and returns the exit code: 0 after a clean
// stop, 2 for bad usage, 1 when the server cannot start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "JSON script of replies (required)")
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	counts := fs.String("counts", "", "file to write the request counts to (JSON) when stopping")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *script == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: fakellm -script replies.json [-addr 127.0.0.1:0] [-counts counts.json]")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	sc, err := llmtest.LoadScript(*script)
	if err != nil {
		logger.Error("cannot load script", "err", err)
		return 1
	}
	srv, err := llmtest.Start(*addr, sc, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	defer srv.Close()
	logger.Info("fakellm serving", "url", srv.URL(), "replies", len(sc.Replies))
	if _, err := fmt.Fprintln(stdout, srv.URL()); err != nil {
		logger.Error("cannot write the URL", "err", err)
		return 1
	}
	<-ctx.Done()
	logger.Info("fakellm stopping")
	srv.Close() // waits for the requests being answered, so the counts are whole
	n, m := len(srv.Requests()), len(srv.MemoryRequests())
	logger.Info("fakellm stopped", "requests", n, "memory_requests", m)
	if *counts != "" {
		b, _ := json.Marshal(map[string]int{"requests": n, "memory_requests": m})
		if err := os.WriteFile(*counts, append(b, '\n'), 0o644); err != nil {
			logger.Error("cannot write the counts", "err", err)
			return 1
		}
	}
	return 0
}
