package profiles

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRenderSystemPrompt measures what the engine does every turn: the manual, each tool
// prompt, and the tools section, from a warm Prompts.
func BenchmarkRenderSystemPrompt(b *testing.B) {
	p := New()
	vars := standardVars()
	names := p.Names("agent.system.tool.*.md")
	systemPrompt(b, p, vars) // parse and cache everything first
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		mainPart, err := p.Render("agent.system.main.md", vars)
		if err != nil {
			b.Fatal(err)
		}
		var tools strings.Builder
		for _, n := range names {
			s, err := p.Render(n, vars)
			if err != nil {
				b.Fatal(err)
			}
			tools.WriteString(s)
		}
		tv := maps.Clone(vars)
		tv["tools"] = tools.String()
		toolsPart, err := p.Render("agent.system.tools.md", tv)
		if err != nil {
			b.Fatal(err)
		}
		size = len(mainPart) + len(toolsPart)
	}
	b.ReportMetric(float64(size), "bytes/prompt")
}

// BenchmarkRenderMain isolates one render with includes and conditions.
func BenchmarkRenderMain(b *testing.B) {
	p := New()
	vars := standardVars()
	if _, err := p.Render("agent.system.main.md", vars); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Render("agent.system.main.md", vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderJSONMessage is the per-message cost of wrapping a user message.
func BenchmarkRenderJSONMessage(b *testing.B) {
	p := New()
	vars := map[string]any{"message": "please fix the \"build\"\nand run the tests"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Render("fw.user_message.md", vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdRender includes reading and parsing the files, what the first turn of a new
// Prompts pays.
func BenchmarkColdRender(b *testing.B) {
	vars := standardVars()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New().Render("agent.system.main.md", vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad is what creating a subordinate pays to resolve its profile: all six layers
// present, a user profile in Agent Zero's layout with a Python plugin to report.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	if err := os.CopyFS(filepath.Join(root, "ws", ".zero"), os.DirFS("testdata/layers/workspace/.zero")); err != nil {
		b.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "user"), os.DirFS("testdata/layers/user")); err != nil {
		b.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "user", "agents", "developer"), os.DirFS("testdata/reviewer")); err != nil {
		b.Fatal(err)
	}
	l := NewLoader(filepath.Join(root, "ws"), filepath.Join(root, "user"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Load("developer"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadAndRender adds the first system prompt render of the new Prompts, which reads and
// parses the files.
func BenchmarkLoadAndRender(b *testing.B) {
	l := NewLoader("", "")
	vars := standardVars()
	b.ReportAllocs()
	for b.Loop() {
		p, err := l.Load("agent0")
		if err != nil {
			b.Fatal(err)
		}
		systemPrompt(b, p.Prompts, vars)
	}
}

// BenchmarkList is the cost of the agent_profiles var with only the built-ins.
func BenchmarkList(b *testing.B) {
	l := NewLoader("", "")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.List(); err != nil {
			b.Fatal(err)
		}
	}
}
