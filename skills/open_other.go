//go:build !unix

package skills

const openFlags = 0
