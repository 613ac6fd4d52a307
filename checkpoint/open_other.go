//go:build !unix

package checkpoint

const oNonblock = 0
