package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Models lists the models the endpoint serves (GET /models), for `zero
// doctor`: it proves the endpoint answers and the key is accepted. Errors
// are *APIError for HTTP failures, never carrying the key.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.opts.BaseURL, "/")+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list models: model connection failed: %s", redact(err.Error(), c.opts.APIKey))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &APIError{StatusCode: resp.StatusCode, Message: redact(errorMessage(body, resp.StatusCode), c.opts.APIKey), NoKey: c.opts.APIKey == ""}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct { // Ollama's native /api/tags shape, served by some proxies
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("list models: the endpoint answered something that is not a model list: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, m := range list.Models {
		ids = append(ids, m.Name)
	}
	return ids, nil
}
