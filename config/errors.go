package config

import (
	"errors"
	"strconv"
)

// ErrInvalid marks every problem with a configuration value: an unknown key, a wrong type, a
// bad enum value, a negative limit or malformed YAML. Load returns one [*Error] per problem,
// joined with errors.Join, and each matches errors.Is(err, ErrInvalid).
var ErrInvalid = errors.New("invalid configuration")

// Error is one configuration problem, located so a person (or an editor, as a diagnostic) can go
// straight to it. Exactly one of File, Env and Flag is set.
type Error struct {
	File string // the config file, when the problem is in one
	Line int    // 1-based line in File; 0 when YAML could not say
	Env  string // the environment variable, e.g. "ZERO_SANDBOX"
	Flag string // the flag name without dashes, e.g. "model"
	Key  string // dotted key, e.g. "limits.repeat"; "" when it cannot be told (malformed YAML)
	Msg  string // what is wrong; never contains an API key
}

// Error formats the problem as "<file>:<line>: <key>: <msg>", "env NAME: <key>: <msg>" or
// "flag --name: <key>: <msg>", leaving out whatever is unknown.
func (e *Error) Error() string {
	var s string
	switch {
	case e.Env != "":
		s = "env " + e.Env
	case e.Flag != "":
		s = "flag --" + e.Flag
	default:
		s = e.File
		if e.Line > 0 {
			s += ":" + strconv.Itoa(e.Line)
		}
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Msg
}

// Unwrap makes every configuration problem match [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }
