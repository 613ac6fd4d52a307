package config

import (
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type kind int

const (
	kindString kind = iota
	kindInt
	kindFloat
	kindList // []string: a YAML list, or comma-separated in a flag or variable
	kindBool
	kindDuration // time.Duration: a Go duration ("20s", "1m30s") or, as before, whole seconds
)

// leaf is one configurable value.
type leaf struct {
	key    string
	index  []int // reflect field index inside Config
	kind   kind
	check  func(any) string // "" = fine; else what is wrong
	secret bool             // never quote the value in an error (it may be a pasted key)
}

var (
	// leaves lists every value in Config's field order, which is also Print's order.
	leaves []leaf
	// leafByKey indexes leaves by dotted key.
	leafByKey = map[string]*leaf{}
	// sections maps a section's dotted key ("" for the top) to its child names in order.
	sections = map[string][]string{}
)

func init() {
	collect(reflect.TypeFor[Config](), "", nil)
	for i := range leaves {
		leaves[i].check, leaves[i].secret = rule(leaves[i].key)
		leafByKey[leaves[i].key] = &leaves[i]
	}
}

// collect walks Config's type by yaml tags, so the schema cannot drift from the struct.
func collect(t reflect.Type, prefix string, index []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("yaml")
		key := join(prefix, name)
		idx := append(slices.Clone(index), i)
		sections[prefix] = append(sections[prefix], name)
		switch f.Type.Kind() {
		case reflect.Struct:
			sections[key] = nil
			collect(f.Type, key, idx)
		case reflect.String:
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindString})
		case reflect.Int64:
			if f.Type != reflect.TypeFor[time.Duration]() {
				panic("config: unsupported field type " + f.Type.String())
			}
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindDuration})
		case reflect.Int:
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindInt})
		case reflect.Float64:
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindFloat})
		case reflect.Bool:
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindBool})
		case reflect.Slice:
			if f.Type.Elem().Kind() != reflect.String {
				panic("config: unsupported field type " + f.Type.String())
			}
			leaves = append(leaves, leaf{key: key, index: idx, kind: kindList})
		default:
			panic("config: unsupported field type " + f.Type.String())
		}
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

