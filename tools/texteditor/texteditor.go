// Package texteditor is Agent Zero's text_editor tool: read, write and
// patch text files by line number, confined to the workspace roots, on the
// disk or through the editor's view of its files (Files), and the preview
// of a write or patch that an approval question shows (PreviewChange).
package texteditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
)

// ErrNoWorkspace means the text editor has no folder to work in: it was
// built without roots and the session has no workspace. The model cannot
// fix that, so it is a Go error, not a result.
var ErrNoWorkspace = errors.New("text_editor: no workspace root")

// Limits of the text editor. Agent Zero counts tokens; we count bytes at
// about four bytes a token, which needs no tokenizer and errs on the side of
// less text.
const (
	// readLines is how many lines a read without line_to shows.
	readLines = 200
	// lineBytes cuts a longer line (500 tokens).
	lineBytes = 2000
	// readBytes caps the numbered text of one result (6,000 tokens).
	readBytes = 24000
	// maxFile is the largest file read or patched whole; bigger files
	// are for grep and sed in the terminal.
	maxFile = 32 << 20
	// binaryPeek is how much of a file is searched for a NUL byte.
	binaryPeek = 8 << 10
	// patchContext is how many unchanged lines a patch result shows
	// around each edited region.
	patchContext = 2
	// diffMax caps each side of a result's diff: past it an editor's
	// diff view is no help and the event would carry megabytes, so a
	// write or patch of a bigger file reports no Diffs.
	diffMax = 1 << 20
)

// ReadsKey is the key in loop.Agent.Data under which the text
// editor keeps, per agent, the stamps of the files it read or wrote: a
// map[string]FileStamp keyed by the file's real (symlink-free) path.
const ReadsKey = "_text_editor_reads"

// FileStamp is what the text editor remembers of a file when the agent
// reads or writes it. A patch is accepted only while the file still has
// the same modification time, size and content hash, so the line numbers
// the model saw are the file's line numbers. Files read through the
// editor (Tool.WithFiles) have no modification time: their ModTime
// is zero on both sides of the comparison, and Size and Sum decide.
type FileStamp struct {
	ModTime time.Time // zero when the file came through Files
	Size    int64
	// Sum is the SHA-256 of the content: the only sign that an editor
	// buffer changed in place, and on disk it catches a change that kept
	// the modification time and the size.
	Sum [32]byte
	// Shifted marks a stamp voided by a patch that changed the line count:
	// the numbers the model saw are out of date although the file changed
	// through the editor itself.
	Shifted bool
}

// same reports whether s and o describe the same file content, Shifted
// aside.
func (s FileStamp) same(o FileStamp) bool {
	return s.ModTime.Equal(o.ModTime) && s.Size == o.Size && s.Sum == o.Sum
}

// Tool is Agent Zero's `text_editor` tool with its methods read,
// write and patch: numbered-line reads within limits, whole-file writes that
// create directories, and line patches that need a fresh read. Every path is
// confined to the workspace roots.
type Tool struct {
	roots []string
	files Files // nil: the disk
	// afterResolve, when set, is called between the check of a path and
	// its use, with the path's real form: the tests swap a folder for a
	// symlink there, as a process racing in the workspace could.
	afterResolve func(real string)
}

// Files is the editor's view of files, unsaved buffers included: ACP's
// fs/read_text_file and fs/write_text_file. Paths are absolute. A
// server.FileAccess is a Files.
type Files interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// WithFiles returns a copy of te that reads and writes through f, so the
// agent sees and edits what the user sees; nil f means the disk. Paths are
// still confined to te's roots, checked on the disk.
func (te *Tool) WithFiles(f Files) *Tool {
	c := *te
	c.roots = slices.Clone(te.roots)
	c.files = f
	return &c
}

// New returns the tool confined to roots. Relative paths from the
// model resolve against the first root. With no roots, the tool uses the
// workspace of the calling agent's session.
func New(roots ...string) *Tool {
	te := &Tool{}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		te.roots = append(te.roots, filepath.Clean(r))
	}
	return te
}

var (
	_ loop.Tool         = (*Tool)(nil)
	_ loop.ToolKinder   = (*Tool)(nil)
	_ loop.PromptVarser = (*Tool)(nil)
)

// Name is the tool name the model calls, with a method: text_editor:read.
func (*Tool) Name() string { return "text_editor" }

