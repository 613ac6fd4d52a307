package document

import (
	"bytes"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Kind is the kind of a file, which decides how its text is extracted.
type Kind int

// The kinds of files. The zero Kind is Unsupported.
const (
	Unsupported Kind = iota // binary, or a format this package cannot read
	PlainText               // prose, logs, CSV: read as UTF-8 text
	Markdown                // read as UTF-8 text, markup kept
	Code                    // source code and config (JSON, YAML, ...): read as UTF-8 text
	HTML                    // the visible text of the page
	PDF                     // the text layer of every page
)

var kindNames = [...]string{"unsupported", "text", "markdown", "code", "html", "pdf"}

// String returns the lower-case name of the kind, as used in logs.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "unsupported"
	}
	return kindNames[k]
}

// SniffLen is how many leading bytes [KindOf] looks at. Passing more is
// harmless; passing fewer makes the guess weaker.
const SniffLen = 512

var extKinds = map[string]Kind{}

func init() {
	add := func(k Kind, exts string) {
		for _, e := range strings.Fields(exts) {
			extKinds["."+e] = k
		}
	}
	add(PlainText, "txt text log csv tsv rst adoc asciidoc org tex bib srt vtt ini cfg conf properties env")
	add(Markdown, "md markdown mdown mkd mdx")
	add(Code, "go py pyi js mjs cjs jsx ts tsx java kt kts scala groovy gradle c h cc cpp cxx hpp hh hxx "+
		"cs fs rs rb erb sh bash zsh fish ps1 psm1 bat cmd swift m mm php pl pm r lua dart ex exs erl hrl "+
		"hs ml mli clj cljs el lisp scm jl nim zig v vue svelte astro "+
		"yaml yml json jsonc json5 jsonl ndjson toml xml xsd xsl xslt svg plist proto graphql gql "+
		"tf tfvars hcl nix sql css scss sass less styl mk cmake make dockerfile ipynb diff patch "+
		"gitignore gitattributes editorconfig dockerignore lock mod sum")
	add(HTML, "html htm xhtml")
	add(PDF, "pdf")
	add(Unsupported, "png jpg jpeg gif webp bmp ico icns tif tiff heic avif psd "+
		"zip gz tgz bz2 xz zst 7z rar tar jar war ear apk whl deb rpm dmg iso img "+
		"exe dll so dylib a o obj lib class wasm pyc pyo bin dat db sqlite sqlite3 "+
		"mp3 mp4 m4a wav ogg flac aac mov avi mkv webm "+
		"woff woff2 ttf otf eot doc docx xls xlsx ppt pptx odt ods odp epub")
}

// Files without an extension that are code by name.
var codeNames = map[string]bool{
	"makefile": true, "gnumakefile": true, "dockerfile": true, "containerfile": true,
	"jenkinsfile": true, "rakefile": true, "gemfile": true, "vagrantfile": true,
	"procfile": true, "justfile": true, "brewfile": true, "podfile": true,
}

// KindOf tells the kind of a file from its name and, when the name is not
// enough, its first bytes (head; [SniffLen] bytes are plenty, nil is allowed).
//
// The extension decides when it is known: "a.pdf" is a PDF whatever its
// bytes. A file without a known extension is sniffed: "%PDF-" is a PDF, a
// leading "<!doctype html" or "<html" is HTML, anything else that is not
// binary is plain text. A head that looks binary (NUL or other control
// bytes, unless it starts with a UTF-16 byte order mark) makes any text kind
// Unsupported, so an importer can skip the file without reading the rest.
func KindOf(name string, head []byte) Kind {
	base := strings.ToLower(filepath.Base(name))
	ext := filepath.Ext(base)
	k, known := extKinds[ext]
	switch {
	case known:
	case codeNames[base] || strings.HasPrefix(base, "dockerfile.") || strings.HasSuffix(base, ".dockerfile"):
		k = Code
	default:
		k = sniff(head)
	}
	if k != PDF && k != Unsupported && looksBinary(head) {
		return Unsupported
	}
	return k
}

// sniff guesses the kind of a file whose name does not tell.
func sniff(head []byte) Kind {
	if bytes.HasPrefix(head, []byte("%PDF-")) {
		return PDF
	}
	h := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n\f")
	if len(h) > 14 {
		h = h[:14]
	}
	lower := bytes.ToLower(h)
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) {
		return HTML
	}
	if looksBinary(head) {
		return Unsupported
	}
	return PlainText
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// looksBinary reports whether head holds bytes that do not occur in text:
// NUL and the C0 controls other than tab, newlines, form feed and escape
// (the same set net/http's content sniffer uses). UTF-16 text, which is full
// of NULs, is recognised by its byte order mark and is not binary.
func looksBinary(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return false
	}
	for _, c := range head {
		if c <= 0x08 || c == 0x0B || 0x0E <= c && c <= 0x1A || 0x1C <= c && c <= 0x1F {
			return true
		}
	}
	return false
}

// validUTF8 returns s with invalid UTF-8 sequences replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