var (
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sizeExpr = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?\s*([kKmMgGtT][iI]?)?[bB]?$`)
)

// rule is the validation of one key beyond its type.
func rule(key string) (check func(any) string, secret bool) {
	last := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case strings.HasSuffix(key, ".base_url"):
		return checkURL, false
	case strings.HasSuffix(key, ".api_key_env"):
		return checkEnvName, true
	case strings.HasPrefix(key, "models.") && (last == "context_length" || strings.Contains(key, ".rate_limit.")):
		return atLeast(0), false
	case strings.HasPrefix(key, "models.") && last == "max_output_tokens":
		return noneOrAtLeast0Count, false
	case strings.HasPrefix(key, "models.") && last == "tool_protocol":
		return checkToolProtocol, false
	case strings.HasPrefix(key, "models.") && last == "vision":
		return checkVision, false
	case strings.HasPrefix(key, "sandbox.timeouts.") || strings.HasPrefix(key, "sandbox.output_timeouts."):
		return atLeast(1), false
	case strings.HasPrefix(key, "models.") && strings.Contains(key, ".timeouts."):
		return noneOrAtLeast0, false
	case strings.HasPrefix(key, "models.") && strings.Contains(key, ".price."):
		return atLeast(0), false
	}
	switch key {
	case "profile":
		return checkProfile, false
	case "approval":
		return oneOf("sandbox", "auto", "ask"), false
	case "sandbox.backend":
		return oneOf("auto", "docker", "local"), false
	case "sandbox.image", "sandbox.network":
		return notEmpty, false
	case "sandbox.memory":
		return checkSize, false
	case "sandbox.hide":
		return checkPaths, false
	case "sandbox.cpus", "sandbox.pids", "limits.subordinate_depth", "limits.critical_retries", "limits.tokens", "limits.cost":
		return atLeast(0), false
	case "limits.misformat", "limits.repeat":
		return atLeast(1), false
	case "memory.recall_interval":
		return atLeast(1), false
	case "search.url":
		return checkURL, false
	case "search.timeout", "document_query.timeout":
		return atLeast(0), false
	}
	return nil, false
}

func atLeast(n float64) func(any) string {
	return func(v any) string {
		var f float64
		switch v := v.(type) {
		case int:
			f = float64(v)
		case float64:
			f = v
		case time.Duration:
			f = v.Seconds()
		}
		if f >= n {
			return ""
		}
		if n == 0 {
			return "must not be negative, got " + format(v)
		}
		return "must be at least " + strconv.FormatFloat(n, 'g', -1, 64) + ", got " + format(v)
	}
}

// noneOrAtLeast0 wants a deadline that is not negative, or -1 (-1s): none.
func noneOrAtLeast0(v any) string {
	if d := v.(time.Duration); d >= 0 || d == NoDeadline {
		return ""
	}
	return "must be at least 0, or -1 for no limit, got " + format(v)
}

// noneOrAtLeast0Count wants a count that is not negative, or -1: none.
func noneOrAtLeast0Count(v any) string {
	if n := v.(int); n >= 0 || n == -1 {
		return ""
	}
	return "must be at least 0 (the default cap), or -1 to send no cap, got " + format(v)
}

// checkToolProtocol wants one of the tool protocols ("" is the default, auto).
func checkToolProtocol(v any) string {
	if v.(string) == "" {
		return ""
	}
	return oneOf("auto", "native", "json")(v)
}

// checkVision wants true, false or auto ("" is the default, auto).
func checkVision(v any) string {
	if v.(string) == "" {
		return ""
	}
	return oneOf("auto", "true", "false")(v)
}

func oneOf(allowed ...string) func(any) string {
	return func(v any) string {
		s := v.(string)
		if slices.Contains(allowed, s) {
			return ""
		}
		quoted := make([]string, len(allowed))
		for i, a := range allowed {
			quoted[i] = strconv.Quote(a)
		}
		msg := "must be one of " + strings.Join(quoted, ", ") + ", got " + strconv.Quote(s)
		if m := closest(s, allowed); m != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		return msg
	}
}

func notEmpty(v any) string {
	if v.(string) == "" {
		return "must not be empty"
	}
	return ""
}

// checkPaths wants absolute paths or paths under the home folder (~/…).
func checkPaths(v any) string {
	for _, p := range v.([]string) {
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") {
			return "must list absolute paths or paths starting with ~/, got " + strconv.Quote(p)
		}
	}
	return ""
}

func checkProfile(v any) string {
	s := v.(string)
	switch {
	case s == "":
		return "must not be empty"
	case strings.ContainsAny(s, `/\`) || s == "." || s == "..":
		return "must be a profile name, not a path, got " + strconv.Quote(s)
	}
	return ""
}

func checkURL(v any) string {
	s := v.(string)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http:// or https:// URL, got " + strconv.Quote(s)
	}
	return ""
}

// checkEnvName never repeats the value: a user who misread the key's meaning pastes the API key
// itself here, and the error must not print it.
func checkEnvName(v any) string {
	s := v.(string)
	if s == "" || envName.MatchString(s) {
		return ""
	}
	return "must be the NAME of the environment variable that holds the API key (such as OPENAI_API_KEY), not the key itself"
}

func checkSize(v any) string {
	s := v.(string)
	if s == "" || sizeExpr.MatchString(s) {
		return ""
	}
	return "must be a size such as 512m or 4g, got " + strconv.Quote(s)
}

// fromString parses a value given as text (environment or flag).
func (l *leaf) fromString(s string) (any, string) {
	switch l.kind {
	case kindInt:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			if _, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64); ferr == nil {
				return nil, "must be a whole number, got " + s
			}
			return nil, "must be a number, got " + strconv.Quote(s)
		}
		return l.validate(n)
	case kindDuration:
		d, msg := parseDuration(strings.TrimSpace(s))
		if msg != "" {
			return nil, msg
		}
		return l.validate(d)
	case kindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, "must be a number, got " + strconv.Quote(s)
		}
		return l.validate(f)
	case kindBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "1", "yes", "on":
			return l.validate(true)
		case "false", "0", "no", "off":
			return l.validate(false)
		}
		return nil, "must be true or false, got " + strconv.Quote(s)
	case kindList:
		var list []string
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return l.validate(list)
	}
	return l.validate(s)
}

func (l *leaf) validate(v any) (any, string) {
	if l.check != nil {
		if msg := l.check(v); msg != "" {
			return nil, msg
		}
	}
	return v, ""
}

// durationMsg is what a value that is no duration is told.
const durationMsg = "must be a duration such as 20s or 1m30s, or a whole number of seconds"

// parseDuration reads a duration as a config file, flag or variable gives it: a whole number of
// seconds (the form before durations, so older files still load) or a Go duration ("20s").
func parseDuration(s string) (time.Duration, string) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, "must be a duration that fits in 290 years, got " + s
		}
		return time.Duration(n) * time.Second, ""
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, durationMsg + ", got " + strconv.Quote(s)
	}
	return d, ""
}

// format renders a value as in YAML, for messages and Print: a duration as Go writes it
// ("1m30s"), but 0 (the default) as 0.
func format(v any) string {
	switch v := v.(type) {
	case time.Duration:
		if v == 0 {
			return "0"
		}
		return v.String()
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []string:
		quoted := make([]string, len(v))
		for i, s := range v {
			quoted[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(quoted, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// envVars are the environment variables Load reads, in the order the package doc lists them.
var envVars = []struct{ name, key string }{
	{"ZERO_MODEL", "models.chat.model"},
	{"OPENAI_BASE_URL", "models.chat.base_url"},
	{"ZERO_UTILITY_MODEL", "models.utility.model"},
	{"ZERO_TOOL_PROTOCOL", "models.chat.tool_protocol"},
	{"ZERO_PROFILE", "profile"},
	{"ZERO_SANDBOX", "sandbox.backend"},
	{"ZERO_SANDBOX_IMAGE", "sandbox.image"},
	{"ZERO_APPROVAL", "approval"},
}

// fromEnv reads the environment variables. An empty variable counts as unset, as shells make
// "VAR=" the usual way to clear one.
func fromEnv(getenv func(string) string) (map[string]setting, []error) {
	m := map[string]setting{}
	var errs []error
	for _, ev := range envVars {
		raw := strings.TrimSpace(getenv(ev.name))
		if raw == "" {
			continue
		}
		v, msg := leafByKey[ev.key].fromString(raw)
		if msg != "" {
			errs = append(errs, &Error{Env: ev.name, Key: ev.key, Msg: msg})
			continue
		}
		m[ev.key] = setting{val: v, origin: "env " + ev.name}
	}
	return m, errs
}

// flagNames are the command-line names of the keys zero's commands offer as flags, so an
// origin reads as the user typed it; any other key shows as --<dotted key>.
var flagNames = map[string]string{
	"models.chat.model":         "model",
	"models.chat.base_url":      "base-url",
	"models.utility.model":      "utility-model",
	"models.chat.tool_protocol": "tool-protocol",
	"profile":                   "profile",
	"sandbox.backend":           "sandbox",
	"sandbox.image":             "image",
	"approval":                  "approval",
}

// FlagName is the command-line flag name (without dashes) under which Print and errors show a
// value set through Sources.Flags.
func FlagName(key string) string {
	if n, ok := flagNames[key]; ok {
		return n
	}
	return key
}

func fromFlags(flags map[string]string) (map[string]setting, []error) {
	m := map[string]setting{}
	var errs []error
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		l, ok := leafByKey[k]
		if !ok {
			errs = append(errs, &Error{Flag: k, Key: k, Msg: "unknown key" + didYouMean(k)})
			continue
		}
		v, msg := l.fromString(strings.TrimSpace(flags[k]))
		if msg != "" {
			errs = append(errs, &Error{Flag: FlagName(k), Key: k, Msg: msg})
			continue
		}
		m[k] = setting{val: v, origin: "flag --" + FlagName(k)}
	}
	return m, errs
}

// didYouMean suggests a key for an unknown dotted key: a close sibling first, else a key
// elsewhere with that exact last name (a value put at the wrong level).
func didYouMean(key string) string {
	prefix, name := "", key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		prefix, name = key[:i], key[i+1:]
	}
	if m := closest(name, sections[prefix]); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", join(prefix, m))
	}
	for _, k := range allKeys() {
		if k[strings.LastIndexByte(k, '.')+1:] == name {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

// allKeys lists sections and values in declaration order.
func allKeys() []string {
	var out []string
	var walk func(prefix string)
	walk = func(prefix string) {
		for _, n := range sections[prefix] {
			k := join(prefix, n)
			out = append(out, k)
			if _, ok := sections[k]; ok {
				walk(k)
			}
		}
	}
	walk("")
	return out
}

// closest returns the candidate nearest to s by edit distance (ignoring case), if near enough to
// be a typo, or one that s is a prefix of.
func closest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		if d := editDistance(ls, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= max(1, min(3, len(s)/3)) {
		return best
	}
	if len(ls) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), ls) {
				return c
			}
		}
	}
	return ""
}

// editDistance is the optimal-string-alignment distance: Levenshtein plus adjacent
// transpositions, the commonest typo.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
