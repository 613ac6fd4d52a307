package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// models.<role>.price prices a role's model; unset, the cost is unknown
// (not free). The utility model takes chat's price only when it is chat's
// model; embeddings never do.
func TestPrice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user string
		role       string
		want       Price
		known      bool
	}{
		{"unset", "", "chat", Price{}, false},
		{"set", "models:\n  chat:\n    price: {input: 3, output: 15, cached: 0.3}\n", "chat", Price{3, 15, 0.3}, true},
		{"cached as input", "models:\n  chat:\n    price: {input: 3, output: 15}\n", "chat", Price{3, 15, 3}, true},
		{"free, said so", "models:\n  chat:\n    price: {input: 0}\n", "chat", Price{}, true},
		{"utility: chat's model and price", "models:\n  chat:\n    model: m\n    price: {input: 1, output: 2}\n", "utility", Price{1, 2, 1}, true},
		{"utility: another model, no price", "models:\n  chat:\n    model: m\n    price: {input: 1, output: 2}\n  utility:\n    model: small\n", "utility", Price{}, false},
		{"utility: its own", "models:\n  chat:\n    model: m\n  utility:\n    model: small\n    price: {output: 0.5}\n", "utility", Price{Output: 0.5}, true},
		{"embedding: never chat's", "models:\n  chat:\n    price: {input: 1}\n  embedding:\n    model: e\n", "embedding", Price{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, _, _ := layout(t, tc.user, "")
			e, err := Load(src)
			if err != nil {
				t.Fatal(err)
			}
			got, known := e.Price(tc.role)
			if diff := cmp.Diff(tc.want, got); diff != "" || known != tc.known {
				t.Errorf("Price(%s) = %+v, %v; want %+v, %v", tc.role, got, known, tc.want, tc.known)
			}
		})
	}
}

// A negative price or budget is refused, naming the key.
func TestPriceAndBudgetErrors(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"models:\n  chat:\n    price: {input: -1}\n": "models.chat.price.input: must not be negative, got -1",
		"limits:\n  tokens: -5\n":                    "limits.tokens: must not be negative, got -5",
		"limits:\n  cost: -0.5\n":                    "limits.cost: must not be negative, got -0.5",
		"limits:\n  cost: lots\n":                    "limits.cost: must be a number",
	} {
		src, _, _ := layout(t, file, "")
		_, err := Load(src)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", file, err, want)
		}
	}
	src, _, _ := layout(t, "limits:\n  tokens: 200000\n  cost: 1.5\n", "")
	e, err := Load(src)
	if err != nil || e.Limits.Tokens != 200000 || e.Limits.Cost != 1.5 {
		t.Errorf("limits = %+v, %v", e.Limits, err)
	}
}

// A workspace may lower a budget (or set one), never raise or remove it,
// and may raise a price, never lower it (which would loosen limits.cost).
func TestWorkspaceBudgets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, user, project, key string
		want                     any
		ignored                  bool
	}{
		{"tokens set", "", "limits:\n  tokens: 1000\n", "limits.tokens", 1000, false},
		{"tokens lowered", "limits:\n  tokens: 5000\n", "limits:\n  tokens: 1000\n", "limits.tokens", 1000, false},
		{"tokens raised", "limits:\n  tokens: 5000\n", "limits:\n  tokens: 9000\n", "limits.tokens", 5000, true},
		{"tokens removed", "limits:\n  tokens: 5000\n", "limits:\n  tokens: 0\n", "limits.tokens", 5000, true},
		{"cost raised", "limits:\n  cost: 1\n", "limits:\n  cost: 2\n", "limits.cost", 1.0, true},
		{"cost lowered", "limits:\n  cost: 1\n", "limits:\n  cost: 0.25\n", "limits.cost", 0.25, false},
		{"price lowered", "models:\n  chat:\n    price: {input: 3}\n", "models:\n  chat:\n    price: {input: 0}\n", "models.chat.price.input", 3.0, true},
		{"price raised", "models:\n  chat:\n    price: {input: 3}\n", "models:\n  chat:\n    price: {input: 5}\n", "models.chat.price.input", 5.0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, _, _ := layout(t, tc.user, tc.project)
			e, err := Load(src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, e.get(tc.key)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.key, diff)
			}
			if got := len(e.Ignored()) > 0; got != tc.ignored {
				t.Errorf("ignored = %+v, want ignored %v", e.Ignored(), tc.ignored)
			}
		})
	}
}