// Kind is "read" for text_editor:read, "edit" for the methods that change
// files (and a method the tool does not know, which it refuses).
func (*Tool) Kind(method string) string {
	if method == "read" {
		return "read"
	}
	return "edit"
}

// PromptVars gives the prompts default_line_count, the lines a read without
// line_to shows (Agent Zero's agent.system.tool.text_editor.md uses it).
func (*Tool) PromptVars() map[string]any {
	return map[string]any{"default_line_count": readLines}
}

// The methods' arguments; the schemas are generated from them (Specs).
type readArgs struct {
	Path     string `json:"path" jsonschema:"the file, relative to the workspace or absolute inside it"`
	LineFrom *int   `json:"line_from,omitempty" jsonschema:"the first line to show, from 1; default 1"`
	LineTo   *int   `json:"line_to,omitempty" jsonschema:"the last line to show, inclusive; default 200 lines on"`
}

type writeArgs struct {
	Path    string  `json:"path" jsonschema:"the file, relative to the workspace or absolute inside it; its folders are made"`
	Content *string `json:"content" jsonschema:"the whole text of the file"`
}

type edit struct {
	From    *int    `json:"from" jsonschema:"the first line the edit replaces, numbered as your last read; the line it inserts before when to is missing"`
	To      *int    `json:"to,omitempty" jsonschema:"the last line the edit replaces, inclusive; without it the content is inserted before from"`
	Content *string `json:"content,omitempty" jsonschema:"the new lines; without it the lines from-to are deleted"`
}

type patchArgs struct {
	Path  string `json:"path" jsonschema:"the file, relative to the workspace or absolute inside it"`
	Edits []edit `json:"edits" jsonschema:"line edits numbered as your last read of the file, not overlapping"`
}

// specs are the methods' schemas, computed once.
var specs = sync.OnceValue(func() []loop.ToolSpec {
	return []loop.ToolSpec{
		{Method: "read", Parameters: argsSchema[readArgs]()},
		{Method: "write", Parameters: argsSchema[writeArgs]()},
		{Method: "patch", Parameters: argsSchema[patchArgs]()},
	}
})

// Specs are the schemas of read, write and patch.
func (*Tool) Specs() []loop.ToolSpec { return specs() }

// Execute runs text_editor:read, :write or :patch. ctx bounds the calls to
// the editor's Files.
func (te *Tool) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var run func(*path) loop.ToolResult
	var arg string
	switch call.Method {
	case "read":
		var a readArgs
		if err := call.DecodeArgs(&a); err != nil {
			return errorResult(err.Error()), nil
		}
		arg = a.Path
		run = func(p *path) loop.ToolResult { return te.read(ctx, call, p, a) }
	case "write":
		var a writeArgs
		if err := call.DecodeArgs(&a); err != nil {
			return errorResult(err.Error()), nil
		}
		arg = a.Path
		run = func(p *path) loop.ToolResult { return te.write(ctx, call, p, a) }
	case "patch":
		var a patchArgs
		if err := call.DecodeArgs(&a); err != nil {
			return errorResult(err.Error()), nil
		}
		arg = a.Path
		run = func(p *path) loop.ToolResult { return te.patch(ctx, call, p, a) }
	case "":
		return errorResult("text_editor needs a method: call text_editor:read, text_editor:write or text_editor:patch"), nil
	default:
		return errorResult(fmt.Sprintf("unknown method %q: use text_editor:read, text_editor:write or text_editor:patch", call.Method)), nil
	}
	if strings.TrimSpace(arg) == "" {
		return errorResult("text_editor:" + call.Method + " needs tool_args.path, the file to " + call.Method), nil
	}
	roots := te.roots
	if len(roots) == 0 {
		ws := ""
		if call.Agent != nil && call.Agent.Session() != nil {
			ws = call.Agent.Session().Workspace()
		}
		if ws == "" {
			return loop.ToolResult{}, fmt.Errorf("text_editor:%s %q: %w", call.Method, arg, ErrNoWorkspace)
		}
		roots = New(ws).roots
	}
	p, msg := resolve(roots, arg)
	if msg != "" {
		return errorResult(msg), nil
	}
	// The disk is used through an os.Root of the root that holds the path,
	// so a symlink swapped in after the check above cannot lead outside.
	// Through the editor's Files only a write looks at the disk (is the
	// path a directory?).
	if te.files == nil || call.Method == "write" {
		p.root, p.rootErr = os.OpenRoot(p.base)
		if errors.Is(p.rootErr, fs.ErrNotExist) && te.files == nil && call.Method == "write" {
			// A write makes its folders, the root's included.
			if err := os.MkdirAll(p.base, 0o755); err == nil {
				p.root, p.rootErr = os.OpenRoot(p.base)
			}
		}
		if p.root != nil {
			defer p.root.Close()
		}
	}
	if te.afterResolve != nil {
		te.afterResolve(p.real)
	}
	return run(p), nil
}

