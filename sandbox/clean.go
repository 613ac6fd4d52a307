package sandbox

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// CleanOutput turns raw terminal output into plain text: ANSI/OSC and other
// escape sequences are removed, \r\n becomes \n, a lone \r starts the
// current line over (so a progress bar leaves only its last state), a
// backspace removes the character before it, and other control characters
// (NUL, BEL, DEL, …) are dropped. Tabs and invalid UTF-8 pass through.
func CleanOutput(s string) string {
	var c cleaner
	c.write([]byte(s))
	c.flushPartial()
	return string(c.out)
}

// Limits that keep the cleaner's memory bounded whatever a program prints.
const (
	maxEscapeLen  = 64      // a CSI or two-byte escape longer than this is garbage; drop it
	maxStringLen  = 4096    // an OSC/DCS/... body longer than this is abandoned
	maxLineBuffer = 1 << 16 // a longer unfinished line is emitted as it stands
	maxDialogLine = 500     // Agent Zero checks only the start and end of long lines
)

type escState uint8

const (
	stGround    escState = iota
	stEsc                // after ESC
	stEscInter           // ESC followed by intermediate bytes, e.g. ESC ( B
	stCSI                // ESC [ ...
	stString             // OSC, DCS, SOS, PM, APC body
	stStringEsc          // ESC inside a string body: maybe ST (ESC \)
)

// cleaner is the streaming form of [CleanOutput]. Its state survives chunk
// boundaries, so an escape sequence or \r\n split across two reads is handled
// like an unsplit one.
//
// Completed lines are emitted as soon as their \n arrives. The unfinished
// line stays in line until flushPartial emits it (when a Wait returns, or
// once maxLineBuffer bytes wait); text that later extends that line is
// emitted as a continuation, and if a \r rewrites an already emitted part,
// the new content is emitted on a fresh line because emitted text cannot be
// taken back.
//
// Memory stays bounded however long a line gets: once emitted, all of a
// long line but its first and last bytes (what dialog detection looks at)
// is forgotten (see trimLine).
type cleaner struct {
	st     escState
	escLen int
	cr     bool   // a \r was seen; it is a line end if \n follows, else a rewrite
	line   []byte // the current, unfinished line; its middle is gone when cut
	shown  int    // bytes of line already emitted
	cut    bool   // an emitted middle part of the line was forgotten
	head   []byte // when cut, the line's first bytes, for dialog detection
	redraw bool   // an emitted part of line was overwritten by \r
	out    []byte // emitted, not yet taken
	recent [2]string
}

func (c *cleaner) write(p []byte) {
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch c.st {
		case stGround:
			switch {
			case b == 0x1b:
				c.st, c.escLen = stEsc, 0
			case b == '\n':
				c.cr = false
				c.endOfLine()
			case b == '\r':
				c.cr = true
			case b == '\t' || (b >= 0x20 && b != 0x7f):
				if c.cr {
					c.carriageReturn()
				}
				j := i + 1
				for j < len(p) && p[j] >= 0x20 && p[j] != 0x7f {
					j++
				}
				c.line = append(c.line, p[i:j]...)
				i = j - 1
				if len(c.line)-c.shown > maxLineBuffer {
					c.flushPartial()
					c.trimLine()
				}
			case b == '\b':
				if c.cr {
					c.carriageReturn()
				}
				c.backspace()
			default:
				// NUL, BEL, DEL and the other C0 controls draw nothing.
			}
		case stEsc:
			switch {
			case b == '[':
				c.st = stCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.st = stString
			case b >= 0x20 && b <= 0x2f:
				c.st = stEscInter
			case b >= 0x30 && b <= 0x7e:
				c.st = stGround
			case b == 0x1b:
				// ESC ESC: the first one is abandoned.
			default:
				c.st = stGround
				i-- // a control character ends the escape and still acts
			}
		case stEscInter:
			c.escLen++
			switch {
			case b >= 0x20 && b <= 0x2f && c.escLen < maxEscapeLen:
			case b >= 0x30 && b <= 0x7e:
				c.st = stGround
			default:
				c.st = stGround
				i--
			}
		case stCSI:
			c.escLen++
			switch {
			case b >= 0x40 && b <= 0x7e:
				c.st = stGround
			case b >= 0x20 && b <= 0x3f && c.escLen < maxEscapeLen:
			default:
				c.st = stGround
				i--
			}
		case stString:
			c.escLen++
			switch {
			case b == 0x07:
				c.st = stGround
			case b == 0x1b:
				c.st = stStringEsc
			case c.escLen > maxStringLen:
				c.st = stGround
			}
		case stStringEsc:
			if b == '\\' {
				c.st = stGround
			} else {
				// Any other ESC aborts the string and starts a new escape.
				c.st, c.escLen = stEsc, 0
				i--
			}
		}
	}
}

