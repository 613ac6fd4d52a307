package hooks

import (
	"os"
	"path/filepath"
	"strings"
)

// Layer is one extensions directory. Scripts for a point live in Dir/<point>/.
type Layer struct {
	Name string // "project+profile", "project", "user-profile", "plugin:<name>", "user": for messages
	Dir  string // an "extensions" directory
}

// Layer names used by [Layers], plus the one [Set.Extensions] reports for Go extensions.
const (
	LayerProjectProfile = "project+profile"
	LayerProject        = "project"
	LayerUserProfile    = "user-profile"
	LayerPluginPrefix   = "plugin:"
	LayerUser           = "user"
	LayerBuiltin        = "built-in"
)

// Layers returns the script layers, highest priority first:
//
//	<workspace>/.zero/agents/<profile>/extensions   project+profile
//	<workspace>/.zero/extensions                    project
//	<userDir>/agents/<profile>/extensions           user-profile
//	<userDir>/plugins/<plugin>/extensions           plugin:<plugin>, one per plugin, sorted by name
//	<userDir>/extensions                            user
//
// userDir is e.g. ~/.config/zero; "" skips the user layers, and workspace "" skips the project layers.
// profile "" skips the profile layers, and so does a profile that is not a single plain path element
// (so "../x" cannot point a layer outside its parent). A plugin is a non-hidden directory (or a symlink
// to one) under <userDir>/plugins; renaming it to ".name" switches it off. Missing directories are fine:
// the only file-system access is listing the plugins.
func Layers(workspace, profile, userDir string) []Layer {
	withProfile := profile != "" && profile != "." && profile != ".." && !strings.ContainsAny(profile, `/\`)
	var ls []Layer
	if workspace != "" {
		zero := filepath.Join(workspace, ".zero")
		if withProfile {
			ls = append(ls, Layer{Name: LayerProjectProfile, Dir: filepath.Join(zero, "agents", profile, "extensions")})
		}
		ls = append(ls, Layer{Name: LayerProject, Dir: filepath.Join(zero, "extensions")})
	}
	if userDir != "" {
		if withProfile {
			ls = append(ls, Layer{Name: LayerUserProfile, Dir: filepath.Join(userDir, "agents", profile, "extensions")})
		}
		ls = append(ls, pluginLayers(filepath.Join(userDir, "plugins"))...)
		ls = append(ls, Layer{Name: LayerUser, Dir: filepath.Join(userDir, "extensions")})
	}
	return ls
}

func pluginLayers(dir string) []Layer {
	entries, err := os.ReadDir(dir) // sorted by file name
	if err != nil {
		return nil // no plugins folder, or unreadable: no plugin layers
	}
	var ls []Layer
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			continue
		}
		ls = append(ls, Layer{Name: LayerPluginPrefix + name, Dir: filepath.Join(path, "extensions")})
	}
	return ls
}
