package mcp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroagent/zero/server"
)

// offeredProfiles lists the catalog's profiles that fit the sandbox backend
// in force, the default first; nil when there is no catalog. The default
// stays whatever it is: it is what a session without a profile gets.
func (f *face) offeredProfiles() []server.Choice {
	if f.opts.Catalog == nil {
		return nil
	}
	var out []server.Choice
	for i, c := range f.opts.Catalog.Profiles() {
		if i == 0 || f.fits(c) {
			out = append(out, c)
		}
	}
	return out
}

// fits reports whether profile c suits the sandbox backend: it is written
// for any backend, for this one, or the backend is decided when the
// sandbox opens (auto), so it may be the one.
func (f *face) fits(c server.Choice) bool {
	switch f.opts.Backend {
	case "", "auto":
		return true
	}
	return c.Backend == "" || c.Backend == f.opts.Backend
}

// checkProfile refuses a profile the tools do not offer: an unknown one,
// or one that does not fit the backend. Without a catalog (or with an
// empty one) the manager judges the name.
func (f *face) checkProfile(id string) error {
	offered := f.offeredProfiles()
	if len(offered) == 0 || slices.ContainsFunc(offered, func(c server.Choice) bool { return c.ID == id }) {
		return nil
	}
	ids := strings.Join(profileIDs(offered), ", ")
	if i := slices.IndexFunc(f.opts.Catalog.Profiles(), func(c server.Choice) bool { return c.ID == id }); i >= 0 {
		return badArg("profile", "%s is written for the %s sandbox, and this zero runs commands %s (one of %s)",
			id, f.opts.Catalog.Profiles()[i].Backend, cmp.Or(f.opts.Sandbox, "with the "+f.opts.Backend+" backend"), ids)
	}
	return badArg("profile", "unknown profile %q (one of %s)", id, ids)
}

func profileIDs(cs []server.Choice) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// profileDescription is the profile argument's description: base, then
// the default profile and the others offered, each with what it is for.
// A profile named "default" that is not the default says so, or a model
// would take its name for its role.
func profileDescription(base string, offered []server.Choice) string {
	def := offered[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s Default: %s%s, used when profile is omitted.", base, def.ID, clause(def.Description))
	for i, c := range offered[1:] {
		desc := c.Description
		if c.ID == "default" {
			if desc = strings.TrimSuffix(strings.TrimSpace(desc), "."); desc != "" {
				desc += "; "
			}
			desc += "despite its name, not the default"
		}
		sep := ";"
		if i == 0 {
			sep = " Others:"
		}
		fmt.Fprintf(&b, "%s %s%s", sep, c.ID, clause(desc))
	}
	if len(offered) > 1 {
		b.WriteByte('.')
	}
	return b.String()
}

// clause is " (description)" for a profile, without its final period, or
// "".
func clause(desc string) string {
	desc = strings.TrimSuffix(strings.TrimSpace(desc), ".")
	if desc == "" {
		return ""
	}
	return " (" + desc + ")"
}
