package ask_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zeroagent/zero/ask"
)

func ptr[T any](v T) *T { return &v }

// The form of the spec's examples, in the order the schema lists it (not
// the alphabetical order of a map), with every kind of field.
func TestParseForm(t *testing.T) {
	schema := `{"type":"object","properties":{
		"zname":{"type":"string","title":"Name","description":"Whose booking","minLength":2,"maxLength":40,"default":"Ann"},
		"email":{"type":"string","format":"email"},
		"seats":{"type":"integer","title":"Seats","minimum":1,"maximum":12,"default":2},
		"budget":{"type":"number","minimum":0.5},
		"window":{"type":"boolean","default":true},
		"size":{"type":"string","enum":["s","m","l"],"enumNames":["Small","Medium","Large"],"default":"m"},
		"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
		"plain":{"type":"string","enum":["a","b"]},
		"tags":{"type":"array","items":{"type":"string","enum":["x","y","z"]},"minItems":1,"maxItems":2,"default":["x"]},
		"titled":{"type":"array","items":{"anyOf":[{"const":"p","title":"Pears"},{"const":"q","title":"Quinces"}]}}
	},"required":["zname","seats"]}`
	fields, err := ask.ParseForm(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	want := []ask.Field{
		{Name: "zname", Title: "Name", Description: "Whose booking", Type: ask.TypeString, Required: true, Default: "Ann", MinLength: ptr(2), MaxLength: ptr(40)},
		{Name: "email", Type: ask.TypeString, Format: "email"},
		{Name: "seats", Title: "Seats", Type: ask.TypeInteger, Required: true, Default: 2.0, Min: ptr(1.0), Max: ptr(12.0)},
		{Name: "budget", Type: ask.TypeNumber, Min: ptr(0.5)},
		{Name: "window", Type: ask.TypeBoolean, Default: true},
		{Name: "size", Type: ask.TypeChoice, Default: "m", Options: []ask.Option{{"s", "Small"}, {"m", "Medium"}, {"l", "Large"}}},
		{Name: "color", Type: ask.TypeChoice, Options: []ask.Option{{"r", "Red"}, {"g", "Green"}}},
		{Name: "plain", Type: ask.TypeChoice, Options: []ask.Option{{Value: "a"}, {Value: "b"}}},
		{Name: "tags", Type: ask.TypeChoices, Default: []string{"x"}, MinItems: ptr(1), MaxItems: ptr(2), Options: []ask.Option{{Value: "x"}, {Value: "y"}, {Value: "z"}}},
		{Name: "titled", Type: ask.TypeChoices, Options: []ask.Option{{"p", "Pears"}, {"q", "Quinces"}}},
	}
	if !reflect.DeepEqual(fields, want) {
		g, _ := json.MarshalIndent(fields, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("fields:\n%s\nwant:\n%s", g, w)
	}
}

func TestParseFormEdges(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		var parts []string
		for i := range n {
			parts = append(parts, f(i))
		}
		return strings.Join(parts, ",")
	}
	for _, c := range []struct {
		name, schema string
		fields       int    // when it parses
		err          string // when it does not: a part of the error
	}{
		{"empty form (a yes or no)", `{"type":"object","properties":{}}`, 0, ""},
		{"no properties", `{"type":"object"}`, 0, ""},
		{"no type at the top", `{"properties":{"a":{"type":"string"}}}`, 1, ""},
		{"unknown format is plain text", `{"type":"object","properties":{"a":{"type":"string","format":"password"}}}`, 1, ""},
		{"required names an absent field", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, 1, ""},
		{"enum without a type", `{"type":"object","properties":{"a":{"enum":["x"]}}}`, 1, ""},
		{"50 fields", `{"type":"object","properties":{` + many(50, func(i int) string { return fmt.Sprintf(`"f%d":{"type":"string"}`, i) }) + `}}`, 50, ""},

		{"not an object", `[1,2]`, 0, "not a JSON Schema object"},
		{"top type not object", `{"type":"string"}`, 0, `"type": "object"`},
		{"properties not an object", `{"type":"object","properties":[1]}`, 0, "not a JSON object"},
		{"nested object", `{"type":"object","properties":{"addr":{"type":"object","properties":{"street":{"type":"string"}}}}}`, 0, `field "addr": a form holds no nested objects`},
		{"properties without type", `{"type":"object","properties":{"addr":{"properties":{"street":{"type":"string"}}}}}`, 0, "nested objects"},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"file"}}}`, 0, `field "a": the type "file"`},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, 0, "one string"},
		{"no type", `{"type":"object","properties":{"a":{"title":"A"}}}`, 0, "no type"},
		{"array of objects", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, 0, "string enum"},
		{"array of free strings", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, 0, "string enum"},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}}}`, 0, "string enum"},
		{"number enum", `{"type":"object","properties":{"a":{"type":"string","enum":[1,2]}}}`, 0, `field "a"`},
		{"oneOf without const", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"title":"x"}]}}}`, 0, "const"},
		{"repeated option", `{"type":"object","properties":{"a":{"type":"string","enum":["x","x"]}}}`, 0, "twice"},
		{"repeated field", `{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"number"}}}`, 0, "twice"},
		{"min above max", `{"type":"object","properties":{"a":{"type":"integer","minimum":5,"maximum":1}}}`, 0, "minimum is above"},
		{"negative length", `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, 0, "negative"},
		{"51 fields", `{"type":"object","properties":{` + many(51, func(i int) string { return fmt.Sprintf(`"f%d":{"type":"string"}`, i) }) + `}}`, 0, "more than 50 fields"},
		{"101 options", `{"type":"object","properties":{"a":{"type":"string","enum":[` + many(101, func(i int) string { return fmt.Sprintf(`"o%d"`, i) }) + `]}}}`, 0, "at most 100"},
		{"huge schema", `{"type":"object","description":"` + strings.Repeat("x", ask.MaxSchema) + `"}`, 0, "at most 65536"},
		{"huge option value", `{"type":"object","properties":{"a":{"type":"string","enum":["` + strings.Repeat("v", 2000) + `"]}}}`, 0, "over 1024 bytes"},
		{"empty name", `{"type":"object","properties":{"":{"type":"string"}}}`, 0, "name"},
		{"control in name", `{"type":"object","properties":{"a\u0007":{"type":"string"}}}`, 0, "control"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fields, err := ask.ParseForm(json.RawMessage(c.schema))
			if c.err == "" {
				if err != nil || len(fields) != c.fields {
					t.Errorf("ParseForm = %d fields, %v; want %d fields", len(fields), err, c.fields)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseForm error = %v; want one saying %q", err, c.err)
			}
		})
	}
}

