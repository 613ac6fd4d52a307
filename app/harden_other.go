//go:build !linux

package app

// harden has nothing to do where no /proc exposes a process's environment.
func Harden() {}
