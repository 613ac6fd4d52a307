package document

import "testing"

func TestKindOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head string
		want Kind
	}{
		{"notes.txt", "hello", PlainText},
		{"data.csv", "a,b\n1,2\n", PlainText},
		{"README.md", "# Title", Markdown},
		{"main.go", "package main", Code},
		{"lib.rs", "fn main() {}", Code},
		{"config.yaml", "a: 1", Code},
		{"data.json", `{"a": 1}`, Code},
		{"Makefile", "all:\n\tgo build", Code},
		{"Dockerfile", "FROM alpine", Code},
		{"page.HTML", "<p>hi", HTML},
		{"paper.pdf", "%PDF-1.7", PDF},
		{"paper.pdf", "not a pdf at all", PDF}, // the extension decides
		{"photo.png", "\x89PNG\r\n\x1a\n", Unsupported},
		{"archive.zip", "PK\x03\x04", Unsupported},
		{"LICENSE", "Permission is hereby granted", PlainText},
		{"download", "%PDF-1.4\n", PDF},
		{"index", "  <!DOCTYPE html><html>", HTML},
		{"index", "<HTML><body>", HTML},
		{"blob", "\x00\x01\x02binary", Unsupported},
		{"blob.txt", "text\x00with NUL", Unsupported},
		{"utf16.txt", "\xff\xfeh\x00i\x00", PlainText},
		{"latin1", "caf\xe9", PlainText}, // invalid UTF-8 is still text
		{"empty", "", PlainText},
		{"weird.xyz", "plain words", PlainText},
	}
	for _, tt := range tests {
		if got := KindOf(tt.name, []byte(tt.head)); got != tt.want {
			t.Errorf("KindOf(%q, %q) = %v, want %v", tt.name, tt.head, got, tt.want)
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[Kind]string{Unsupported: "unsupported", PlainText: "text", PDF: "pdf", Kind(99): "unsupported"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
