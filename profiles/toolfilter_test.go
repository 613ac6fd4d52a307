package profiles

import "testing"

// A workspace's tool filter only takes tools away from what the layers
// below allow.
func TestWorkspaceToolFilterOnlyRestricts(t *testing.T) {
	t.Parallel()
	allow := func(names ...string) *[]string { return &names }
	for _, tc := range []struct {
		name        string
		user, proj  rawTools
		tool        string
		wantAllowed bool
	}{
		{"cannot add to the user's allow list", rawTools{Allow: allow("response")}, rawTools{Allow: allow("response", "code_execution_tool")}, "code_execution_tool", false},
		{"cannot clear the user's deny list", rawTools{Deny: allow("input")}, rawTools{Deny: allow()}, "input", false},
		{"may deny more", rawTools{}, rawTools{Deny: allow("code_execution_tool")}, "code_execution_tool", false},
		{"may allow less", rawTools{}, rawTools{Allow: allow("response")}, "text_editor", false},
		{"what both allow runs", rawTools{Allow: allow("response", "text_editor")}, rawTools{Allow: allow("text_editor")}, "text_editor", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Spec
			user, proj := tc.user, tc.proj
			s.merge(rawSpec{Tools: &user}, false)
			s.merge(rawSpec{Tools: &proj}, true)
			if got := s.Tools.Allows(tc.tool); got != tc.wantAllowed {
				t.Errorf("Allows(%s) = %v, want %v", tc.tool, got, tc.wantAllowed)
			}
		})
	}
}
