package document

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTextPlain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"a.txt", "line one\r\nline two\n", "line one\nline two\n"},
		{"a.md", "# Title\n\n*body*", "# Title\n\n*body*"},
		{"main.go", "package main\n\nfunc main() {}\n", "package main\n\nfunc main() {}\n"},
		{"data.csv", "name,age\nAda,36\n", "name,age\nAda,36\n"},
		{"data.json", `{"k": ["v"]}`, `{"k": ["v"]}`},
		{"bom.txt", "\xef\xbb\xbfwith BOM", "with BOM"},
		{"bad.txt", "caf\xe9 \xff ok", "caf\uFFFD \uFFFD ok"},
		{"le.txt", "\xff\xfeh\x00\xe9\x00", "hé"},
		{"be.txt", "\xfe\xff\x00h\x00\xe9", "hé"},
		{"noext", "just words", "just words"},
		{"empty.txt", "", ""},
	}
	for _, tt := range tests {
		got, err := Text(tt.name, []byte(tt.content))
		if err != nil || got != tt.want {
			t.Errorf("Text(%q, %q) = %q, %v; want %q", tt.name, tt.content, got, err, tt.want)
		}
	}
}

func TestTextRefusesBinary(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"nul.txt":   "text\x00more",
		"late.go":   strings.Repeat("x", 1000) + "\x00",
		"image.png": "\x89PNG\r\n\x1a\n",
		"blob":      "\x00\x01\x02\x03",
		"nul.html":  "<p>a\x00b</p>",
	} {
		_, err := Text(name, []byte(content))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("Text(%q) error = %v, want ErrUnsupported", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), name) {
			t.Errorf("Text(%q) error %q does not name the file", name, err)
		}
	}
}

func TestExtractTextLimit(t *testing.T) {
	t.Parallel()
	content := []byte(strings.Repeat("word ", 100))
	if _, err := Extract("a.txt", content, Options{MaxTextBytes: 100}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Extract over MaxTextBytes: error = %v, want ErrTooLarge", err)
	}
	html := []byte("<p>" + strings.Repeat("word ", 100) + "</p>")
	if _, err := Extract("a.html", html, Options{MaxTextBytes: 100}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Extract HTML over MaxTextBytes: error = %v, want ErrTooLarge", err)
	}
	if got, err := Extract("a.txt", content, Options{MaxTextBytes: 500}); err != nil || len(got) != 500 {
		t.Errorf("Extract at exactly MaxTextBytes = %d bytes, %v", len(got), err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	got, err := ReadFile(write("ok.md", "# hi\n"), Options{})
	if err != nil || got != "# hi\n" {
		t.Errorf("ReadFile(ok.md) = %q, %v", got, err)
	}

	big := write("big.txt", strings.Repeat("x", 2048))
	_, err = ReadFile(big, Options{MaxBytes: 1024})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Options.MaxBytes") {
		t.Errorf("ReadFile over MaxBytes: error = %v, want ErrTooLarge naming Options.MaxBytes", err)
	}

	if _, err := ReadFile(dir, Options{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ReadFile(directory): error = %v, want ErrUnsupported", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.txt"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing): error = %v, want os.ErrNotExist", err)
	}

	pdfPath := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(pdfPath, textPDF("BT /F1 12 Tf 72 720 Td (on disk) Tj ET").bytes(""), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(pdfPath, Options{}); err != nil || got != "on disk" {
		t.Errorf("ReadFile(doc.pdf) = %q, %v", got, err)
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{12: "12 bytes", 1536: "1.5 KiB", 32 << 20: "32 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
