//go:build !windows

package sandbox

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// mountKind is what bwrap puts at a path on top of the read-only root.
type mountKind uint8

const (
	bindRoot   mountKind = iota // a workspace root, writable at its own path
	privateTmp                  // the sandbox's own empty /tmp
	hideDir                     // an empty read-only tmpfs over a directory
	hideFile                    // /dev/null over a file or a socket: reads empty, swallows writes
	exposeRO                    // a host file bound back, read-only, inside a hidden directory
)

type mount struct {
	path string
	kind mountKind
}

// mountPlan decides the mounts over the read-only root, in the order bwrap
// makes them. Paths are compared with symbolic links resolved (/var/run is
// usually a link to /run; two names for one place would be mounted twice,
// or make bwrap fail on a dangling link), and missing hidden paths are
// skipped. The most specific path wins, because the mounts are made
// shallowest first and each covers what is below it:
//
//   - a hidden path inside a writable root (~/.ssh when the workspace is
//     home) is hidden;
//   - a root inside a hidden directory (a workspace under /run/media) is
//     bound again on top of the empty tmpfs, so it stays usable; at the
//     same path, the root wins;
//   - a hidden path already inside a hidden directory or /tmp is dropped:
//     it is invisible anyway.
//
// With the network on, a resolver configuration that lives in a hidden
// directory (/etc/resolv.conf is often a link into /run) is bound back
// read-only so that names still resolve.
func (l *Local) mountPlan() []mount {
	rules := map[string]mountKind{"/tmp": privateTmp}
	for _, h := range l.opts.Hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // missing, or not ours to see
		}
		fi, err := os.Stat(real)
		if err != nil || real == "/" {
			continue
		}
		kind := hideFile
		if fi.IsDir() {
			kind = hideDir
		}
		rules[real] = kind
	}
	for _, root := range slices.Concat([]string{l.opts.Dir}, l.opts.Roots) {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			real = root // bwrap will say what is wrong with it
		}
		rules[real] = bindRoot
	}
	if l.opts.Network && l.resolvConf != "" {
		if real, err := filepath.EvalSymlinks(l.resolvConf); err == nil {
			if _, ok := rules[real]; !ok && hiddenBelow(rules, real) {
				rules[real] = exposeRO
			}
		}
	}
	plan := make([]mount, 0, len(rules))
	for p, kind := range rules {
		if (kind == hideDir || kind == hideFile) && hiddenBelow(rules, p) {
			continue
		}
		plan = append(plan, mount{p, kind})
	}
	slices.SortFunc(plan, func(a, b mount) int {
		return cmp.Or(cmp.Compare(depth(a.path), depth(b.path)), strings.Compare(a.path, b.path))
	})
	return plan
}

// hiddenBelow reports whether p is invisible because its nearest ancestor
// with a rule is a hidden directory or the private /tmp.
func hiddenBelow(rules map[string]mountKind, p string) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if kind, ok := rules[d]; ok {
			return kind == hideDir || kind == privateTmp
		}
		if d == "/" || d == "." {
			return false
		}
	}
}

func depth(p string) int { return strings.Count(p, "/") }

// writableRoot reports whether the plan makes / itself a workspace root.
func writableRoot(plan []mount) bool {
	return slices.Contains(plan, mount{"/", bindRoot})
}

// bwrapArgs confine a command: the whole file system read-only, a private
// /tmp, the workspace roots writable at their own paths, the hidden paths
// covered, a PID namespace of its own and, unless Network, a network
// namespace of its own.
//
// bash runs as PID 1 of its namespace (--as-pid-1) rather than under
// bwrap's reaper, so that the child-pid bwrap reports is bash's own (as
// the host numbers it): Interrupt and the idle check compare it with the
// terminal's foreground group. bash reaps the orphans an init inherits,
// and a namespace's init only gets the signals it handles (SIGINT does;
// SIGKILL from the host always does), which is what the protocol sends.
//
// With / itself a root (the user named the whole file system as the
// workspace), / is bound writable in place of the read-only root, first:
// bwrap mounts in order, and a --bind / / after --dev and --proc would
// cover the sandbox's /dev and /proc with the host's (bash then cannot
// open /dev/null, and the host's processes show in /proc). /sys stays
// read-only: it holds the kernel's settings, not files of the workspace.
func (l *Local) bwrapArgs() []string {
	plan := l.mountPlan()
	root := []string{"--ro-bind", "/", "/"}
	if writableRoot(plan) {
		root = []string{"--bind", "/", "/"}
	}
	args := append(root, "--dev", "/dev", "--proc", "/proc")
	if root[0] == "--bind" {
		if fi, err := os.Stat("/sys"); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", "/sys", "/sys")
		}
	}
	args = append(args, "--unshare-pid", "--as-pid-1")
	if !l.opts.Network {
		args = append(args, "--unshare-net")
	}
	var readOnly []string
	for _, m := range plan {
		switch m.kind {
		case bindRoot:
			if m.path == "/" {
				continue // bound first, above
			}
			args = append(args, "--bind", m.path, m.path)
		case privateTmp:
			args = append(args, "--tmpfs", m.path)
		case hideDir:
			args = append(args, "--tmpfs", m.path)
			readOnly = append(readOnly, m.path)
		case hideFile:
			// A device needs --dev-bind: bwrap mounts --ro-bind with
			// nodev, and an unreadable ~/.npmrc would make npm fail where
			// an empty one only loses its settings.
			args = append(args, "--dev-bind", "/dev/null", m.path)
		case exposeRO:
			args = append(args, "--ro-bind", m.path, m.path)
		}
	}
	// Read-only only now: the roots and files bound inside a hidden
	// directory needed their mount points made in its tmpfs first. The
	// remount is not recursive, so those roots stay writable.
	for _, p := range readOnly {
		args = append(args, "--remount-ro", p)
	}
	return append(args, "--chdir", l.opts.Dir, "--die-with-parent")
}
