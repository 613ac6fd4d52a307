package ask

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds on a form, which someone other than the user wrote (an MCP
// server, careless or hostile): what a face shows must stay a form a
// person can read.
const (
	MaxSchema  = 64 << 10 // bytes of a form's JSON Schema
	MaxFields  = 50       // fields of a form
	MaxOptions = 100      // options of a choice
)

// Bounds on the texts of a form: a title or a description longer than
// these is cut (it is only shown); a name or an option's value is sent
// back as it came, so a longer one is refused.
const (
	maxTitle       = 256
	maxDescription = 2048
	maxName        = 128
	maxValue       = 1024
)

// ParseForm reads an MCP elicitation's requestedSchema (a flat JSON Schema
// object) into the fields of a form, in the order the schema lists its
// properties. Each property is a string (with a format or a length), a
// number or an integer (with bounds), a boolean, a string enum (titled by
// enumNames, or a oneOf of {const, title}) as a TypeChoice, or an array of
// such an enum (items.enum, or items.anyOf of {const, title}) as a
// TypeChoices. Anything else (a nested object, an unknown type, more than
// MaxFields fields or MaxOptions options, a schema over MaxSchema bytes)
// is an error saying what. A default that does not fit its field is left
// out: the person fills the field in.
func ParseForm(schema json.RawMessage) ([]Field, error) {
	if len(schema) > MaxSchema {
		return nil, fmt.Errorf("the form's schema is %d bytes; at most %d are accepted", len(schema), MaxSchema)
	}
	var top struct {
		Type       json.RawMessage `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("the form's schema is not a JSON Schema object: %v", err)
	}
	if t, err := typeName(top.Type); err != nil || t != "" && t != "object" {
		return nil, errors.New(`the form's schema must have "type": "object"`)
	}
	props, err := orderedObject(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("the form's properties: %v", err)
	}
	fields := make([]Field, 0, len(props))
	for _, p := range props {
		f, err := parseField(p.name, p.raw, slices.Contains(top.Required, p.name))
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

type property struct {
	name string
	raw  json.RawMessage
}

// orderedObject is a JSON object's members in their order, which a map
// would lose: a form shows its fields in the order the asker wrote them.
func orderedObject(raw json.RawMessage) ([]property, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []property
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		if slices.ContainsFunc(out, func(p property) bool { return p.name == name }) {
			return nil, fmt.Errorf("the field %q is given twice", clip(name, maxName))
		}
		if len(out) == MaxFields {
			return nil, fmt.Errorf("more than %d fields", MaxFields)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, property{name, v})
	}
	return out, nil
}

// typeName is a schema's "type": "" when absent; an error when it is not
// one string (a list of types has no form).
func typeName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var t string
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", errors.New("a type must be one string")
	}
	return t, nil
}

// option is an enum's titled value as JSON Schema writes it.
type option struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