// carriageReturn applies a lone \r: what follows replaces the line.
func (c *cleaner) carriageReturn() {
	c.cr = false
	if c.shown > 0 {
		c.redraw = true
	}
	c.resetLine()
}

func (c *cleaner) resetLine() {
	c.line = c.line[:0]
	c.shown = 0
	c.cut = false
}

// trimLine forgets the emitted part of a long unfinished line but for its
// first and last maxDialogLine/2 bytes, so that a program printing
// hundreds of megabytes without a newline costs no more memory than one
// printing lines.
func (c *cleaner) trimLine() {
	const keep = maxDialogLine / 2
	if c.shown < 2*keep {
		return
	}
	if !c.cut {
		c.head = append(c.head[:0], c.line[:keep]...)
		c.cut = true
	}
	drop := c.shown - keep
	c.line = c.line[:copy(c.line, c.line[drop:])]
	c.shown -= drop
}

func (c *cleaner) backspace() {
	if len(c.line) > c.shown {
		_, n := utf8.DecodeLastRune(c.line[c.shown:])
		c.line = c.line[:len(c.line)-n]
	}
}

// endOfLine emits the rest of the current line and its newline.
func (c *cleaner) endOfLine() {
	c.emitRest()
	c.out = append(c.out, '\n')
	c.recent[0], c.recent[1] = c.recent[1], c.lineView()
	c.resetLine()
}

// flushPartial emits the not yet emitted part of the unfinished line.
func (c *cleaner) flushPartial() {
	if len(c.line) > c.shown {
		c.emitRest()
		c.shown = len(c.line)
	}
}

func (c *cleaner) emitRest() {
	if c.redraw {
		c.redraw = false
		if len(c.line) > 0 {
			c.out = append(c.out, '\n')
		}
	}
	c.out = append(c.out, c.line[c.shown:]...)
}

// endCommand is called when a command completes: its unfinished last line
// belongs to it, and the next command's output starts on a fresh line
// (without a \n being added to this command's output).
func (c *cleaner) endCommand() {
	c.flushPartial()
	if c.shown > 0 {
		c.recent[0], c.recent[1] = c.recent[1], c.lineView()
	}
	c.resetLine()
	c.cr = false
	c.redraw = false
	c.st = stGround
}

// take returns the emitted text and forgets it.
func (c *cleaner) take() string {
	if len(c.out) == 0 {
		return ""
	}
	s := string(c.out)
	c.out = c.out[:0]
	return s
}

// forgetLines starts dialog detection afresh for a new command.
func (c *cleaner) forgetLines() { c.recent = [2]string{} }

// lastLines returns the last two lines of output as Agent Zero's
// splitlines()[-2:] would see them: the unfinished line counts when it has
// any characters.
func (c *cleaner) lastLines() [2]string {
	if len(c.line) > 0 {
		return [2]string{c.recent[1], c.lineView()}
	}
	return c.recent
}

// lineView is dialogView of the whole current line, also when its middle
// was forgotten.
func (c *cleaner) lineView() string {
	if !c.cut {
		return dialogView(c.line)
	}
	half := maxDialogLine / 2
	return string(c.head) + string(c.line[max(len(c.line)-half, 0):])
}

func dialogView(line []byte) string {
	if len(line) > maxDialogLine {
		half := maxDialogLine / 2
		return string(line[:half]) + string(line[len(line)-half:])
	}
	return string(line)
}

// dialogPattern is Agent Zero's dialog detection: a yes/no choice, or a line
// ending in ':' or '?'.
var dialogPattern = regexp.MustCompile(`(?i)y/n|yes/no|[:?]$`)

func looksLikeDialog(lines [2]string) bool {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && dialogPattern.MatchString(l) {
			return true
		}
	}
	return false
}
