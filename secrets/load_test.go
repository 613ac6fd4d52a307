package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func values(s *Set) map[string]string {
	out := map[string]string{}
	for _, n := range s.Names() {
		out[n], _ = s.lookup(n)
	}
	return out
}

func TestLoadSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		want map[string]string
	}{
		{"plain", "A=alpha\nB=beta\n", map[string]string{"A": "alpha", "B": "beta"}},
		{"no trailing newline", "A=alpha", map[string]string{"A": "alpha"}},
		{"comments and blanks", "# a comment\n\n  # indented\nA=alpha # inline\nB=be#ta\n", map[string]string{"A": "alpha", "B": "be#ta"}},
		{"export prefix", "export A=alpha\nexport  B = beta\n", map[string]string{"A": "alpha", "B": "beta"}},
		{"spaces around", "  A  =   alpha   \n", map[string]string{"A": "alpha"}},
		{"single quotes are literal", `A='x\ny $B # not a comment'`, map[string]string{"A": `x\ny $B # not a comment`}},
		{"double quotes decode escapes", `A="x\ny \"q\" # kept"`, map[string]string{"A": "x\ny \"q\" # kept"}},
		{"double quotes span lines", "A=\"line1\nline2\"\nB=b1234\n", map[string]string{"A": "line1\nline2", "B": "b1234"}},
		{"dollar is never expanded", "B=bbbb\nA=x$B${B}$(B)\nC=\"p$B\\$w\"\nD='$B'\n",
			map[string]string{"A": "x$B${B}$(B)", "B": "bbbb", "C": "p$B$w", "D": "$B"}},
		{"names are upper-cased", "api_key=one\nApi_Key=two\n", map[string]string{"API_KEY": "two"}},
		{"later wins", "A=one\nA=two\n", map[string]string{"A": "two"}},
		{"empty value ignored", "A=one\nA=\nB=\nC=''\n", map[string]string{"A": "one"}},
		{"two entries on a line", `A="x" B=y`, map[string]string{"A": "x", "B": "y"}},
		{"yaml style", "A: alpha\n", map[string]string{"A": "alpha"}},
		{"crlf", "A=alpha\r\nB=\"b\r\nc\"\r\n", map[string]string{"A": "alpha", "B": "b\nc"}},
		{"bom", "\xef\xbb\xbfA=alpha\n", map[string]string{"A": "alpha"}},
		{"unicode value", "A=pässwörd✓\n", map[string]string{"A": "pässwörd✓"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, errs := Load(writeFile(t, "secrets.env", tt.file))
			if len(errs) > 0 {
				t.Fatalf("Load: %v", errs)
			}
			if diff := cmp.Diff(tt.want, values(s)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadBadLines(t *testing.T) {
	t.Parallel()
	file := strings.Join([]string{
		"A=alpha",                // 1
		"1BAD=sk-hidden-one",     // 2: name starts with a digit
		"MY-KEY=sk-hidden-two",   // 3: '-' in the name
		"sk-hidden-three",        // 4: a value pasted alone
		"C=gamma",                // 5
		"ÄPI=sk-hidden-five",     // 6: not ASCII
		"D=\"multi",              // 7
		"line\"",                 // 8
		"E=\"ok\" junk=x-hidden", // 9: "junk" is a valid second entry
		"F=\"x\" bad-name=y",     // 10
		"G=last",                 // 11
		"H=\"sk-hidden-four",     // 12: never closed
		"I=not-read",             // 13: read: only the line that opens the quote is skipped
	}, "\n")
	path := writeFile(t, "secrets.env", file)
	s, errs := Load(path)
	want := map[string]string{"A": "alpha", "C": "gamma", "D": "multi\nline", "E": "ok", "JUNK": "x-hidden", "F": "x", "G": "last", "I": "not-read"}
	if diff := cmp.Diff(want, values(s)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	var lines []string
	for _, err := range errs {
		msg := err.Error()
		if strings.Contains(msg, "hidden") || strings.Contains(msg, "sk-") {
			t.Errorf("error quotes the file: %s", msg)
		}
		if !strings.Contains(msg, path) {
			t.Errorf("error does not name the file: %s", msg)
		}
		_, rest, _ := strings.Cut(msg, path+":")
		line, _, _ := strings.Cut(rest, ":")
		lines = append(lines, line)
	}
	if diff := cmp.Diff([]string{"2", "3", "4", "6", "10", "12"}, lines); diff != "" {
		t.Errorf("lines of the errors (-want +got):\n%s\n%v", diff, errs)
	}
	if !errors.Is(errs[0], ErrSyntax) || !errors.Is(errs[5], ErrUnterminated) {
		t.Errorf("errors do not match their sentinels: %v", errs)
	}
}

func TestLoadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user := filepath.Join(dir, "user.env")
	ws := filepath.Join(dir, "ws.env")
	os.WriteFile(user, []byte("SHARED=user-value\nUSER_ONLY=user-only\n"), 0o600)
	os.WriteFile(ws, []byte("shared=workspace-value\nWS_ONLY=ws-only-value\n"), 0o600)

	s, errs := Load(filepath.Join(dir, "missing.env"), user, ws)
	if len(errs) > 0 {
		t.Fatalf("Load: %v", errs)
	}
	want := map[string]string{"SHARED": "workspace-value", "USER_ONLY": "user-only", "WS_ONLY": "ws-only-value"}
	if diff := cmp.Diff(want, values(s)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"SHARED", "USER_ONLY", "WS_ONLY"}, s.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	// The user's value, replaced by the workspace's, is still masked.
	if got := s.Mask("user-value workspace-value"); got != "§§secret(SHARED) §§secret(SHARED)" {
		t.Errorf("Mask = %q", got)
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.env")
	if err := os.WriteFile(huge, []byte("A="+strings.Repeat("x", MaxFileSize)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact.env")
	os.WriteFile(exact, []byte("B="+strings.Repeat("y", MaxFileSize-3)+"\n"), 0o600)
	binary := filepath.Join(dir, "binary.env")
	os.WriteFile(binary, []byte("C=x\x00y\n"), 0o600)
	good := filepath.Join(dir, "good.env")
	os.WriteFile(good, []byte("D=delta\n"), 0o600)
	unreadable := filepath.Join(dir, "unreadable.env")
	os.WriteFile(unreadable, []byte("E=epsilon\n"), 0o000)

	s, errs := Load(huge, exact, dir, binary, good, unreadable)
	wantErr := []struct {
		path string
		is   error
	}{{huge, ErrTooLarge}, {dir, ErrNotRegular}, {binary, ErrBinary}}
	if os.Geteuid() != 0 { // root reads any file
		wantErr = append(wantErr, struct {
			path string
			is   error
		}{unreadable, os.ErrPermission})
	}
	if len(errs) != len(wantErr) {
		t.Fatalf("errors = %v, want %d", errs, len(wantErr))
	}
	for i, w := range wantErr {
		if !errors.Is(errs[i], w.is) || !strings.Contains(errs[i].Error(), w.path) {
			t.Errorf("error %d = %v, want %v naming %s", i, errs[i], w.is, w.path)
		}
	}
	if names := s.Names(); !cmp.Equal(names, []string{"B", "D"}) && !cmp.Equal(names, []string{"B", "D", "E"}) {
		t.Errorf("Names = %v, want B and D (and E as root)", names)
	}
}

func TestLoadNothing(t *testing.T) {
	t.Parallel()
	s, errs := Load()
	if s == nil || len(errs) > 0 || len(s.Names()) > 0 || s.Prompt() != "" {
		t.Errorf("Load() = %v, %v", s, errs)
	}
	if got := s.Mask("text"); got != "text" {
		t.Errorf("Mask = %q", got)
	}
}

func TestPrompt(t *testing.T) {
	t.Parallel()
	user := writeFile(t, "user.env", strings.Join([]string{
		"# Keys for the deploy scripts",
		"",
		"",
		"GITHUB_TOKEN=ghp_0123456789 # push to the fork",
		"# OLD_TOKEN=ghp_retired-value",
		"#export OLDER=also-retired",
		"# Note: the token ghp_0123456789 expires in May",
		"SHARED=from-user # overridden below",
		"EMPTY=",
		"bad-name=hidden-value",
		"DB_PASSWORD='pa ss' # the staging database",
		"",
	}, "\n"))
	ws := writeFile(t, "ws.env", "# workspace\nshared=\"from workspace\"   # the workspace's\n")
	s, _ := Load(user, ws)
	want := strings.Join([]string{
		"# Keys for the deploy scripts",
		"",
		"§§secret(GITHUB_TOKEN) # push to the fork",
		"# Note: the token §§secret(GITHUB_TOKEN) expires in May",
		"§§secret(DB_PASSWORD) # the staging database",
		"",
		"# workspace",
		"§§secret(SHARED) # the workspace's",
	}, "\n")
	if diff := cmp.Diff(want, s.Prompt()); diff != "" {
		t.Errorf("Prompt (-want +got):\n%s", diff)
	}
	// Zero's own keys are not the agent's: not in the prompt or Names.
	s2 := s.With("OPENAI_API_KEY", "sk-zero-key")
	if s2.Prompt() != s.Prompt() || !cmp.Equal(s2.Names(), s.Names()) {
		t.Errorf("With changed the prompt or the names: %q %v", s2.Prompt(), s2.Names())
	}
	if got := maskOnly("OPENAI_API_KEY", "sk-zero-key").Prompt(); got != "" {
		t.Errorf("Prompt of a mask-only Set = %q, want empty", got)
	}
}
