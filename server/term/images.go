package term

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
	"github.com/zeroagent/zero/vision"
)

// imagesLine says which pictures a message or a tool result carries (a
// terminal cannot show them): "  attached: shot.png (1280×720)", the size
// being what the model is sent. label is "attached" for a user's message,
// "" for a tool's ("image:" or "images:"). The names are the user's or a
// tool's: their control characters are shown, never let act.
func imagesLine(label string, refs []server.ImageRef) string {
	if label == "" {
		label = "image"
		if len(refs) > 1 {
			label = "images"
		}
	}
	parts := make([]string, len(refs))
	for i, im := range refs {
		name := strings.TrimSpace(im.Name)
		if name == "" {
			name = fmt.Sprintf("image %d", i+1)
			if len(refs) == 1 {
				name = "an image"
			}
		}
		p := termsafe.Visible(cut.Clip(name, 80))
		switch {
		case im.Width > 0 && im.Height > 0:
			p += fmt.Sprintf(" (%d×%d)", im.Width, im.Height)
		case im.MIME != "":
			p += " (" + termsafe.Visible(im.MIME) + ")"
		}
		parts[i] = p
	}
	return "  " + label + ": " + strings.Join(parts, ", ")
}

// imageRefs are images as events name them.
func imageRefs(images []llm.Image) []server.ImageRef {
	out := make([]server.ImageRef, len(images))
	for i, im := range images {
		out[i] = server.ImageRef{MIME: im.MIME, SHA256: im.Hash, Width: im.Width, Height: im.Height, Name: im.Name}
	}
	return out
}

// imageExts are the extensions of the pictures an @word attaches without a
// look at its bytes.
var imageExts = []string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"}

func hasImageExt(path string) bool {
	return slices.Contains(imageExts, strings.ToLower(filepath.Ext(path)))
}

// atWord is an @word of a chat message: @path, or @"a path with spaces".
type atWord struct {
	word string // as typed, with its @ (and quotes)
	path string // what it names
	// bare: unquoted, so punctuation that ends a sentence may stick to it
	// ("look at @shot.png.").
	bare bool
}

// atWords are the words of text that start with @ (at its start or after
// a space): people's @mentions too, which name no file.
func atWords(text string) []atWord {
	var out []atWord
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if i > 0 {
			if r, _ := utf8.DecodeLastRuneInString(text[:i]); !unicode.IsSpace(r) {
				continue // me@example.com
			}
		}
		rest := text[i+1:]
		if q := rest[:min(len(rest), 1)]; q == `"` || q == "'" {
			if end := strings.Index(rest[1:], q); end > 0 {
				out = append(out, atWord{word: text[i : i+1+end+2], path: rest[1 : 1+end]})
				i += end + 2
				continue
			}
		}
		end := strings.IndexFunc(rest, unicode.IsSpace)
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			out = append(out, atWord{word: text[i : i+1+end], path: rest[:end], bare: true})
		}
		i += end
	}
	return out
}

// chatImages finds the pictures a chat message attaches: each @word that
// names an image file (by its extension, or by its bytes) of the
// workspace, relative to its first root. The other @words are left alone
// (people write @mentions); notes say of an @word with an image's
// extension that names no file that it was sent as text.
func chatImages(roots []string, text string) (paths, notes []string) {
	if len(roots) == 0 {
		return nil, nil
	}
	for _, w := range atWords(text) {
		path, found, missing := w.path, false, false
		for _, try := range candidates(w) {
			ok, gone := attachable(roots[0], try)
			if ok {
				path, found = try, true
				break
			}
			missing = missing || gone
		}
		switch {
		case found:
			if !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
		case missing:
			notes = append(notes, fmt.Sprintf("(%s names no file in the workspace: sent as text)", termsafe.Visible(w.word)))
		}
	}
	return paths, notes
}