func errorResult(text string) loop.ToolResult { return loop.ToolResult{IsError: true, Text: text} }

// path is a model's path checked against the roots.
//
// The check resolves symlinks by name, and the folders it went through can
// change before the file is opened: the agent's own shell runs beside the
// tool and may swap a folder for a symlink to /etc in between. So the disk
// is never opened by the path: it is opened as rel in root, an os.Root of
// the workspace root that holds real, which refuses every step that
// leaves that root, whatever the tree has become since the check.
type path struct {
	show string // absolute, as the model named it (symlinks kept): what results print
	real string // symlinks resolved: the key of stamps, the path given to Files
	base string // the root that holds real, symlinks resolved
	rel  string // real relative to base: what is opened in root
	arg  string // the path as the model gave it, for messages
	// roots are the workspace roots, for messages.
	roots []string
	// root is base opened as an os.Root, nil when rootErr says why not or
	// when the call needs no disk.
	root    *os.Root
	rootErr error
}

// refuse is the message for the model when p leads outside the roots.
func (p *path) refuse(why string) string {
	return refusal(p.roots, p.arg, why)
}

// escapeWhy is why a path is refused when os.Root finds a step out of
// the root that the check before did not see.
const escapeWhy = "leads outside the workspace through a symlink"

// refused reports whether msg, from a disk operation on p, is the refusal
// of diskMessage, which is the whole result rather than a reason after
// "cannot read ...: ".
func (p *path) refused(msg string) bool { return msg == p.refuse(escapeWhy) }

func refusal(roots []string, path, why string) string {
	return fmt.Sprintf("path %q %s: text_editor works only inside %s", path, why, strings.Join(roots, ", "))
}

// diskRoot returns p's os.Root, or the error that kept it from opening.
func (p *path) diskRoot() (*os.Root, error) {
	if p.root == nil {
		if p.rootErr != nil {
			return nil, p.rootErr
		}
		return nil, fs.ErrNotExist
	}
	return p.root, nil
}

// diskMessage words for the model the error of a disk operation on p: a
// step through a symlink out of the root gets the refusal of a path that
// leads outside (the tree changed after the check, or the link is one
// the check let through and os.Root does not follow), any other error
// rootfs.Reason after prefix.
func (p *path) diskMessage(prefix string, err error) string {
	if rootfs.IsEscape(err) {
		return p.refuse(escapeWhy)
	}
	return prefix + rootfs.Reason(err)
}

// resolve confines arg, the model's path, to roots. It returns a message
// for the model when the path leads outside, lexically (.., an absolute path
// elsewhere) or through a symlink.
func resolve(roots []string, arg string) (*path, string) {
	refuse := func(why string) string { return refusal(roots, arg, why) }
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	if !slices.ContainsFunc(roots, func(r string) bool { return rootfs.Within(r, p) }) {
		return nil, refuse("is outside the workspace")
	}
	real, err := realPath(p)
	if err != nil {
		return nil, refuse("cannot be resolved (" + err.Error() + ")")
	}
	base := ""
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = r // a root that does not exist (yet) can only be matched as written
		}
		if rootfs.Within(rr, real) {
			base = rr
		} else if rootfs.Within(r, real) {
			base = r
		} else {
			continue
		}
		break
	}
	if base == "" {
		return nil, refuse("leads outside the workspace through a symlink (to " + real + ")")
	}
	rel, err := filepath.Rel(base, real)
	if err != nil {
		return nil, refuse("cannot be resolved (" + err.Error() + ")")
	}
	return &path{show: p, real: real, base: base, rel: rel, arg: arg, roots: roots}, ""
}

