package config

import (
	"bufio"
	"io"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Print writes the effective configuration for `zero config`: a header naming the files that
// were consulted, then every key as YAML ("key: value", nested by section, in declaration
// order), each value followed by "# <origin>" in an aligned column. Next to each api_key_env
// it says whether that variable is set ("key <set>" / "key <not set>"), and that the key is not
// sent when the workspace chose the endpoint; the key itself is never written. Each value of the
// workspace's file that Load ignored (see [Effective.Ignored]) gets a header line saying what
// and why, and a note on the line of its key. With the comments ignored, the output is a valid
// config file that Load accepts.
func (e *Effective) Print(w io.Writer) error {
	type row struct{ text, comment string }
	var rows []row
	width := 0
	ignored := map[string]Ignored{}
	for _, ig := range e.ignored {
		ignored[ig.Key] = ig
	}

	rv := reflect.ValueOf(e.Config)
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		indent := strings.Repeat("  ", depth)
		for _, name := range sections[prefix] {
			key := join(prefix, name)
			if _, ok := sections[key]; ok {
				rows = append(rows, row{text: indent + name + ":"})
				walk(key, depth+1)
				continue
			}
			l := leafByKey[key]
			text := indent + name + ": " + scalar(rv.FieldByIndex(l.index).Interface())
			comment := e.origins[key]
			if role, ok := strings.CutSuffix(key, ".api_key_env"); ok {
				if env := rv.FieldByIndex(l.index).String(); env != "" {
					state := "<not set>"
					if e.lookup(env) != "" {
						state = "<set>"
					}
					comment += "; key " + state
					if strings.Contains(e.origins[role+".base_url"], "project ") {
						comment += ", not sent: the workspace chose the endpoint"
					}
				}
			}
			if ig, ok := ignored[key]; ok {
				comment += "; the workspace's " + ig.Value + " is ignored"
			}
			rows = append(rows, row{text, comment})
			width = max(width, len(text))
		}
	}
	walk("", 0)

	bw := bufio.NewWriter(w)
	bw.WriteString("# Effective configuration: flags > environment > project > user > defaults.\n")
	for _, f := range e.files {
		state := ""
		if !f.found {
			state = " (not found)"
		}
		bw.WriteString("# " + f.layer + " file: " + f.path + state + "\n")
	}
	for _, ig := range e.ignored {
		bw.WriteString("# ignored: " + ig.String() + "\n")
	}
	for _, r := range rows {
		bw.WriteString(r.text)
		if r.comment != "" {
			bw.WriteString(strings.Repeat(" ", width-len(r.text)+2) + "# " + r.comment)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// scalar renders a value as a YAML scalar, quoted only where YAML needs it ("" or "no").
func scalar(v any) string {
	s, ok := v.(string)
	if !ok {
		return format(v)
	}
	out, err := yaml.Marshal(s)
	text := strings.TrimSuffix(string(out), "\n")
	if err != nil || strings.Contains(text, "\n") {
		return strconv.Quote(s)
	}
	return text
}
