package dirtyjson_test

import (
	"fmt"

	"github.com/zeroagent/zero/loop/dirtyjson"
)

// A model's reply arrives in chunks; the parser shows the thoughts as they grow and reports Done at the
// object's closing brace, so the rest of the stream can be dropped.
func ExampleParser() {
	chunks := []string{
		"Sure.\n```json\n{thoughts: ['Read the fi",
		"le first', ",
		`"then answer"], tool_name: "response", tool_args: {text: 'It\'s done',},}`,
		"\n```\nAnything after the object is ignored.",
	}
	p := dirtyjson.NewParser()
	for _, c := range chunks {
		p.Feed(c)
		root := p.Value().(map[string]any)
		fmt.Println(p.Done(), dirtyjson.Canonical(root["thoughts"]))
	}
	fmt.Println(p.Consumed())
	// Output:
	// false ["Read the fi"]
	// false ["Read the file first"]
	// true ["Read the file first","then answer"]
	// true ["Read the file first","then answer"]
	// {thoughts: ['Read the file first', "then answer"], tool_name: "response", tool_args: {text: 'It\'s done',},}
}

func ExampleParse() {
	v, done, err := dirtyjson.Parse(`{{"tool_name": "x", "tool_args": {"a": 1}}}`)
	fmt.Println(dirtyjson.Canonical(v), done, err)
	_, _, err = dirtyjson.Parse("no object here")
	fmt.Println(err)
	// Output:
	// {"tool_args":{"a":1},"tool_name":"x"} true <nil>
	// dirtyjson: no JSON object found
}
