package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// The completion sentinel is an OSC escape sequence, ESC ] 6973 ; nonce ;
// status BEL, printed by the shell after every command. Being an escape
// sequence, it is invisible on a real terminal and any copy the reader fails
// to recognise (a stale one) is still removed by the cleaner. The same
// sequence with "s" for the status marks the moment bash has read the whole
// command line and begins to run it.
const (
	sentinelPrefix  = "\x1b]6973;"
	sentinelEnd     = '\a'
	startedMark     = "s"
	maxSentinelBody = 40 // nonce (16) + ';' + status (≤3), with room to spare
	nonceLen        = 16
)

var sentinelPrefixBytes = []byte(sentinelPrefix)

func newNonce() string {
	var b [nonceLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// initScript prepares a freshly started bash for the protocol and ends by
// printing the sentinel for nonce. It is typed into the terminal, so every
// line is short and plain ASCII, and it must work even while the terminal
// still echoes (a docker exec TTY does until stty runs).
//
//   - stty -echo: commands and Input are not echoed back into the output.
//     The line discipline stays canonical, so bash reads exactly one line per
//     read(2) and never swallows text meant for the program it runs.
//   - No history, no history expansion, no prompts, no mail checks.
//   - __zero_mark prints a sentinel; it writes to /dev/tty so that
//     `exec >file` in a command cannot hide it.
//   - __zero_done prints the sentinel once per command. It runs at the end of
//     the command line, and again from PROMPT_COMMAND, which bash runs before
//     reading the next line even when ^C/SIGINT aborted the rest of the
//     line; __zero_n is cleared after printing so the second call is silent.
//   - __zero_ret gives each command the previous command's $?, so
//     `false` then `echo $?` prints 1 as in a terminal.
//   - The helpers run inside `{ ...; } 2>/dev/null`, so after `set -x` the
//     trace shows the command (and the `eval` that runs it), not them.
func initScript(nonce string) string {
	return strings.Join([]string{
		"stty -echo 2>/dev/null",
		"set +o history +H; set -m; unset HISTFILE MAILCHECK PROMPT_COMMAND PS0; PS1=; PS2=",
		`__zero_mark() { { printf '\033]6973;%s;%s\007' "$__zero_n" "$1" >/dev/tty; } 2>/dev/null ||` +
			` printf '\033]6973;%s;%s\007' "$__zero_n" "$1"; }`,
		`__zero_done() { local __zero_e=$?; if [ -n "${__zero_n-}" ]; then __zero_s=$__zero_e;` +
			` __zero_mark "$__zero_e"; __zero_n=; unset __zero_c; fi; return "$__zero_e"; }`,
		`__zero_ret() { return "${1:-0}"; }`,
		"PROMPT_COMMAND='{ __zero_done; } 2>/dev/null'",
		"__zero_n=" + nonce + "; { __zero_done; } 2>/dev/null",
		"",
	}, "\n")
}

// maxQuotedLine bounds each physical line of a command line. The terminal
// is in canonical mode, where Linux silently truncates lines longer than
// 4095 bytes; long commands are therefore split into several $'...' words
// joined by backslash-newline, which bash removes before parsing.
const maxQuotedLine = 1000

// commandLine wraps command so that bash runs it in the current shell and
// then prints the sentinel for nonce. The command travels as one ANSI-C
// quoted string: any byte is representable, control characters never reach
// the line discipline (a literal ^C or ^U in a command would otherwise act
// on the terminal), and multi-line code with here-documents is eval'd as a
// unit while the command's stdin stays the terminal. The started mark is
// printed once __zero_n is set: from then on, a SIGINT that aborts the line
// still produces the completion sentinel (from PROMPT_COMMAND).
func commandLine(nonce, command string) string {
	if command != "" && !strings.HasSuffix(command, "\n") {
		// A here-document whose delimiter is the last line needs its newline.
		command += "\n"
	}
	var b strings.Builder
	b.Grow(len(command) + len(command)/8 + 160)
	b.WriteString("{ __zero_n=")
	b.WriteString(nonce)
	b.WriteString("; __zero_mark " + startedMark + "; __zero_c=")
	writeQuoted(&b, command)
	b.WriteString(`; __zero_ret "${__zero_s-0}"; } 2>/dev/null; eval "$__zero_c"; { __zero_done; } 2>/dev/null`)
	b.WriteByte('\n')
	return b.String()
}

func writeQuoted(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteString("$'")
	n := 0
	for i := 0; i < len(s); i++ {
		if n >= maxQuotedLine {
			b.WriteString("'\\\n$'")
			n = 0
		}
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
			n += 2
		case c == '\n':
			b.WriteString(`\n`)
			n += 2
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
			n += 4
		default:
			b.WriteByte(c)
			n++
		}
	}
	b.WriteByte('\'')
}

// parseSentinel parses the body between sentinelPrefix and sentinelEnd:
// either a completion with its status, or the started mark (started true).
func parseSentinel(body []byte) (nonce string, status int, started, ok bool) {
	i := bytes.IndexByte(body, ';')
	if i != nonceLen {
		return "", 0, false, false
	}
	nonce, rest := string(body[:i]), string(body[i+1:])
	if rest == startedMark {
		return nonce, 0, true, true
	}
	status, err := strconv.Atoi(rest)
	if err != nil || status < 0 {
		return "", 0, false, false
	}
	return nonce, status, false, true
}

// partialPrefixLen returns the length of the longest suffix of p that is a
// proper prefix of the sentinel, i.e. bytes that must be held back because
// the next read may complete a sentinel.
func partialPrefixLen(p []byte) int {
	n := min(len(p), len(sentinelPrefix)-1)
	for ; n > 0; n-- {
		if bytes.HasPrefix(sentinelPrefixBytes, p[len(p)-n:]) {
			return n
		}
	}
	return 0
}
