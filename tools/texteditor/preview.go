package texteditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
)

// PreviewChange works out what a text_editor:write or :patch call would do
// to a file on the disk, before it runs, for the person asked to approve
// it: the file (absolute, as the model named it), its text now (nil: it
// does not exist yet) and the text the call would leave. Paths resolve
// against roots as the tool resolves them (relative ones against the first
// root), and the file is read through an os.Root of the root that holds
// it. ok is false for any other call, and when the change cannot be worked
// out (a path outside the roots, a patch that does not apply to the file as
// it is, a binary or oversized file, a named pipe or anything else that is
// not a regular file): msg then says why, in the words the tool would give
// the model when it runs.
func PreviewChange(roots []string, method string, args map[string]any) (diff loop.FileDiff, msg string, ok bool) {
	if method != "write" && method != "patch" {
		return loop.FileDiff{}, "", false
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return loop.FileDiff{}, err.Error(), false
	}
	var arg string
	var write writeArgs
	var patch patchArgs
	if method == "write" {
		err = json.Unmarshal(raw, &write)
		arg = write.Path
	} else {
		err = json.Unmarshal(raw, &patch)
		arg = patch.Path
	}
	switch {
	case err != nil:
		return loop.FileDiff{}, "tool_args: " + err.Error(), false
	case strings.TrimSpace(arg) == "":
		return loop.FileDiff{}, "no tool_args.path", false
	case len(roots) == 0:
		return loop.FileDiff{}, "no workspace", false
	}
	p, msg := resolve(New(roots...).roots, arg)
	if msg != "" {
		return loop.FileDiff{}, msg, false
	}
	p.root, p.rootErr = os.OpenRoot(p.base)
	if p.root != nil {
		defer p.root.Close()
		// A named pipe or a device is refused before it is opened; the
		// reads below open without blocking all the same, for one that
		// takes the name meanwhile: this runs on the chat's update path,
		// where a blocked open(2) freezes it past Ctrl-C.
		if fi, err := p.root.Stat(p.rel); err == nil {
			if kind := notRegular(fi.Mode()); kind != "" {
				return loop.FileDiff{}, notRegularPreview(p.show, kind), false
			}
		}
	}
	if method == "write" {
		if write.Content == nil {
			return loop.FileDiff{}, "no tool_args.content", false
		}
		var old *string
		switch {
		case p.root != nil:
			var known bool
			var kind string
			if old, known, kind = diskOld(p.root, p.rel); kind != "" {
				return loop.FileDiff{}, notRegularPreview(p.show, kind), false
			} else if !known {
				return loop.FileDiff{}, fmt.Sprintf("%s cannot be shown (not text, unreadable, or over %d MiB)", p.show, diffMax>>20), false
			}
		case !errors.Is(p.rootErr, fs.ErrNotExist):
			// The folder is there but could not be opened: the file may
			// well exist, so it is not shown as a new one.
			return loop.FileDiff{}, fmt.Sprintf("%s cannot be shown (%s)", p.show, rootfs.Reason(p.rootErr)), false
		}
		if len(*write.Content) > diffMax {
			return loop.FileDiff{}, fmt.Sprintf("the new text is over %d MiB", diffMax>>20), false
		}
		return loop.FileDiff{Path: p.show, OldText: old, NewText: *write.Content}, "", true
	}
	te := New(roots...)
	tf, msg := te.load(context.Background(), p) // from the disk: the context is not used
	if msg != "" {
		return loop.FileDiff{}, msg, false
	}
	edits, msg := validateEdits(patch.Edits, len(tf.lines), tf.crlf)
	if msg != "" {
		return loop.FileDiff{}, msg, false
	}
	if len(edits) == 0 {
		return loop.FileDiff{}, "no edits", false
	}
	_, text := patched(tf, edits)
	if len(tf.text) > diffMax || len(text) > diffMax {
		// A diff of such a file takes long to work out and helps no one
		// reading it at a question.
		return loop.FileDiff{}, fmt.Sprintf("%s is over %d MiB", p.show, diffMax>>20), false
	}
	old := tf.text
	return loop.FileDiff{Path: p.show, OldText: &old, NewText: text}, "", true
}

// notRegularPreview is PreviewChange's message for path, a file of
// the kind notRegular gave.
func notRegularPreview(path, kind string) string {
	return fmt.Sprintf("%s is not a regular file (%s)", path, kind)
}

// patched applies edits (checked, sorted) to tf: the lines and the
// text of the file after the patch. A patch keeps the file's final
// newline, and gives an empty file one.
func patched(tf *file, edits []lineEdit) ([]string, string) {
	lines := tf.lines
	for _, e := range slices.Backward(edits) {
		lines = slices.Replace(lines, e.from-1, e.to, e.lines...)
	}
	trailing := tf.trailing || len(tf.lines) == 0
	text := strings.Join(lines, "\n")
	if trailing && len(lines) > 0 {
		text += "\n"
	}
	return lines, text
}
