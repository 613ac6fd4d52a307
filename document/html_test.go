package document

import (
	"strings"
	"testing"
)

func TestHTMLText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html, want string
	}{
		{
			name: "page",
			html: `<!DOCTYPE html><html><head><title>The Title</title>
<style>body { color: red }</style>
<script>var s = "<p>not text</p>";</script></head>
<body><h1>Heading &amp; more</h1><p>First   paragraph
with <b>bold</b> text.</p><noscript>enable JavaScript</noscript>
<template><p>hidden</p></template>
<ul><li>one</li><li>two</li></ul>
<pre>  keep
   spacing</pre>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></body></html>`,
			want: "The Title\n\nHeading & more\n\nFirst paragraph with bold text.\n\n- one\n- two\n\n  keep\n   spacing\n\na\tb\n1\t2",
		},
		{name: "entities", html: "<p>&lt;tag&gt; caf&eacute; &#8364;5 &nbsp;x</p>", want: "<tag> café €5 x"},
		{name: "inline", html: "<p>a<span>b</span> <em>c</em></p><div>d</div>e<br>f", want: "ab c\n\nd\ne\nf"},
		{name: "unclosed script", html: "<p>before</p><script>if (a < b) { x() }", want: "before"},
		{name: "fragment", html: "just <b>text</b>", want: "just text"},
		{name: "windows-1252", html: `<html><head><meta charset="windows-1252"></head><body>caf` + "\xe9" + `</body></html>`, want: "café"},
		{name: "invalid utf-8 guessed", html: "<p>caf\xe9</p>", want: "café"},
		{name: "empty", html: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Text("page.html", []byte(tt.html))
			if err != nil || got != tt.want {
				t.Errorf("Text(html) = %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

func TestHTMLDeeplyNested(t *testing.T) {
	t.Parallel()
	const depth = 200_000
	html := strings.Repeat("<div><span>", depth) + "deep" + strings.Repeat("</span></div>", depth)
	got, err := Text("deep.html", []byte(html))
	if err != nil || got != "deep" {
		t.Errorf("Text(deeply nested) = %q, %v; want %q", got, err, "deep")
	}
}
