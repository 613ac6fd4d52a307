package sandbox

import (
	"log/slog"
	"time"
)

// LocalOptions configures [NewLocal]. Only Dir is required.
type LocalOptions struct {
	// Dir is the working directory of new shells; it must exist.
	Dir string
	// Shell is the bash binary, default "/bin/bash". It must be bash: the
	// protocol relies on PROMPT_COMMAND, $'...' quoting and job control.
	Shell string
	// BaseEnv is the environment shells inherit; nil means os.Environ().
	// The caller passes a scrubbed copy to keep its secrets (the model's
	// API key) out of the agent's reach.
	BaseEnv []string
	// Env is extra environment, appended after BaseEnv and the shell
	// defaults (see [NewLocal]), so it can override both.
	Env []string
	// MaxOutput caps Result.Output and the output buffered between Waits;
	// default [DefaultMaxOutput].
	MaxOutput int
	// InterruptGrace is how long Interrupt waits after SIGINT before
	// SIGKILL; default [DefaultInterruptGrace].
	InterruptGrace time.Duration
	// Isolation confines the shells: IsolationNone (the zero value) runs
	// them as they are; IsolationBubblewrap runs them under bwrap with the
	// workspace (and Roots) writable, the rest of the file system
	// read-only, a private /tmp, a PID namespace of their own (host
	// processes are invisible and cannot be signalled), no network unless
	// Network is set, and the Hide paths hidden; it fails when bwrap
	// cannot. IsolationAuto uses bubblewrap when it works here, else none.
	Isolation string
	// Roots are more folders the shells may write (editors send several
	// workspace roots); Dir is always one.
	Roots []string
	// Network gives bubblewrapped shells the host's network. The zero
	// value, false, gives them a network namespace of their own with only
	// a loopback interface: no connection leaves it, none reaches a
	// service listening on the host (127.0.0.1 included), and the host's
	// abstract unix sockets (D-Bus, X11) are out of reach. Shells without
	// isolation always have the host's network.
	Network bool
	// Hide lists absolute paths that bubblewrapped shells must not see,
	// even inside a writable root: a directory is covered with an empty
	// read-only tmpfs, anything else (a file, a socket) with /dev/null,
	// which reads empty and swallows writes. Paths that do not exist when
	// a shell starts are skipped, and symbolic links are resolved. A root
	// that lies inside a hidden directory stays visible and writable: the
	// most specific path wins. nil means the defaults for the current
	// user, [DefaultHidden] of $HOME, $XDG_RUNTIME_DIR and Zero's config
	// dir ($XDG_CONFIG_HOME/zero, else ~/.config/zero); an empty non-nil
	// slice hides nothing.
	Hide []string
	// Logger receives debug logs (never command text or output); nil is
	// silent.
	Logger *slog.Logger
}

// Isolation modes of the local backend.
const (
	IsolationNone       = "none"
	IsolationBubblewrap = "bubblewrap"
	IsolationAuto       = "auto"
)

// shellEnv is added to every local shell's environment. TERM=dumb keeps
// programs from printing colours and cursor motion and from starting
// full-screen interfaces; the pagers are disabled because nobody can press
// q; HISTFILE=/dev/null keeps bash from loading the user's history at
// start-up (the init script then turns history off).
var shellEnv = []string{
	"TERM=dumb",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"SYSTEMD_PAGER=cat",
	"HISTFILE=/dev/null",
	"PROMPT_COMMAND=",
}

// The terminal size programs see; wide enough that tools which wrap or
// truncate to the terminal width rarely do.
const (
	termRows = 50
	termCols = 160
)