// Long texts are cut (they are only shown), on a character boundary; a
// default that does not fit its field is left out, not an error.
func TestParseFormClipsAndDropsBadDefaults(t *testing.T) {
	schema := fmt.Sprintf(`{"type":"object","properties":{
		"a":{"type":"string","title":%q,"description":%q},
		"b":{"type":"integer","minimum":1,"default":0},
		"c":{"type":"integer","default":"3"},
		"d":{"type":"string","enum":["x"],"default":"y"},
		"e":{"type":"boolean","default":"yes"}}}`, strings.Repeat("é", 300), strings.Repeat("d", 5000))
	fields, err := ask.ParseForm(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	if a := fields[0]; len(a.Title) > 256 || len(a.Description) > 2048 || !strings.HasSuffix(a.Title, "…") || !strings.HasPrefix(a.Title, "éé") {
		t.Errorf("title %d bytes, description %d bytes", len(a.Title), len(a.Description))
	}
	for _, f := range fields[1:] {
		if f.Default != nil {
			t.Errorf("field %s kept the default %v", f.Name, f.Default)
		}
	}
}

func TestComplete(t *testing.T) {
	fields, err := ask.ParseForm(json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","minLength":2,"maxLength":5},
		"seats":{"type":"integer","minimum":1,"maximum":12,"default":2},
		"price":{"type":"number","maximum":9.5},
		"window":{"type":"boolean","default":false},
		"size":{"type":"string","enum":["s","m"],"default":"s"},
		"tags":{"type":"array","items":{"type":"string","enum":["x","y","z"]},"maxItems":2},
		"mail":{"type":"string","format":"email"},
		"day":{"type":"string","format":"date"},
		"at":{"type":"string","format":"date-time"},
		"site":{"type":"string","format":"uri"}
	},"required":["name","seats"]}`))
	if err != nil {
		t.Fatal(err)
	}
	form := ask.Question{Server: "s", Message: "m", Fields: fields}
	accept := func(c map[string]any) ask.Answer { return ask.Answer{Action: ask.Accept, Content: c} }
	for _, c := range []struct {
		name string
		q    ask.Question
		in   ask.Answer
		want ask.Answer
		err  string
	}{
		{"defaults fill omitted fields, unknown keys dropped", form, accept(map[string]any{"name": "Ann", "extra": 1}),
			accept(map[string]any{"name": "Ann", "seats": 2.0, "window": false, "size": "s"}), ""},
		{"a face's text converted", form, accept(map[string]any{"name": "Bo", "seats": " 3", "price": "1.25", "window": "true", "tags": []any{"x", "y", "x"}}),
			accept(map[string]any{"name": "Bo", "seats": 3.0, "price": 1.25, "window": true, "size": "s", "tags": []string{"x", "y"}}), ""},
		{"empty text is omitted", form, accept(map[string]any{"name": "Cy", "seats": "", "price": "", "mail": ""}),
			accept(map[string]any{"name": "Cy", "seats": 2.0, "window": false, "size": "s"}), ""},
		{"formats", form, accept(map[string]any{"name": "Di", "mail": "di@example.com", "day": "2026-01-31", "at": "2026-01-31T10:00:00Z", "site": "https://example.com/x", "tags": "z"}),
			accept(map[string]any{"name": "Di", "seats": 2.0, "window": false, "size": "s", "mail": "di@example.com", "day": "2026-01-31", "at": "2026-01-31T10:00:00Z", "site": "https://example.com/x", "tags": []string{"z"}}), ""},
		{"decline carries nothing", form, ask.Answer{Action: ask.Decline, Content: map[string]any{"name": "secret"}}, ask.Answer{Action: ask.Decline}, ""},
		{"cancel carries nothing", form, ask.Answer{Action: ask.Cancel}, ask.Answer{Action: ask.Cancel}, ""},
		{"a page accepted has no content", ask.Question{URL: "https://example.com"}, accept(map[string]any{"x": 1}), ask.Answer{Action: ask.Accept}, ""},
		{"a yes or no has empty content", ask.Question{}, accept(nil), accept(map[string]any{}), ""},

		{"required missing", form, accept(map[string]any{"seats": 3}), ask.Answer{}, `field "name" is required`},
		{"required empty", form, accept(map[string]any{"name": ""}), ask.Answer{}, `field "name" is required`},
		{"too short", form, accept(map[string]any{"name": "A"}), ask.Answer{}, `field "name": must have at least 2 characters`},
		{"too long in characters", form, accept(map[string]any{"name": "éééééé"}), ask.Answer{}, `at most 5 characters`},
		{"not text", form, accept(map[string]any{"name": 12}), ask.Answer{}, `field "name": must be text`},
		{"not whole", form, accept(map[string]any{"name": "Ann", "seats": 2.5}), ask.Answer{}, `field "seats": must be a whole number`},
		{"below minimum", form, accept(map[string]any{"name": "Ann", "seats": "0"}), ask.Answer{}, `field "seats": must be at least 1`},
		{"above maximum", form, accept(map[string]any{"name": "Ann", "price": 10}), ask.Answer{}, `field "price": must be at most 9.5`},
		{"not a number", form, accept(map[string]any{"name": "Ann", "seats": "three"}), ask.Answer{}, `field "seats": must be a number`},
		{"infinite", form, accept(map[string]any{"name": "Ann", "price": "Inf"}), ask.Answer{}, `must be a number`},
		{"not a boolean", form, accept(map[string]any{"name": "Ann", "window": "maybe"}), ask.Answer{}, `field "window": must be true or false`},
		{"not an option", form, accept(map[string]any{"name": "Ann", "size": "xl"}), ask.Answer{}, `field "size": must be one of the options`},
		{"not a list of options", form, accept(map[string]any{"name": "Ann", "tags": []any{"x", "w"}}), ask.Answer{}, `field "tags"`},
		{"too many picked", form, accept(map[string]any{"name": "Ann", "tags": []string{"x", "y", "z"}}), ask.Answer{}, `at most 2`},
		{"bad email", form, accept(map[string]any{"name": "Ann", "mail": "Ann <a@b.c>"}), ask.Answer{}, `valid email`},
		{"bad date", form, accept(map[string]any{"name": "Ann", "day": "31/01/2026"}), ask.Answer{}, `valid date`},
		{"bad uri", form, accept(map[string]any{"name": "Ann", "site": "example"}), ask.Answer{}, `valid URI`},
		{"unknown action", form, ask.Answer{Action: "maybe"}, ask.Answer{}, `accept, decline or cancel`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.q.Complete(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Complete = %+v, %v; want an error saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("Complete = %#v, %v; want %#v", got, err, c.want)
			}
		})
	}
}

// What a person typed may be a secret: an error names the field, never
// the value.
func TestCompleteErrorsHoldNoValue(t *testing.T) {
	fields, _ := ask.ParseForm(json.RawMessage(`{"type":"object","properties":{
		"token":{"type":"string","maxLength":3},"pin":{"type":"integer","maximum":9},"kind":{"type":"string","enum":["a"]}}}`))
	q := ask.Question{Fields: fields}
	for k, v := range map[string]any{"token": "hunter2-secret", "pin": "hunter2-secret", "kind": "hunter2-secret"} {
		_, err := q.Complete(ask.Answer{Action: ask.Accept, Content: map[string]any{k: v}})
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", k, err)
		}
	}
}
