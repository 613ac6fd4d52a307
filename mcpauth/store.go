package mcpauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/zeroagent/zero/mcpconf"
)

// record is what Zero keeps of one server's login, in a file of its own.
// It never leaves the file and the requests it is for: Status says what
// it holds without its secrets.
type record struct {
	// Server and URL are the server's name (as keyName has it) and URL:
	// the file is theirs only, whatever its name says.
	Server string `json:"server"`
	URL    string `json:"url"`
	// Grant is the grant the token came from: authorization_code or
	// client_credentials.
	Grant string `json:"grant,omitempty"`
	// Resource is the resource the token is for (RFC 8707), as the
	// server's protected resource metadata names it; every token request
	// names it again.
	Resource string `json:"resource,omitempty"`
	// Issuer is the authorization server that issued the token; a client
	// registered there, or configured, is sent to no other.
	Issuer        string  `json:"issuer,omitempty"`
	TokenEndpoint string  `json:"token_endpoint,omitempty"`
	Client        *client `json:"client,omitempty"`
	// Scopes are those granted; Wanted those a server asked for since
	// (a 403 insufficient_scope) that the next login asks for too.
	Scopes []string `json:"scopes,omitempty"`
	Wanted []string `json:"wanted,omitempty"`
	// NeedsLogin is set when the server refused Zero for want of a login
	// that only the person can give; a login clears it.
	NeedsLogin   bool      `json:"needs_login,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// client is the OAuth client Zero was known by.
type client struct {
	ID string `json:"id"`
	// Secret is a registered client's secret; a configured one stays in
	// the configuration and is read from there.
	Secret string `json:"secret,omitempty"`
	// AuthMethod is how the client authenticates at the token endpoint:
	// client_secret_basic, client_secret_post, private_key_jwt or none.
	AuthMethod string `json:"auth_method,omitempty"`
	SigningAlg string `json:"signing_alg,omitempty"`
	// Registered says Zero registered the client itself (dynamic client
	// registration) at RegistrationEndpoint, for RedirectURI: the next
	// login reuses it when it can listen there again.
	Registered           bool      `json:"registered,omitempty"`
	RegistrationEndpoint string    `json:"registration_endpoint,omitempty"`
	RedirectURI          string    `json:"redirect_uri,omitempty"`
	SecretExpires        time.Time `json:"secret_expires,omitzero"`
}

func (r *record) clone() *record {
	c := *r
	c.Scopes, c.Wanted = slices.Clone(r.Scopes), slices.Clone(r.Wanted)
	if r.Client != nil {
		cl := *r.Client
		c.Client = &cl
	}
	return &c
}

// keyName is a server's name as the session's pool gives it
// (mcpconf.Normalize), so that a caller holding the configured name and
// the pool's transport find the same file.
func keyName(name string) string { return mcpconf.Normalize(name) }

// fileName is the file of a server's login: a hash of its name and URL,
// so that a workspace's .mcp.json that names a server like one of the
// user's, at another URL, finds no token.
func fileName(srv mcpconf.Server) string {
	h := sha256.Sum256([]byte(keyName(srv.Name) + "\n" + srv.URL))
	return hex.EncodeToString(h[:16]) + ".json"
}

// maxRecord bounds what is read of a token file: a few KiB are written.
const maxRecord = 1 << 20

// read reads a server's record from disk: nil when there is none, or the
// file is another server's.
func (a *Auth) read(srv mcpconf.Server) (*record, os.FileInfo, error) {
	if a.o.Dir == "" {
		return nil, nil, nil
	}
	f, err := os.Open(filepath.Join(a.o.Dir, fileName(srv)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxRecord {
		return nil, nil, fmt.Errorf("%s is over %d bytes; remove it (zero mcp logout %s)", f.Name(), maxRecord, srv.Name)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%s is damaged (%v); remove it (zero mcp logout %s)", f.Name(), err, srv.Name)
	}
	if r.Server != keyName(srv.Name) || r.URL != srv.URL {
		return nil, fi, nil
	}
	return &r, fi, nil
}

// write replaces a server's record atomically: a file of its own mode 0600
// in a folder of mode 0700, renamed over the old one, so that a reader
// (another Zero) sees the old or the new record, never half of one.
func (a *Auth) write(r *record) (os.FileInfo, error) {
	if a.o.Dir == "" {
		return nil, errors.New("mcpauth: no folder to keep tokens in (Options.Dir)")
	}
	if err := privateDir(a.o.Dir); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(a.o.Dir, ".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	path := filepath.Join(a.o.Dir, fileName(mcpconf.Server{Name: r.Server, URL: r.URL}))
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return os.Stat(path)
}

// privateDir makes dir, or takes its mode back to 0700: tokens are the
// user's alone.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}
