package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/joho/godotenv"
)

// MaxFileSize is the largest secrets file Load reads (1 MiB).
const MaxFileSize = 1 << 20

// Load reads secrets.env files in dotenv syntax; a later file's value for
// a name replaces an earlier one's (the user's file first, then a trusted
// workspace's). A file that does not exist is skipped without error.
//
// Each line is NAME=value, optionally after "export ", with the value
// unquoted (a " #" starts a comment), in single quotes (taken as it is) or
// in double quotes (\n and \r escapes; may span lines). Lines starting
// with # are comments. Values are decoded by github.com/joho/godotenv, one
// entry at a time, except that "$" is never expanded (godotenv would
// replace $NAME by an earlier entry's value; secret values often contain
// "$", and python-dotenv, which Agent Zero uses, does not expand them
// either).
//
// Names must match [A-Za-z_][A-Za-z0-9_]*, Agent Zero's alias pattern, and
// are upper-cased as Agent Zero does: API_key and API_KEY are one secret
// (the later line wins) and §§secret(api_key) finds it. An entry with an
// empty value is ignored: it neither defines nor removes the name.
//
// The errors name the file and, for a line that cannot be read, its line
// number; they never quote the file's text, which holds secrets. A bad line
// is skipped and the rest of the file still loads. A file larger than
// MaxFileSize, unreadable, or holding a NUL byte is skipped whole. The Set
// is never nil.
func Load(files ...string) (*Set, []error) {
	s := &Set{values: map[string]string{}}
	var (
		errs  []error
		lines []promptLine
	)
	for _, path := range files {
		src, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := parseFile(path, src)
		errs = append(errs, f.errs...)
		for _, e := range f.entries {
			if e.value == "" {
				continue
			}
			s.values[e.name] = e.value
			s.masked = append(s.masked, named{e.name, e.value})
		}
		if len(lines) > 0 && len(f.lines) > 0 {
			lines = append(lines, promptLine{kind: lineBlank})
		}
		lines = append(lines, f.lines...)
	}
	s.names = make([]string, 0, len(s.values))
	for name := range s.values {
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)

	// The prompt shows each name once, where its value was last set.
	last := map[string]int{}
	for i, l := range lines {
		if l.kind == linePair {
			last[l.name] = i
		}
	}
	for i, l := range lines {
		if l.kind != linePair || last[l.name] == i {
			s.prompt = append(s.prompt, l)
		}
	}
	return s, errs
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets: %s: %w", path, ErrNotRegular)
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: read %s: %w", path, err)
	}
	if len(src) > MaxFileSize {
		return nil, fmt.Errorf("secrets: %s: %w", path, ErrTooLarge)
	}
	return src, nil
}

type entry struct {
	name, value string
}

const (
	lineBlank = iota
	lineComment
	linePair
)

// promptLine is one line the system prompt shows: a comment as written, a
// blank line, or a secret's alias with the comment that followed it.
type promptLine struct {
	kind    int
	name    string // linePair
	comment string // lineComment: the line; linePair: its comment, if any
}

type parsed struct {
	entries []entry
	lines   []promptLine
	errs    []error
}

// parseFile cuts src into entries and hands each to godotenv. Cutting first
// is what lets a bad line be reported by number and skipped, where godotenv
// stops at the first error and quotes the rest of the file in its message.
// The cut follows godotenv's own rules: an entry ends at the end of its
// line, or, when its value opens a quote, at the next unescaped quote.
func parseFile(path string, src []byte) parsed {
	var p parsed
	fail := func(line int, err error, what string) {
		p.errs = append(p.errs, fmt.Errorf("secrets: %s:%d: %w: %s", path, line, err, what))
	}
	if bytes.IndexByte(src, 0) >= 0 {
		p.errs = append(p.errs, fmt.Errorf("secrets: %s: %w", path, ErrBinary))
		return p
	}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	src = bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))

	line := 1
	for i := 0; i < len(src); {
		eol := lineEnd(src, i)
		rest := bytes.TrimLeftFunc(src[i:eol], isSpace)
		switch {
		case len(rest) == 0:
			p.lines = append(p.lines, promptLine{kind: lineBlank})
			i, line = eol+1, line+1
			continue
		case rest[0] == '#':
			if !commentedEntry(rest) { // "# OLD_KEY=sk-..." would show an old key
				p.lines = append(p.lines, promptLine{kind: lineComment, comment: string(bytes.TrimRightFunc(src[i:eol], isSpace))})
			}
			i, line = eol+1, line+1
			continue
		}
		// One line may hold several entries (A="x" B=y), as godotenv reads it.
		start := eol - len(rest)
		for {
			end, comment, err := entryEnd(src, start)
			stmtLine := line
			line += bytes.Count(src[start:end], []byte("\n"))
			var pair *promptLine
			if errors.Is(err, ErrUnterminated) {
				fail(stmtLine, err, "the line is skipped")
			} else if err != nil {
				fail(stmtLine, err, "no '=' (a line is NAME=value); skipped")
			} else if e, ok := decodeEntry(src[start:end]); !ok {
				fail(stmtLine, ErrSyntax, "NAME in NAME=value must match [A-Za-z_][A-Za-z0-9_]*; skipped")
			} else {
				p.entries = append(p.entries, e)
				if e.value != "" {
					p.lines = append(p.lines, promptLine{kind: linePair, name: e.name, comment: comment})
					pair = &p.lines[len(p.lines)-1]
				}
			}
			// After a closing quote the line may go on: a comment, or
			// another entry.
			eol = lineEnd(src, end)
			next := bytes.TrimLeftFunc(src[end:eol], isSpace)
			if len(next) == 0 || next[0] == '#' {
				if len(next) > 0 && pair != nil && pair.comment == "" {
					pair.comment = string(bytes.TrimRightFunc(next, isSpace))
				}
				break
			}
			start = eol - len(next)
		}
		i, line = eol+1, line+1
	}
	return p
}

