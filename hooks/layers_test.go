package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLayers(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	for _, d := range []string{"plugins/beta/extensions", "plugins/alpha", "plugins/.off/extensions"} {
		if err := os.MkdirAll(filepath.Join(user, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(user, "plugins", "notes.txt"), "not a plugin", 0o644)
	noPlugins := t.TempDir()

	ws := filepath.Join(string(filepath.Separator), "ws")
	tests := []struct {
		name                     string
		workspace, profile, user string
		want                     []Layer
	}{
		{
			name: "all layers", workspace: ws, profile: "dev", user: user,
			want: []Layer{
				{Name: "project+profile", Dir: filepath.Join(ws, ".zero", "agents", "dev", "extensions")},
				{Name: "project", Dir: filepath.Join(ws, ".zero", "extensions")},
				{Name: "user-profile", Dir: filepath.Join(user, "agents", "dev", "extensions")},
				{Name: "plugin:alpha", Dir: filepath.Join(user, "plugins", "alpha", "extensions")},
				{Name: "plugin:beta", Dir: filepath.Join(user, "plugins", "beta", "extensions")},
				{Name: "user", Dir: filepath.Join(user, "extensions")},
			},
		},
		{
			name: "no profile", workspace: ws, user: noPlugins,
			want: []Layer{
				{Name: "project", Dir: filepath.Join(ws, ".zero", "extensions")},
				{Name: "user", Dir: filepath.Join(noPlugins, "extensions")},
			},
		},
		{
			name: "profile escaping its folder is ignored", workspace: ws, profile: "../x", user: noPlugins,
			want: []Layer{
				{Name: "project", Dir: filepath.Join(ws, ".zero", "extensions")},
				{Name: "user", Dir: filepath.Join(noPlugins, "extensions")},
			},
		},
		{
			name: "no workspace", profile: "dev", user: noPlugins,
			want: []Layer{
				{Name: "user-profile", Dir: filepath.Join(noPlugins, "agents", "dev", "extensions")},
				{Name: "user", Dir: filepath.Join(noPlugins, "extensions")},
			},
		},
		{
			name: "no user dir", workspace: ws, profile: "dev",
			want: []Layer{
				{Name: "project+profile", Dir: filepath.Join(ws, ".zero", "agents", "dev", "extensions")},
				{Name: "project", Dir: filepath.Join(ws, ".zero", "extensions")},
			},
		},
		{name: "nothing", profile: "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Layers(tt.workspace, tt.profile, tt.user)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Layers(%q, %q, %q) (-want +got):\n%s", tt.workspace, tt.profile, tt.user, diff)
			}
		})
	}
}