// candidates are the paths an @word may name: as typed, then without the
// punctuation that ends a sentence.
func candidates(w atWord) []string {
	out := []string{w.path}
	if w.bare {
		if p := strings.TrimRight(w.path, ".,;:!?)]}'\""); p != w.path && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// attachable reports whether path (relative to ws) names a picture to
// attach: a file with an image's extension (whatever it holds: a file
// that is no picture is refused with a reason, not sent as text), or a
// regular file whose bytes are a picture. missing says it names nothing
// and has an image's extension.
func attachable(ws, path string) (ok, missing bool) {
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	ext := hasImageExt(path)
	if !rootfs.Within(ws, filepath.Clean(p)) {
		// Nothing outside the workspace is looked into: one named as a
		// picture is attached, which refuses it with the reason.
		return ext, false
	}
	fi, err := os.Stat(p)
	if err != nil {
		if _, lerr := os.Lstat(p); lerr == nil {
			return ext, false // a link to nothing: attaching it says so
		}
		return false, ext && errors.Is(err, fs.ErrNotExist)
	}
	switch {
	case fi.IsDir():
		return false, false
	case ext:
		return true, false
	case !fi.Mode().IsRegular():
		return false, false
	}
	f, err := os.Open(p)
	if err != nil {
		return false, false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	_, ok = vision.Sniff(head[:n])
	return ok, false
}

// attachImages makes the chat's message of text with the pictures at
// paths: each read from the workspace (server.AttachFile: a link leading
// out is refused), checked and prepared (server.Attach). The error names
// the picture and says what is wrong with it.
func attachImages(roots []string, text string, paths []string) (loop.Input, error) {
	if len(paths) > loop.MaxInputImages {
		return loop.Input{Text: text}, fmt.Errorf("%d images named, at most %d go with one message", len(paths), loop.MaxInputImages)
	}
	atts := make([]server.Attachment, 0, len(paths))
	for _, p := range paths {
		a, err := server.AttachFile(roots, p)
		if err != nil {
			return loop.Input{Text: text}, err
		}
		atts = append(atts, a)
	}
	return server.Attach(text, atts)
}

// completeImage completes the @word that ends text (Tab) to the image
// files and folders of the workspace it may name: the one match whole (a
// folder with its slash), or as far as the matches agree; matches lists
// them when there are several. ok is false when text does not end in an
// @word or nothing matches.
func completeImage(ws, text string) (completed string, matches []string, ok bool) {
	i := strings.LastIndexFunc(text, unicode.IsSpace)
	word := text[i+1:]
	if !strings.HasPrefix(word, "@") || strings.ContainsAny(word, `"'`) {
		return "", nil, false
	}
	typed := word[1:]
	dir, base := filepath.Split(typed)
	look := dir
	if !filepath.IsAbs(look) {
		look = filepath.Join(ws, look)
	}
	entries, err := os.ReadDir(look)
	if err != nil {
		return "", nil, false
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(look, name)); err == nil {
				isDir = fi.IsDir()
			}
		}
		switch {
		case isDir:
			matches = append(matches, name+"/")
		case hasImageExt(name):
			matches = append(matches, name)
		}
	}
	if len(matches) == 0 {
		return "", nil, false
	}
	common := matches[0]
	for _, m := range matches[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	for !utf8.ValidString(common) { // cut within a character
		common = common[:len(common)-1]
	}
	path := dir + common
	spaced := strings.ContainsFunc(path, unicode.IsSpace)
	switch {
	case len(matches) > 1 && spaced:
		return text, matches, true // listed: the rest is typed quoted
	case len(matches) > 1:
		return text[:i+1] + "@" + path, matches, true
	case strings.HasSuffix(common, "/") && spaced:
		return "", nil, false // a folder with spaces: the path is typed quoted
	case strings.HasSuffix(common, "/"):
		return text[:i+1] + "@" + path, nil, true
	case spaced:
		return text[:i+1] + `@"` + path + `" `, nil, true
	}
	return text[:i+1] + "@" + path + " ", nil, true
}
