package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/zeroagent/zero/mcpauth"
	"github.com/zeroagent/zero/mcpconf"
)

// oauthTransport is Zero's OAuth for URL servers (package mcpauth), its
// tokens kept in dir, its browser browse: what a session gets from app,
// with the person played.
func oauthTransport(dir string, log *slog.Logger) func(mcpconf.Server, http.RoundTripper) http.RoundTripper {
	return mcpauth.New(mcpauth.Options{Dir: dir, Open: browse(log), Logger: log}).Transport
}

// browse is the person's browser opening the authorization page: the
// suite's authorization server answers /authorize at once with a redirect
// to the redirect_uri (code and state in the query), which this GET
// follows into Zero's loopback listener. Like a browser it does not hold
// up the login that opened it; what the pages answered is logged.
func browse(log *slog.Logger) func(ctx context.Context, authURL string) error {
	client := &http.Client{Timeout: time.Minute}
	return func(ctx context.Context, authURL string) error {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, authURL, nil)
		if err != nil {
			return fmt.Errorf("the authorization URL: %w", err)
		}
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				log.Error("the browser could not open the authorization page", "err", err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
			// The final URL carries the code: only its host and path are logged.
			at := resp.Request.URL.Host + resp.Request.URL.Path
			if resp.StatusCode >= 400 {
				log.Error("the authorization page answered an error", "at", at, "status", resp.Status, "body", strings.TrimSpace(string(body)))
				return
			}
			log.Info("the browser followed the authorization page", "at", at, "status", resp.Status)
		}()
		return nil
	}
}
