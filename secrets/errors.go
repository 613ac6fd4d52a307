package secrets

import "errors"

var (
	// ErrTooLarge: a secrets file is larger than MaxFileSize.
	ErrTooLarge = errors.New("larger than 1 MiB, not read")
	// ErrNotRegular: a secrets file is a directory or a device.
	ErrNotRegular = errors.New("not a regular file, not read")
	// ErrBinary: a secrets file holds a NUL byte.
	ErrBinary = errors.New("holds a NUL byte (not a text file), not read")
	// ErrSyntax: a line is not an entry.
	ErrSyntax = errors.New("invalid line")
	// ErrUnterminated: a quoted value is never closed.
	ErrUnterminated = errors.New("quoted value never closed")
)
