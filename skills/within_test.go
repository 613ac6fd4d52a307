package skills_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/skills"
)

// TestWithin: a workspace's .zero (or .zero/skills) that is a link out of
// the workspace is not followed when Within names the workspace.
func TestWithin(t *testing.T) {
	t.Parallel()
	for _, link := range []string{".zero", ".zero/skills"} {
		ws, outside := t.TempDir(), t.TempDir()
		target := outside
		if link == ".zero/skills" {
			target = filepath.Join(outside, "skills")
		}
		write(t, outside, map[string]string{"skills/leak/SKILL.md": skillMD("leak", "from outside the workspace", "HOSTSECRET")})
		symlink(t, target, filepath.Join(ws, link))
		cat, warns := skills.Discover(skills.Dir{Path: filepath.Join(ws, ".zero", "skills"), Layer: "workspace", Within: ws})
		if cat.Len() != 0 {
			t.Errorf("%s: a skill from outside the workspace was found: %v", link, names(cat.List()))
		}
		if len(warns) != 1 || !errors.Is(warns[0].Err, rootfs.ErrEscapes) {
			t.Errorf("%s: warnings %v, want one naming the link out", link, warns)
		}
		// Without Within (the user's own folders) the same layout is read.
		if cat, _ := skills.Discover(skills.Dir{Path: filepath.Join(ws, ".zero", "skills"), Layer: "user"}); cat.Len() != 1 {
			t.Errorf("%s: without Within the folder is not read", link)
		}
	}
}
