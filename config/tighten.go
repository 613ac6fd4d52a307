package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Ignored is a value a workspace's config file set and Load did not use,
// because it would have loosened what the user's own settings allow.
type Ignored struct {
	Key    string
	Value  string // as written, formatted
	Origin string // "project <path>:<line>"
	Kept   string // the value in force instead
	Why    string
}

// String is the warning the user is shown.
func (i Ignored) String() string {
	return fmt.Sprintf("%s: %s = %s is ignored (%s); %s stays in force", i.Origin, i.Key, i.Value, i.Why, i.Kept)
}

// A workspace may be a repository someone else wrote, and its config file
// loads without asking. So the keys that make up policy (what the agent
// may do without asking, what its commands can reach) may only be made
// stricter from there: tighter reports whether the project's value is at
// least as strict as the one it would replace, and why not.
var tighter = map[string]func(project, current any) (bool, string){
	"approval":        ranked("approval would be looser", "ask", "sandbox", "auto"),
	"sandbox.backend": ranked("a weaker sandbox", "docker", "auto", "local"),
	"sandbox.network": func(p, c any) (bool, string) {
		return p == c || p == "none", "only \"none\" may be chosen by a workspace"
	},
	"sandbox.image":     equalOnly("a workspace cannot choose the image"),
	"sandbox.user":      equalOrEmpty("a workspace cannot choose who commands run as"),
	"sandbox.provision": equalOnly("a workspace cannot change the provisioning script, which runs as root"),
	// A limit counts from a workspace only when it is at least as strict as
	// the one in force without it: the user's value, or the sandbox's
	// default when the user set none (0 or ""), never "no limit" unless
	// that is what the sandbox would apply.
	"sandbox.memory": func(p, c any) (bool, string) {
		return lowerLimit(sizeBytes(p.(string)), inForce(sizeBytes(c.(string)), DefaultSandboxMemory)), "a workspace may only lower the memory limit"
	},
	"sandbox.cpus": func(p, c any) (bool, string) {
		return lowerLimit(p.(float64), c.(float64)), "a workspace may only lower the CPU limit" // no default: none
	},
	"sandbox.pids": func(p, c any) (bool, string) {
		return lowerLimit(p.(int), inForce(c.(int), DefaultSandboxPids)), "a workspace may only lower the process limit"
	},
	// Where the agent's searches go, and whether Zero fetches inside your network.
	"search.url": equalOnly("a workspace cannot choose where the agent's searches are sent"),
	"document_query.allow_private": func(p, c any) (bool, string) {
		return p == c || p == false, "a workspace may not let Zero fetch private addresses"
	},
	// The loop's bounds keep a runaway model from spending your tokens.
	"limits.misformat":         atMost("a workspace may only lower the loop's limits"),
	"limits.repeat":            atMost("a workspace may only lower the loop's limits"),
	"limits.subordinate_depth": atMost("a workspace may only lower the loop's limits"),
	"limits.critical_retries":  atMost("a workspace may only lower the loop's limits"),
	// A budget from a workspace counts when it is set and no looser.
	"limits.tokens": func(p, c any) (bool, string) {
		return lowerLimit(p.(int), c.(int)), "a workspace may only lower a run's token budget"
	},
	"limits.cost": func(p, c any) (bool, string) {
		return lowerLimit(p.(float64), c.(float64)), "a workspace may only lower a run's cost budget"
	},
}

