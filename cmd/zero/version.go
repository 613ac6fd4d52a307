package main

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"strings"
)

// version is the release's version, set by scripts/release with
// -ldflags "-X main.version=v1.2.3"; a build without it (go build, go
// install) takes the module's version from its build info, else "dev".
var version = "dev"

// commit and date are the commit a release was built from and its time,
// set by scripts/release (-X main.commit=… -X main.date=…) for builds where
// Go stamps no VCS information (-buildvcs=false).
var commit, date string

// build is what `zero --version` prints besides the version: the commit
// and its time, from the build info Go stamps into a binary built in a git
// checkout.
type build struct {
	version, commit, date string
	modified              bool
}

func buildInfo() build {
	b := build{version: version, commit: commit, date: date}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.version = bi.Main.Version // go install github.com/zeroagent/zero/cmd/zero@v1.2.3
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = cmp.Or(b.commit, s.Value)
		case "vcs.time":
			b.date = cmp.Or(b.date, s.Value)
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// String is `zero --version`'s line: "zero v1.2.3 (commit 0123abc, 2026-12-01T17:00:00Z)".
func (b build) String() string {
	var extra []string
	if b.commit != "" {
		c := b.commit[:min(len(b.commit), 12)]
		if b.modified {
			c += "+changes"
		}
		extra = append(extra, "commit "+c)
	}
	if b.date != "" {
		extra = append(extra, b.date)
	}
	if len(extra) == 0 {
		return "zero " + b.version
	}
	return fmt.Sprintf("zero %s (%s)", b.version, strings.Join(extra, ", "))
}
