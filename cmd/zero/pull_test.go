package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroagent/zero/app"
)

// An editor that gives up on a command while the sandbox image is being
// pulled for it (ACP's cancel, a closed connection) ends the pull: the
// command's context reaches it. Choosing the backend pulls nothing.
func TestImagePullFollowsTheRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir, err := os.MkdirTemp("", "zp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "d.sock"))
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`^/v[0-9.]+`)
	pullEnded := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := version.ReplaceAllString(r.URL.Path, "")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case path == "/_ping":
			w.Header().Set("Api-Version", "1.43")
			w.Write([]byte("OK"))
		case path == "/containers/json":
			w.Write([]byte("[]"))
		case strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/json"):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such container"}`))
		case strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/json"):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such image"}`))
		case path == "/images/create": // a pull that goes on until the client leaves
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"status":"Pulling from kalilinux/kali-rolling"}` + "\n"))
			w.(http.Flusher).Flush()
			cancel() // the editor gives up
			<-r.Context().Done()
			close(pullEnded)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(dir, "d.sock"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a, err := app.NewAppAt(t.TempDir(), nil, map[string]string{"sandbox.backend": "docker"}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.ChooseBackend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	select {
	case <-pullEnded:
		t.Fatal("choosing the backend pulled the image")
	default:
	}
	_, err = b.OpenShell(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "pull kalilinux/kali-rolling") {
		t.Fatalf("OpenShell with the command cancelled = %v, want the pull cancelled", err)
	}
	<-pullEnded // the engine saw the client leave
}