func parseField(name string, raw json.RawMessage, required bool) (Field, error) {
	if name == "" || len(name) > maxName || strings.ContainsFunc(name, unicode.IsControl) {
		return Field{}, fmt.Errorf("a field's name must be 1 to %d characters with no control character", maxName)
	}
	fail := func(format string, a ...any) (Field, error) {
		return Field{}, fmt.Errorf("field %q: %s", name, fmt.Sprintf(format, a...))
	}
	var p struct {
		Type        json.RawMessage `json:"type"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Format      string          `json:"format"`
		MinLength   *int            `json:"minLength"`
		MaxLength   *int            `json:"maxLength"`
		Minimum     *float64        `json:"minimum"`
		Maximum     *float64        `json:"maximum"`
		Enum        []string        `json:"enum"`
		EnumNames   []string        `json:"enumNames"`
		OneOf       []option        `json:"oneOf"`
		AnyOf       []option        `json:"anyOf"`
		Items       *struct {
			Type  json.RawMessage `json:"type"`
			Enum  []string        `json:"enum"`
			AnyOf []option        `json:"anyOf"`
			OneOf []option        `json:"oneOf"`
		} `json:"items"`
		MinItems   *int            `json:"minItems"`
		MaxItems   *int            `json:"maxItems"`
		Default    json.RawMessage `json:"default"`
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fail("not a field a form can hold: %v", err)
	}
	t, err := typeName(p.Type)
	if err != nil {
		return fail("%v", err)
	}
	f := Field{Name: name, Title: clip(p.Title, maxTitle), Description: clip(p.Description, maxDescription), Required: required}
	enum := len(p.Enum) > 0 || len(p.OneOf) > 0
	switch {
	case t == "object" || len(p.Properties) > 0:
		return fail("a form holds no nested objects (MCP forms are flat)")
	case (t == "string" || t == "") && enum:
		f.Type = TypeChoice
		if f.Options, err = options(p.Enum, p.EnumNames, p.OneOf); err != nil {
			return fail("%v", err)
		}
	case t == "string":
		f.Type = TypeString
		switch p.Format {
		case "email", "uri", "date", "date-time":
			f.Format = p.Format
		}
		f.MinLength, f.MaxLength = p.MinLength, p.MaxLength
		if err := checkCounts(p.MinLength, p.MaxLength); err != nil {
			return fail("its length: %v", err)
		}
	case t == "number" || t == "integer":
		f.Type = t
		f.Min, f.Max = p.Minimum, p.Maximum
		if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
			return fail("its minimum is above its maximum")
		}
	case t == "boolean":
		f.Type = TypeBoolean
	case t == "array":
		if p.Items == nil {
			return fail("a list needs its items: a string enum")
		}
		if it, err := typeName(p.Items.Type); err != nil || it != "" && it != "string" {
			return fail("a list's items must be a string enum")
		}
		titled := p.Items.AnyOf
		if len(titled) == 0 {
			titled = p.Items.OneOf
		}
		if len(p.Items.Enum) == 0 && len(titled) == 0 {
			return fail("a list's items must be a string enum")
		}
		f.Type = TypeChoices
		if f.Options, err = options(p.Items.Enum, nil, titled); err != nil {
			return fail("%v", err)
		}
		f.MinItems, f.MaxItems = p.MinItems, p.MaxItems
		if err := checkCounts(p.MinItems, p.MaxItems); err != nil {
			return fail("its number of choices: %v", err)
		}
	case t == "":
		return fail("it has no type")
	default:
		return fail("the type %q has no place in a form (string, number, integer, boolean, or a string enum)", clip(t, 32))
	}
	f.Default = defaultOf(f, p.Default)
	return f, nil
}

// options are an enum's choices: the values of enum titled by enumNames
// (when there are as many), or the titled values of oneOf.
func options(enum, names []string, titled []option) ([]Option, error) {
	var out []Option
	if len(enum) > 0 {
		for i, v := range enum {
			o := Option{Value: v}
			if len(names) == len(enum) {
				o.Title = clip(names[i], maxTitle)
			}
			out = append(out, o)
		}
	} else {
		for _, o := range titled {
			if o.Const == nil {
				return nil, errors.New("each option needs a const string")
			}
			out = append(out, Option{Value: *o.Const, Title: clip(o.Title, maxTitle)})
		}
	}
	if len(out) > MaxOptions {
		return nil, fmt.Errorf("%d options; at most %d are accepted", len(out), MaxOptions)
	}
	for i, o := range out {
		if len(o.Value) > maxValue {
			return nil, fmt.Errorf("an option's value is over %d bytes", maxValue)
		}
		if slices.ContainsFunc(out[:i], func(p Option) bool { return p.Value == o.Value }) {
			return nil, errors.New("an option is given twice")
		}
	}
	return out, nil
}

func checkCounts(lo, hi *int) error {
	switch {
	case lo != nil && *lo < 0, hi != nil && *hi < 0:
		return errors.New("a bound is negative")
	case lo != nil && hi != nil && *lo > *hi:
		return errors.New("its minimum is above its maximum")
	}
	return nil
}

// defaultOf is a field's default as its Type holds it, or nil when there
// is none or it does not fit the field.
func defaultOf(f Field, raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	if _, ok := v.(string); ok && f.Type != TypeString && f.Type != TypeChoice {
		return nil // "3" for an integer is a face's way, not a schema's
	}
	v, err := value(f, v)
	if err != nil {
		return nil
	}
	return v
}

// Complete makes an answer to q what the asker may be sent. Accept keeps
// the form's fields only: an omitted (or empty) field gets its Default
// (MCP's SEP-1034), a value is converted to its field's type (a face may
// send "3" for an integer, "true" for a boolean) and checked (required,
// type, options, bounds, format); the error names the field, never the
// value (it may be a secret). A page to open is accepted with no content.
// Decline and Cancel carry no content.
func (q Question) Complete(a Answer) (Answer, error) {
	switch a.Action {
	case Decline, Cancel:
		return Answer{Action: a.Action}, nil
	case Accept:
	default:
		return Answer{}, fmt.Errorf("an answer's action is accept, decline or cancel, not %q", clip(a.Action, 32))
	}
	if q.URL != "" {
		return Answer{Action: Accept}, nil
	}
	content := map[string]any{}
	for _, f := range q.Fields {
		v, ok := a.Content[f.Name]
		if s, isText := v.(string); isText && s == "" {
			ok = false
		}
		if !ok || v == nil {
			switch {
			case f.Default != nil:
				if l, ok := f.Default.([]string); ok {
					content[f.Name] = slices.Clone(l) // not the question's own
				} else {
					content[f.Name] = f.Default
				}
			case f.Required:
				return Answer{}, fmt.Errorf("field %q is required", f.Name)
			}
			continue
		}
		v, err := value(f, v)
		if err != nil {
			return Answer{}, fmt.Errorf("field %q: %v", f.Name, err)
		}
		content[f.Name] = v
	}
	return Answer{Action: Accept, Content: content}, nil
}

// Value is v (an answer's value, or the field's default) converted to f's
// type and checked against f: a string, float64, bool or []string. The
// error names what is wrong, never v.
func (f Field) Value(v any) (any, error) { return value(f, v) }

// value is v converted to f's type and checked against f: a string,
// float64, bool or []string.
func value(f Field, v any) (any, error) {
	switch f.Type {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return nil, errors.New("must be text")
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength {
			return nil, fmt.Errorf("must have at least %d characters", *f.MinLength)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return nil, fmt.Errorf("must have at most %d characters", *f.MaxLength)
		}
		if !formatted(f.Format, s) {
			return nil, fmt.Errorf("must be a valid %s", map[string]string{"email": "email address", "uri": "URI", "date": "date (YYYY-MM-DD)", "date-time": "date and time (RFC 3339)"}[f.Format])
		}
		return s, nil
	case TypeNumber, TypeInteger:
		x, ok := number(v)
		if !ok {
			return nil, errors.New("must be a number")
		}
		if f.Type == TypeInteger && x != math.Trunc(x) {
			return nil, errors.New("must be a whole number")
		}
		if f.Min != nil && x < *f.Min {
			return nil, fmt.Errorf("must be at least %s", strconv.FormatFloat(*f.Min, 'f', -1, 64))
		}
		if f.Max != nil && x > *f.Max {
			return nil, fmt.Errorf("must be at most %s", strconv.FormatFloat(*f.Max, 'f', -1, 64))
		}
		return x, nil
	case TypeBoolean:
		switch b := v.(type) {
		case bool:
			return b, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				return b, nil
			}
		}
		return nil, errors.New("must be true or false")
	case TypeChoice:
		s, ok := v.(string)
		if !ok || !f.hasOption(s) {
			return nil, errors.New("must be one of the options")
		}
		return s, nil
	case TypeChoices:
		var picked []string
		switch l := v.(type) {
		case string:
			picked = []string{l}
		case []string:
			picked = slices.Clone(l)
		case []any:
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil, errors.New("must be a list of the options")
				}
				picked = append(picked, s)
			}
		default:
			return nil, errors.New("must be a list of the options")
		}
		var out []string
		for _, s := range picked {
			if !f.hasOption(s) {
				return nil, errors.New("must be a list of the options")
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if f.MinItems != nil && len(out) < *f.MinItems {
			return nil, fmt.Errorf("must have at least %d of the options", *f.MinItems)
		}
		if f.MaxItems != nil && len(out) > *f.MaxItems {
			return nil, fmt.Errorf("must have at most %d of the options", *f.MaxItems)
		}
		if out == nil {
			out = []string{}
		}
		return out, nil
	}
	return nil, fmt.Errorf("has an unknown type %q", f.Type)
}

func (f Field) hasOption(v string) bool {
	return slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == v })
}

// number is v as a finite float64: a JSON number, a Go number, or the
// text of one.
func number(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case float32:
		x = float64(n)
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		x = f
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, false
		}
		x = f
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// formatted tells whether s is written in format ("" is any text).
func formatted(format, s string) bool {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		return err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	}
	return true
}

// clip cuts s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