// realPath resolves the symlinks of the longest existing prefix of p and
// appends the rest, which does not exist yet. A dangling symlink is an
// error: writing through it would create its target, wherever that is.
func realPath(p string) (string, error) {
	rest := ""
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symlink to a missing target", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// file is a text file split into lines.
type file struct {
	text     string   // the whole content, for diffs
	lines    []string // without "\n"; a CRLF file's lines keep their "\r"
	trailing bool     // the last line ends with a newline
	crlf     bool
	stamp    FileStamp
	mode     fs.FileMode
}

// load reads a text file from the disk or through the editor's Files,
// refusing binary and oversized ones with a message for the model.
func (te *Tool) load(ctx context.Context, p *path) (*file, string) {
	var data string
	tf := &file{mode: 0o644}
	if te.files == nil {
		b, fi, msg := readDisk(p)
		if msg != "" {
			return nil, msg
		}
		data = string(b)
		tf.stamp = FileStamp{ModTime: fi.ModTime(), Size: fi.Size(), Sum: sha256.Sum256(b)}
		tf.mode = fi.Mode().Perm()
	} else {
		s, err := te.files.ReadTextFile(ctx, p.real)
		if err != nil {
			return nil, filesMessage("read", err)
		}
		if len(s) > maxFile {
			return nil, fmt.Sprintf("the file is %d bytes, more than the %d MiB text_editor handles; use grep, sed or head in the terminal", len(s), maxFile>>20)
		}
		data = s
		tf.stamp = FileStamp{Size: int64(len(s)), Sum: sha256.Sum256([]byte(s))}
	}
	if strings.IndexByte(data[:min(len(data), binaryPeek)], 0) >= 0 {
		return nil, "the file looks binary (it has NUL bytes); text_editor edits text only, use the terminal"
	}
	if !utf8.ValidString(data) {
		b := []byte(data)
		line := 1 + bytes.Count(b[:invalidUTF8At(b)], []byte("\n"))
		return nil, fmt.Sprintf("the file is not UTF-8 text (invalid bytes on line %d); text_editor edits UTF-8 text only, use the terminal", line)
	}
	tf.text = data
	tf.lines, tf.trailing = splitLines(data)
	tf.crlf = len(tf.lines) > 0 && strings.HasSuffix(tf.lines[0], "\r")
	return tf, ""
}

// noBlock is the open flag that keeps open(2) of a named pipe from
// waiting for a writer, which no context or Ctrl-C can interrupt; 0 where
// there are no named pipes to open.
var noBlock = func() int {
	if runtime.GOOS == "windows" {
		return 0
	}
	return syscall.O_NONBLOCK
}()

// open opens name in root for reading without blocking in open(2),
// whatever kind of file it is. Only regular files are to be read from it:
// check the mode with notRegular first.
func open(root *os.Root, name string) (*os.File, error) {
	return root.OpenFile(name, os.O_RDONLY|noBlock, 0)
}

// notRegular is rootfs.NotRegular: the text editor reads and replaces
// regular files only (replacing a pipe or a device breaks whatever uses it).
func notRegular(m fs.FileMode) string { return rootfs.NotRegular(m) }

// notRegularMessage is the message for the model about name, a file
// of the kind notRegular gave.
func notRegularMessage(name, kind string) string {
	return fmt.Sprintf("%s is not a regular file (%s); text_editor reads and writes regular files only", name, kind)
}

// readDisk reads a file of at most maxFile bytes, opened in p's
// root. The file's info is taken before the content, so a change during
// the read makes the stamp stale rather than wrong.
func readDisk(p *path) ([]byte, fs.FileInfo, string) {
	root, err := p.diskRoot()
	if err != nil {
		return nil, nil, rootfs.Reason(err)
	}
	f, err := open(root, p.rel)
	if err != nil {
		return nil, nil, p.diskMessage("", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, rootfs.Reason(err)
	}
	if fi.IsDir() {
		return nil, nil, "it is a directory; list it with code_execution_tool (ls)"
	}
	if kind := notRegular(fi.Mode()); kind != "" {
		return nil, nil, notRegularMessage("it", kind)
	}
	if fi.Size() > maxFile {
		return nil, nil, fmt.Sprintf("the file is %d bytes, more than the %d MiB text_editor handles; use grep, sed or head in the terminal", fi.Size(), maxFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, nil, rootfs.Reason(err)
	}
	if len(data) > maxFile {
		return nil, nil, fmt.Sprintf("the file grew past the %d MiB text_editor handles; use the terminal", maxFile>>20)
	}
	return data, fi, ""
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// splitLines splits s at "\n". A final newline ends the last line rather
// than starting an empty one, as editors count.
func splitLines(s string) (lines []string, trailing bool) {
	if s == "" {
		return nil, false
	}
	trailing = strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), trailing
}

// filesMessage words an error of the editor's Files for the model; op
// is "read" or "write".
func filesMessage(op string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "the editor did not " + op + " it: the call was cancelled"
	}
	return fmt.Sprintf("the editor could not %s it: %v", op, err)
}

// diff is the Diffs of a result that changed path from old (nil: it did
// not exist) to new; none when either side is over diffMax.
func diff(path string, old *string, new string) []loop.FileDiff {
	if len(new) > diffMax || old != nil && len(*old) > diffMax {
		return nil
	}
	return []loop.FileDiff{{Path: path, OldText: old, NewText: new}}
}

// stamps returns the agent's map of file stamps, creating it.
func stamps(a *loop.Agent) map[string]FileStamp {
	m, ok := a.Data[ReadsKey].(map[string]FileStamp)
	if !ok {
		m = map[string]FileStamp{}
		a.Data[ReadsKey] = m
	}
	return m
}

// numbered writes lines[from-1:to] with right-aligned line numbers into b,
// cutting long lines and stopping when budget bytes are used up. It returns
// the last line written (from-1 when none fit) and the lines it cut.
func numbered(b *strings.Builder, lines []string, from, to, width int, budget *int) (last int, cut []int) {
	last = from - 1
	for n := from; n <= to; n++ {
		text := strings.TrimSuffix(lines[n-1], "\r")
		if len(text) > lineBytes {
			keep := lineBytes
			for keep > 0 && !utf8.RuneStart(text[keep]) {
				keep--
			}
			text = text[:keep] + fmt.Sprintf(" [... line cut: %d of %d bytes shown]", keep, len(text))
			cut = append(cut, n)
		}
		row := fmt.Sprintf("%*d | %s\n", width, n, text)
		if len(row) > *budget && *budget < readBytes { // the first row of a result always fits
			break
		}
		*budget -= len(row)
		b.WriteString(row)
		last = n
	}
	return last, cut
}

// numberWidth keeps the numbers of a listing aligned, as in "   12 | text".
func numberWidth(maxLine int) int { return max(5, len(strconv.Itoa(maxLine))) }

func cutNote(cut []int) string {
	if len(cut) == 0 {
		return ""
	}
	s := make([]string, len(cut))
	for i, n := range cut {
		s[i] = strconv.Itoa(n)
	}
	return fmt.Sprintf("[long lines cut: %s; use the terminal (sed, grep) for their full text, and patch them whole]\n", strings.Join(s, ", "))
}

func (te *Tool) read(ctx context.Context, call *loop.ToolCall, p *path, a readArgs) loop.ToolResult {
	tf, msg := te.load(ctx, p)
	if msg != "" {
		if p.refused(msg) {
			return errorResult(msg)
		}
		return errorResult(fmt.Sprintf("cannot read %s: %s", p.show, msg))
	}
	total := len(tf.lines)
	from := 1
	if a.LineFrom != nil {
		from = max(*a.LineFrom, 1)
	}
	to := from + readLines - 1
	if a.LineTo != nil {
		to = *a.LineTo
	}
	if to < from {
		return errorResult(fmt.Sprintf("cannot read %s: line_to %d is before line_from %d", p.show, to, from))
	}
	stamps(call.Agent)[p.real] = tf.stamp
	if total == 0 {
		return loop.ToolResult{Text: p.show + ": empty file (0 lines)"}
	}
	if from > total {
		return errorResult(fmt.Sprintf("cannot read %s from line %d: the file has %d lines", p.show, from, total))
	}
	to = min(to, total)
	var body strings.Builder
	budget := readBytes
	last, cut := numbered(&body, tf.lines, from, to, numberWidth(to), &budget)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d lines, showing %d-%d\n", p.show, total, from, last)
	b.WriteString(body.String())
	b.WriteString(cutNote(cut))
	switch {
	case last < to:
		fmt.Fprintf(&b, "[output stops at line %d (size limit); read on with line_from %d]\n", last, last+1)
	case last < total:
		fmt.Fprintf(&b, "[lines %d-%d not shown; read them with line_from %d]\n", last+1, total, last+1)
	}
	return loop.ToolResult{Text: strings.TrimSuffix(b.String(), "\n")}
}

func (te *Tool) write(ctx context.Context, call *loop.ToolCall, p *path, a writeArgs) loop.ToolResult {
	if a.Content == nil {
		return errorResult("text_editor:write needs tool_args.content, the whole new text of the file (\"\" for an empty file)")
	}
	if p.root != nil {
		if fi, err := p.root.Stat(p.rel); err == nil && fi.IsDir() {
			return errorResult(fmt.Sprintf("cannot write %s: it is a directory", p.show))
		} else if err == nil && !fi.Mode().IsRegular() {
			return errorResult(fmt.Sprintf("cannot write %s: %s", p.show, notRegularMessage("it", notRegular(fi.Mode()))))
		} else if rootfs.IsEscape(err) {
			return errorResult(p.refuse(escapeWhy))
		}
	}
	var st FileStamp
	var old *string
	known := true // old is the file's previous text, nil for none
	if te.files != nil {
		if s, err := te.files.ReadTextFile(ctx, p.real); err == nil {
			old = &s
		}
		// The editor makes the file and its folders, in a buffer or on disk.
		if err := te.files.WriteTextFile(ctx, p.real, *a.Content); err != nil {
			return errorResult(fmt.Sprintf("cannot write %s: %s", p.show, filesMessage("write", err)))
		}
		st = FileStamp{Size: int64(len(*a.Content)), Sum: sha256.Sum256([]byte(*a.Content))}
	} else {
		root, err := p.diskRoot()
		if err != nil {
			return errorResult(fmt.Sprintf("cannot write %s: creating its folder: %s", p.show, rootfs.Reason(err)))
		}
		var kind string
		if old, known, kind = diskOld(root, p.rel); kind != "" {
			// It became one after the check above.
			return errorResult(fmt.Sprintf("cannot write %s: %s", p.show, notRegularMessage("it", kind)))
		}
		if err := root.MkdirAll(filepath.Dir(p.rel), 0o755); err != nil {
			return errorResult(p.diskMessage(fmt.Sprintf("cannot write %s: creating its folder: ", p.show), err))
		}
		mode := fs.FileMode(0o644)
		if fi, err := root.Stat(p.rel); err == nil {
			mode = fi.Mode().Perm()
		}
		st, err = replaceFile(root, p.rel, []byte(*a.Content), mode)
		if err != nil {
			return errorResult(p.diskMessage(fmt.Sprintf("cannot write %s: ", p.show), err))
		}
	}
	stamps(call.Agent)[p.real] = st
	lines, _ := splitLines(*a.Content)
	var b strings.Builder
	fmt.Fprintf(&b, "%s written: %d lines\n", p.show, len(lines))
	if len(lines) > 0 {
		budget := readBytes
		last, cut := numbered(&b, lines, 1, len(lines), numberWidth(len(lines)), &budget)
		b.WriteString(cutNote(cut))
		if last < len(lines) {
			fmt.Fprintf(&b, "[listing stops at line %d (size limit); read on with line_from %d]\n", last, last+1)
		}
	}
	res := loop.ToolResult{Text: strings.TrimSuffix(b.String(), "\n")}
	if known {
		res.Diffs = diff(p.real, old, *a.Content)
	}
	return res
}

// diskOld returns the text of the file name in root that a write is
// about to replace: nil and true when there is none; false when it cannot
// be shown as the old side of a diff (unreadable, binary, or over
// diffMax). kind is notRegular's word for a name that is
// not a regular file ("a named pipe"), which is not to be replaced: it is
// opened without blocking and not read.
func diskOld(root *os.Root, name string) (old *string, known bool, kind string) {
	f, err := open(root, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, ""
	}
	if err != nil {
		return nil, false, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, ""
	}
	if kind := notRegular(fi.Mode()); kind != "" {
		return nil, false, kind
	}
	data, err := io.ReadAll(io.LimitReader(f, diffMax+1))
	if err != nil || len(data) > diffMax || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, false, ""
	}
	s := string(data)
	return &s, true, ""
}

// replaceFile writes data to a temporary file beside name in root and
// renames it over name, so a crash or a full disk never leaves half a
// file, and returns the new file's stamp. Both the temporary file and the
// rename stay in root, whatever the folders on the way have become.
func replaceFile(root *os.Root, name string, data []byte, mode fs.FileMode) (FileStamp, error) {
	tmp, tmpName, err := createTemp(root, name)
	if err != nil {
		return FileStamp{}, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			root.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return FileStamp{}, err
	}
	if err := tmp.Chmod(mode); err != nil {
		return FileStamp{}, err
	}
	// The stamp is of the file written, taken by its descriptor: a rename
	// keeps the modification time, and a stat by name after it could
	// describe whatever took the name meanwhile.
	fi, err := tmp.Stat()
	if err != nil {
		return FileStamp{}, err
	}
	if err := tmp.Close(); err != nil {
		return FileStamp{}, err
	}
	if err := root.Rename(tmpName, name); err != nil {
		return FileStamp{}, err
	}
	done = true
	return FileStamp{ModTime: fi.ModTime(), Size: fi.Size(), Sum: sha256.Sum256(data)}, nil
}

// createTemp creates a new file beside name in root, named as
// os.CreateTemp would with the pattern "."+base+".zero-*", and returns it
// with its name in root.
func createTemp(root *os.Root, name string) (*os.File, string, error) {
	dir, base := filepath.Split(name)
	for try := 0; ; try++ {
		tmpName := dir + "." + base + ".zero-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := root.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, tmpName, err
	}
}

// lineEdit is one validated edit. An insert has to == from-1: it removes
// nothing and puts its lines before line from.
type lineEdit struct {
	from, to int
	lines    []string
	index    int // position in the model's list, for messages and order
}

func (e lineEdit) insert() bool { return e.to < e.from }
func (e lineEdit) removed() int { return e.to - e.from + 1 }

func (te *Tool) patch(ctx context.Context, call *loop.ToolCall, p *path, a patchArgs) loop.ToolResult {
	fail := func(msg string) loop.ToolResult { return errorResult(fmt.Sprintf("cannot patch %s: %s", p.show, msg)) }
	if len(a.Edits) == 0 {
		return fail(`tool_args.edits is empty: give a list of {"from", "to", "content"} line edits`)
	}
	known := stamps(call.Agent)
	seen, ok := known[p.real]
	if !ok {
		if te.files != nil {
			if _, err := te.files.ReadTextFile(ctx, p.real); err != nil {
				return fail(filesMessage("read", err) + "; to create a file, use text_editor:write")
			}
		} else if root, err := p.diskRoot(); err != nil {
			return fail(rootfs.Reason(err) + "; create it with text_editor:write")
		} else if fi, err := root.Stat(p.rel); rootfs.IsEscape(err) {
			return errorResult(p.refuse(escapeWhy))
		} else if err != nil {
			return fail(rootfs.Reason(err) + "; create it with text_editor:write")
		} else if kind := notRegular(fi.Mode()); kind != "" && !fi.IsDir() {
			return fail(notRegularMessage("it", kind))
		}
		return fail("read it first with text_editor:read: the line numbers of a patch must come from a read")
	}
	tf, msg := te.load(ctx, p)
	if msg != "" {
		if p.refused(msg) {
			return errorResult(msg)
		}
		return fail(msg)
	}
	switch {
	case seen.Shifted:
		return fail("your previous patch changed its line count, so the numbers you have are out of date; read it again with text_editor:read")
	case !seen.same(tf.stamp):
		return fail("the file changed since you last read it; read it again with text_editor:read to get the current line numbers")
	}
	edits, msg := validateEdits(a.Edits, len(tf.lines), tf.crlf)
	if msg != "" {
		return fail(msg)
	}

	lines, text := patched(tf, edits)
	var st FileStamp
	if te.files != nil {
		if err := te.files.WriteTextFile(ctx, p.real, text); err != nil {
			return fail(filesMessage("write", err))
		}
		st = FileStamp{Size: int64(len(text)), Sum: sha256.Sum256([]byte(text))}
	} else {
		root, err := p.diskRoot()
		if err == nil {
			st, err = replaceFile(root, p.rel, []byte(text), tf.mode)
		}
		if err != nil {
			return errorResult(p.diskMessage(fmt.Sprintf("cannot patch %s: ", p.show), err))
		}
	}
	inPlace := !slices.ContainsFunc(edits, func(e lineEdit) bool { return e.removed() != len(e.lines) })
	st.Shifted = !inPlace
	known[p.real] = st

	var b strings.Builder
	fmt.Fprintf(&b, "%s patched: %d edits applied, %d lines now\n", p.show, len(edits), len(lines))
	b.WriteString(patchRegions(lines, edits))
	if !inPlace {
		b.WriteString("[the line count changed: read the file again before the next patch]\n")
	}
	return loop.ToolResult{Text: strings.TrimSuffix(b.String(), "\n"), Diffs: diff(p.real, &tf.text, text)}
}

// validateEdits checks the model's edits against a file of total lines and
// returns them sorted by line, inserts before a replacement at the same
// line, the model's order kept among equals.
//
// Semantics, as Agent Zero's: from and to are 1-based and inclusive.
// {from, to >= from, content} replaces lines from..to with content; without
// content (or with "") it deletes them. {from} alone, or with to < from,
// inserts content before line from; from = total+1 appends. content is
// whole lines: a missing final newline is implied.
func validateEdits(in []edit, total int, crlf bool) ([]lineEdit, string) {
	edits := make([]lineEdit, 0, len(in))
	for i, raw := range in {
		n := i + 1
		if raw.From == nil {
			return nil, fmt.Sprintf("edit %d has no \"from\" line number", n)
		}
		e := lineEdit{from: *raw.From, to: *raw.From - 1, index: n}
		if raw.To != nil && *raw.To >= e.from {
			e.to = *raw.To
		}
		if e.from < 1 {
			return nil, fmt.Sprintf("edit %d: from is %d, line numbers start at 1", n, e.from)
		}
		content := ""
		if raw.Content != nil {
			content = *raw.Content
		}
		if content != "" {
			e.lines = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
			if crlf {
				for j, l := range e.lines {
					e.lines[j] = strings.TrimSuffix(l, "\r") + "\r"
				}
			}
		}
		switch {
		case e.insert() && e.from > total+1:
			return nil, fmt.Sprintf("edit %d inserts before line %d, but the file has %d lines (use from %d to append)", n, e.from, total, total+1)
		case e.insert() && len(e.lines) == 0:
			return nil, fmt.Sprintf("edit %d inserts nothing: give content, or give \"to\" (>= from) to replace or delete lines", n)
		case !e.insert() && e.to > total:
			return nil, fmt.Sprintf("edit %d covers lines %d-%d, but the file has %d lines", n, e.from, e.to, total)
		}
		edits = append(edits, e)
	}
	slices.SortStableFunc(edits, func(a, b lineEdit) int {
		if a.from != b.from {
			return a.from - b.from
		}
		if a.insert() != b.insert() {
			if a.insert() {
				return -1
			}
			return 1
		}
		return 0
	})
	end := 0 // last line replaced so far
	var prev lineEdit
	for _, e := range edits {
		if e.from <= end {
			return nil, fmt.Sprintf("edits %d (lines %d-%d) and %d (%s) overlap: give each line to one edit, numbered as in your read",
				prev.index, prev.from, prev.to, e.index, describeEdit(e))
		}
		if !e.insert() {
			end, prev = e.to, e
		}
	}
	return edits, ""
}

func describeEdit(e lineEdit) string {
	if e.insert() {
		return fmt.Sprintf("insert before line %d", e.from)
	}
	return fmt.Sprintf("lines %d-%d", e.from, e.to)
}

// patchRegions lists the patched file around each edit, with the new line
// numbers, merging regions that touch.
func patchRegions(lines []string, edits []lineEdit) string {
	type span struct{ from, to int }
	var spans []span
	delta := 0
	for _, e := range edits {
		start := e.from + delta
		end := start + len(e.lines) - 1 // a deletion: the join, start-1 and start
		s := span{max(1, start-patchContext), min(len(lines), end+patchContext)}
		if k := len(spans) - 1; k >= 0 && s.from <= spans[k].to+1 {
			spans[k].to = max(spans[k].to, s.to)
		} else if s.from <= s.to {
			spans = append(spans, s)
		}
		delta += len(e.lines) - e.removed()
	}
	if len(spans) == 0 {
		return ""
	}
	var b strings.Builder
	budget := readBytes
	width := numberWidth(spans[len(spans)-1].to)
	var cut []int
	for i, s := range spans {
		if i > 0 {
			b.WriteString("  ...\n")
		}
		last, c := numbered(&b, lines, s.from, s.to, width, &budget)
		cut = append(cut, c...)
		if last < s.to {
			fmt.Fprintf(&b, "[listing stops at line %d (size limit)]\n", last)
			break
		}
	}
	b.WriteString(cutNote(cut))
	return b.String()
}
