package sandbox

import (
	"os"
	"path/filepath"
)

// DefaultHidden lists the paths the local backend hides from bubblewrapped
// shells by default: where services put their sockets (/run, /var/run, and
// the Docker, containerd, Podman and CRI-O sockets by name, for a caller
// that drops /run from the list), the user's runtime dir (the D-Bus,
// keyring, ssh-agent and rootless Docker sockets), the usual credential
// stores in home, browser profiles (their cookies are credentials), and
// Zero's own config dir (API keys, trust records). An empty or relative
// argument is left out. Paths that do not exist are listed anyway: the
// backend skips them when a shell starts, so one created later is hidden
// from the next shell.
func DefaultHidden(home, runtimeDir, configDir string) []string {
	paths := []string{
		"/run", "/var/run",
		"/run/docker.sock", "/var/run/docker.sock", "/run/docker", "/var/run/docker",
		"/run/containerd", "/var/run/containerd",
		"/run/podman", "/var/run/podman", "/run/crio", "/var/run/crio",
	}
	if filepath.IsAbs(runtimeDir) {
		paths = append(paths, filepath.Clean(runtimeDir))
	}
	if filepath.IsAbs(home) {
		for _, p := range homeSecrets {
			paths = append(paths, filepath.Join(home, p))
		}
	}
	if filepath.IsAbs(configDir) {
		paths = append(paths, filepath.Clean(configDir))
	}
	return paths
}

// homeSecrets are credential stores, relative to home.
var homeSecrets = []string{
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings",
	".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci",
	".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
	".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".vault-token", ".terraform.d/credentials.tfrc.json", ".pgpass", ".my.cnf",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
}

// userHidden is [DefaultHidden] for the user running Zero, with Zero's
// config dir where cmd/zero looks for it.
func userHidden() []string {
	home, _ := os.UserHomeDir()
	config := os.Getenv("XDG_CONFIG_HOME")
	if filepath.IsAbs(config) {
		config = filepath.Join(config, "zero")
	} else if home != "" {
		config = filepath.Join(home, ".config", "zero")
	}
	return DefaultHidden(home, os.Getenv("XDG_RUNTIME_DIR"), config)
}
