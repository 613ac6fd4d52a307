//go:build windows

package sandbox

import (
	"context"
	"errors"
)

// ErrLocalUnsupported is NewLocal's answer on Windows: the local backend
// runs bash in a pseudo-terminal with job control, which Windows lacks.
// The Docker backend (Docker Desktop) and every editor face work.
var ErrLocalUnsupported = errors.New("the local sandbox is not available on Windows; run the agent's commands in Docker (Docker Desktop, sandbox.backend docker)")

// Local is the local backend, which Windows does not have.
type Local struct{ opts LocalOptions }

var _ Backend = (*Local)(nil)

// NewLocal fails with ErrLocalUnsupported on Windows.
func NewLocal(LocalOptions) (*Local, error) { return nil, ErrLocalUnsupported }

// Isolation says there is none.
func (l *Local) Isolation() (mode, why string) { return IsolationNone, ErrLocalUnsupported.Error() }

// IsolationSummary says why there is no local backend.
func (l *Local) IsolationSummary() string { return ErrLocalUnsupported.Error() }

// Name is "local".
func (l *Local) Name() string { return "local" }

// Workdir is the configured directory.
func (l *Local) Workdir() string { return l.opts.Dir }

// OpenShell fails with ErrLocalUnsupported.
func (l *Local) OpenShell(context.Context) (*Shell, error) { return nil, ErrLocalUnsupported }

// Close does nothing.
func (l *Local) Close() error { return nil }
