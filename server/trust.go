package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/zeroagent/zero/loop"
)

// Trust statuses, as package trust names them.
const (
	TrustNone      = "none"      // the workspace carries no code
	TrustTrusted   = "trusted"   // its code runs
	TrustUntrusted = "untrusted" // never trusted: its code is off
	TrustChanged   = "changed"   // changed since trusted: its code is off
)

// TrustFile is one file of a workspace's code.
type TrustFile struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Point  string `json:"point,omitempty"`
	Digest string `json:"digest"`
	// Change is "added", "changed" or "removed" since the user last trusted
	// the workspace ("" when unchanged or never trusted).
	Change string `json:"change,omitempty"`
}

// TrustState is what may run of a workspace's code.
type TrustState struct {
	Workspace string      `json:"workspace"`
	Status    string      `json:"status"`
	Digest    string      `json:"digest,omitempty"`
	Files     []TrustFile `json:"files,omitempty"`
	// Message tells the user why the code is off and how to turn it on;
	// "" when nothing needs saying.
	Message string `json:"message,omitempty"`
}

// NeedsTrust reports whether the workspace has code that is off.
func (t TrustState) NeedsTrust() bool {
	return t.Status == TrustUntrusted || t.Status == TrustChanged
}

// Trust is the user's consent to a workspace's code: extension scripts and
// tools that would run on this machine. A face asks the person in its
// protocol's own way (a permission request, a message box, an elicitation)
// and grants only on that person's answer, never on a model's word: the
// model may have been steered by the very repository it would trust.
type Trust interface {
	// TrustState says what may run of the code of the workspace of roots.
	TrustState(roots []string) (TrustState, error)
	// Grant trusts the code of the workspace of roots if its digest is
	// still digest, the one the person was shown; otherwise it fails with
	// ErrTrustMoved and trusts nothing.
	Grant(roots []string, digest string) (TrustState, error)
}

// ErrTrustMoved: the code changed between showing it and the answer.
var ErrTrustMoved = errors.New("the workspace's code changed after it was shown; review it again")

// Trust returns the manager's trust service, or nil when it has none.
func (m *Manager) Trust() Trust { return m.opts.Trust }

// TrustState says what may run of the session's workspace code; ok is false
// when the manager has no trust service.
func (s *Session) TrustState() (TrustState, bool, error) {
	if s.trust == nil {
		return TrustState{}, false, nil
	}
	st, err := s.trust.TrustState(s.Spec().Roots)
	return st, true, err
}

// GrantTrust trusts the session's workspace code as the person saw it
// (digest) and reloads the session's extensions, so the code runs from the
// next turn on (from the next run when one is going on now).
func (s *Session) GrantTrust(ctx context.Context, digest string) (TrustState, error) {
	if s.trust == nil {
		return TrustState{}, fmt.Errorf("trust: %w", ErrUnsupported)
	}
	st, err := s.trust.Grant(s.Spec().Roots, digest)
	if err != nil {
		return st, err
	}
	switch err := s.Configure(ctx, "", ""); {
	case errors.Is(err, loop.ErrBusy):
		s.mu.Lock()
		s.reload = true
		s.mu.Unlock()
	case err != nil && !errors.Is(err, ErrUnsupported):
		return st, err
	}
	return st, nil
}
