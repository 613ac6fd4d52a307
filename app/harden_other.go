//go:build !linux

package app

// Harden has nothing to do where no /proc exposes a process's environment.
func Harden() {}