// tighterModelKey judges the per-model keys a workspace may only lower:
// rate limits (0 = none) and deadlines (0 = the default, -1 = none); and
// api_key_env, which a workspace may only empty (send no key): naming
// another variable would send that variable's value to the endpoint.
func tighterModelKey(key string) func(p, c any) (bool, string) {
	field := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case field == "api_key_env":
		return equalOrEmpty("a workspace cannot choose which secret is sent")
	case strings.Contains(key, ".price."):
		// A lower price would let a run spend more before limits.cost.
		return func(p, c any) (bool, string) {
			return p.(float64) >= c.(float64), "a workspace may only raise a model's price (a lower one would loosen limits.cost)"
		}
	case strings.Contains(key, ".rate_limit."):
		return func(p, c any) (bool, string) {
			return lowerLimit(p.(int), c.(int)), "a workspace may only lower a rate limit"
		}
	case strings.Contains(key, ".timeouts."):
		d := DefaultTimeouts
		def := map[string]time.Duration{"header": d.Header, "idle": d.Idle, "total": d.Total}[field]
		return func(p, c any) (bool, string) {
			pd, cd := p.(time.Duration), c.(time.Duration)
			switch {
			case cd == 0:
				cd = def
			case cd < 0:
				cd = math.MaxInt64
			}
			return pd > 0 && pd <= cd, "a workspace may only shorten a model deadline"
		}
	}
	return nil
}

// The Docker sandbox's limits when the configuration sets none
// (sandbox.DefaultDockerMemory and DefaultDockerPids; cmd/zero's
// TestSandboxDefaultsAgree keeps them equal).
const (
	DefaultSandboxMemory = 4 << 30
	DefaultSandboxPids   = 4096
)

// inForce is the limit that applies for a configured value c: def when c
// is 0 (unset: the sandbox's default).
func inForce[N int | float64](c, def N) N {
	if c == 0 {
		return def
	}
	return c
}

// lowerLimit reports whether limit p, where 0 is none, is set and no
// looser than c.
func lowerLimit[N int | float64](p, c N) bool { return p > 0 && (c == 0 || p <= c) }

// atMost accepts a project value no greater than the current one.
func atMost(why string) func(p, c any) (bool, string) {
	return func(p, c any) (bool, string) { return p.(int) <= c.(int), why }
}

// ranked orders values from the strictest; unknown ones are never tighter.
func ranked(why string, order ...string) func(p, c any) (bool, string) {
	return func(p, c any) (bool, string) {
		pi, ci := slices.Index(order, p.(string)), slices.Index(order, c.(string))
		return pi >= 0 && (ci < 0 || pi <= ci), why
	}
}

func equalOnly(why string) func(p, c any) (bool, string) {
	return func(p, c any) (bool, string) { return p == c, why }
}

func equalOrEmpty(why string) func(p, c any) (bool, string) {
	return func(p, c any) (bool, string) { return p == c || p == "", why }
}

// sizeBytes reads a size such as "512m" or "4g" (see checkSize); "" and
// anything unreadable are 0, "no limit".
func sizeBytes(s string) float64 {
	s = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.ToLower(s), "b")))
	s = strings.TrimSuffix(s, "i")
	mult := 1.0
	if s != "" {
		if i := strings.IndexByte("kmgt", s[len(s)-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0
	}
	return f * mult
}

// tighten filters a project file's settings against the values of the
// sources below it (vals): policy keys that would loosen are dropped and
// reported; sandbox.hide is added to, not replaced.
func tighten(project map[string]setting, vals map[string]setting) []Ignored {
	var ignored []Ignored
	for _, key := range Keys() { // a stable order for the warnings
		s, ok := project[key]
		if !ok {
			continue
		}
		if key == "sandbox.hide" {
			merged := slices.Clone(vals[key].val.([]string))
			for _, p := range s.val.([]string) {
				if !slices.Contains(merged, p) {
					merged = append(merged, p)
				}
			}
			project[key] = setting{val: merged, origin: s.origin}
			continue
		}
		ok, why := true, ""
		check := tighter[key]
		if check == nil && strings.HasPrefix(key, "models.") {
			check = tighterModelKey(key)
		}
		if check != nil {
			ok, why = check(s.val, vals[key].val)
		}
		if ok {
			continue
		}
		delete(project, key)
		ignored = append(ignored, Ignored{Key: key, Value: scalar(s.val), Origin: s.origin,
			Kept: scalar(vals[key].val) + " (" + vals[key].origin + ")", Why: why})
	}
	return ignored
}
