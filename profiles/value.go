package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// writeText writes v as plain text into a prompt. Agent Zero uses Python's str(); we keep its
// readable results for strings and numbers but write bools as true/false, nil as nothing, and
// lists, maps and structs as JSON, which models read far better than a language's debug syntax.
func writeText(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
	case string:
		b.WriteString(x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(formatFloat(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(x.String())
	case json.RawMessage:
		b.Write(x)
	case []byte:
		b.Write(x) // text the caller read from somewhere; base64 would make it unreadable
	case error:
		if !isNilPointer(v) {
			b.WriteString(x.Error())
		}
	case fmt.Stringer:
		if !isNilPointer(v) {
			b.WriteString(x.String())
		}
	default:
		writeTextReflect(b, v)
	}
}

// isNilPointer guards String and Error methods, which usually dereference their receiver.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

func writeTextReflect(b *strings.Builder, v any) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		b.WriteString(rv.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(rv.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32:
		b.WriteString(strconv.FormatFloat(rv.Float(), 'g', -1, 32))
	case reflect.Float64:
		b.WriteString(formatFloat(rv.Float()))
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return
		}
		writeJSONOrSprint(b, v)
	default:
		writeJSONOrSprint(b, v)
	}
}

func writeJSONOrSprint(b *strings.Builder, v any) {
	raw, err := marshalJSON(v)
	if err != nil {
		fmt.Fprint(b, v)
		return
	}
	b.Write(raw)
}

// formatFloat writes whole numbers without a fraction and others in the shortest exact form,
// switching to an exponent only where JavaScript and encoding/json would.
func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// marshalJSON encodes v without escaping <, > and &: the reader is a model, not a browser, and
// \u003c only costs tokens and clarity.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSONValue writes v as a complete JSON value, for a placeholder that stands where a JSON
// value belongs in a JSON template (Agent Zero's json.dumps). A value JSON cannot encode (NaN, a
// channel) is written as its text in a JSON string, so the document stays valid.
func writeJSONValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
		return
	case string:
		writeJSONString(b, x, true)
		return
	case []byte:
		writeJSONString(b, string(x), true)
		return
	case json.RawMessage:
		if json.Valid(x) {
			b.Write(x)
			return
		}
	}
	raw, err := marshalJSON(v)
	if err != nil {
		var t strings.Builder
		writeText(&t, v)
		writeJSONString(b, t.String(), true)
		return
	}
	b.Write(raw)
}

// writeJSONInString writes v's text escaped for the inside of a JSON string, for a placeholder
// the template author put between quotes ("… '{{runtime}}' …"). Agent Zero would insert a
// quoted json.dumps there and break the document.
func writeJSONInString(b *strings.Builder, v any) {
	if s, ok := v.(string); ok {
		writeJSONString(b, s, false)
		return
	}
	var t strings.Builder
	writeText(&t, v)
	writeJSONString(b, t.String(), false)
}

const hexDigits = "0123456789abcdef"

// writeJSONString escapes s as encoding/json does (minus HTML escaping), optionally with the
// surrounding quotes. Invalid UTF-8 is kept as is: the prompt text came from the caller and
// rewriting it would hide what was sent.
func writeJSONString(b *strings.Builder, s string, quotes bool) {
	if quotes {
		b.WriteByte('"')
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xa8 {
				// U+2028 and U+2029 are valid JSON but break JavaScript readers of it.
				b.WriteString(s[start:i])
				b.WriteString(`\u202`)
				b.WriteByte(hexDigits[s[i+2]&0xf])
				i += 2
				start = i + 1
			}
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	if quotes {
		b.WriteByte('"')
	}
}
