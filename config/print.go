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
// it says whether that variable is set ("key <set>" / "key <not set>"); the key itself is never
// written. With the comments ignored, the output is a valid config file that Load accepts.
func (e *Effective) Print(w io.Writer) error {
	type row struct{ text, comment string }
	var rows []row
	width := 0

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
			if strings.HasSuffix(key, ".api_key_env") {
				if env := rv.FieldByIndex(l.index).String(); env != "" {
					state := "<not set>"
					if e.lookup(env) != "" {
						state = "<set>"
					}
					comment += "; key " + state
				}
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