// lineEnd returns the index of the '\n' ending the line at i, or len(src).
func lineEnd(src []byte, i int) int {
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

// entryEnd returns the end of the entry starting at start, and the comment
// that ends its line when the value is unquoted.
func entryEnd(src []byte, start int) (end int, comment string, err error) {
	eol := lineEnd(src, start)
	sep := bytes.IndexAny(src[start:eol], "=:")
	if sep < 0 {
		return eol, "", ErrSyntax
	}
	value := bytes.TrimLeftFunc(src[start+sep+1:eol], isSpace)
	v := eol - len(value)
	if len(value) == 0 || (value[0] != '"' && value[0] != '\'') {
		// godotenv: the last '#' after white space starts a comment.
		for k := eol - 1; k > v; k-- {
			if src[k] == '#' {
				if r, _ := utf8.DecodeLastRune(src[v:k]); isSpace(r) {
					comment = string(bytes.TrimRightFunc(src[k:eol], isSpace))
					break
				}
			}
		}
		return eol, comment, nil
	}
	q := src[v]
	for j := v + 1; j < len(src); j++ {
		if src[j] == q && src[j-1] != '\\' {
			return j + 1, "", nil
		}
	}
	return eol, "", ErrUnterminated
}

// decodeEntry decodes one entry with godotenv, with "$" hidden from its
// variable expansion.
func decodeEntry(stmt []byte) (entry, bool) {
	stmt = bytes.ReplaceAll(stmt, []byte("$"), []byte{0})
	m, err := godotenv.UnmarshalBytes(stmt)
	if err != nil || len(m) != 1 {
		return entry{}, false
	}
	for k, v := range m {
		if !validName(k) {
			return entry{}, false
		}
		return entry{name: strings.ToUpper(k), value: strings.ReplaceAll(v, "\x00", "$")}, true
	}
	return entry{}, false
}

// commentedEntry reports whether a comment line is an entry commented out
// ("# OLD_KEY=value"): its value may be a real key, so the prompt leaves
// it out.
func commentedEntry(comment []byte) bool {
	c := bytes.TrimLeftFunc(bytes.TrimLeft(comment, "#"), isSpace)
	c = bytes.TrimPrefix(c, []byte("export "))
	n := 0
	for n < len(c) && (isNameByte(c[n], n == 0) || c[n] == '.' || c[n] == '-') {
		n++
	}
	return n > 0 && len(bytes.TrimLeftFunc(c[n:], isSpace)) > 0 && bytes.TrimLeftFunc(c[n:], isSpace)[0] == '='
}

// isSpace is godotenv's: white space that does not end a line.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', '\r', ' ', 0x85, 0xA0:
		return true
	}
	return false
}

// Prompt returns the secrets part of the system prompt (the "secrets"
// variable of Agent Zero's agent.system.secrets.md): the files' lines with
// each value replaced by its alias, keeping comments, which tell the model
// what each secret is for. Each name appears once, where its value was last
// set. Unlike Agent Zero it leaves out lines that could not be read and
// commented-out entries ("# OLD_KEY=..."), which may hold values; values
// of the Set that appear in a comment are masked. It is "" when the Set has
// no secrets for the agent.
func (s *Set) Prompt() string {
	if s == nil || len(s.names) == 0 {
		return ""
	}
	var out []string
	for _, l := range s.prompt {
		switch l.kind {
		case lineBlank:
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
		case lineComment:
			out = append(out, s.Mask(l.comment))
		case linePair:
			text := Alias(l.name)
			if l.comment != "" {
				text += " " + s.Mask(l.comment)
			}
			out = append(out, text)
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}
