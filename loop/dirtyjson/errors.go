package dirtyjson

import "errors"

// ErrNoObject is returned by [Parse] when the text contains no '{' at all.
var ErrNoObject = errors.New("dirtyjson: no JSON object found")
