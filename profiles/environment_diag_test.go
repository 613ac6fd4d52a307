package profiles

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestEnvironmentDiagnostic: an environment prompt that places the agent in Agent Zero's
// runtime (the framework in /a0) is reported; one that only mentions Docker or Kali is not.
func TestEnvironmentDiagnostic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string // substrings of the message; nil: no diagnostic
	}{
		{
			name: "agent zero base",
			text: "## Environment\nlive in kali linux docker container use debian kali packages\n" +
				"agent zero framework is python project in /a0 folder\nlinux fully root accessible via terminal",
			want: []string{"/a0", "Kali Linux Docker container", "sandbox", "Remove the file"},
		},
		{name: "a0 alone", text: "the framework is in /a0/usr", want: []string{"the framework in /a0)"}},
		{name: "zero's own", text: `{{if sandbox == "docker"}}- a Kali Linux Docker container{{endif}}`},
		{name: "other paths", text: "see /data/a0 and /a0b and ~/a0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := fstest.MapFS{environmentFile: {Data: []byte(tt.text)}, "other.md": {Data: []byte("/a0")}}
			got := promptDiagnostics(dir, "/p")
			if tt.want == nil {
				if len(got) != 0 {
					t.Errorf("diagnostics = %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Path != "/p/"+environmentFile {
				t.Fatalf("diagnostics = %v, want one for %s", got, environmentFile)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message lacks %q: %s", w, got[0].Message)
				}
			}
			if strings.Contains(tt.text, "kali") != strings.Contains(got[0].Message, "Kali") {
				t.Errorf("message names Kali only when the file does: %s", got[0].Message)
			}
		})
	}
}
