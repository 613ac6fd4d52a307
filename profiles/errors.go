package profiles

import "errors"

// ErrNotFound reports that no directory holds the requested prompt file. Render returns it for the
// file asked for and for every file reached through an include.
var ErrNotFound = errors.New("prompt not found")

// ErrSyntax reports a malformed template: an unterminated or stray {{if}}/{{else}}/{{endif}}, a
// condition that does not parse, or a JSON template whose output is not valid JSON.
var ErrSyntax = errors.New("prompt template syntax error")

// ErrIncludeCycle reports a chain of includes that leads back to a file already being rendered.
var ErrIncludeCycle = errors.New("prompt include cycle")

// ErrEval reports a condition that parsed but could not be evaluated with the given vars, such as
// ordering a string against a number.
var ErrEval = errors.New("prompt condition evaluation error")

// ErrNoProfile reports that no layer has a folder for the requested profile, or that the name
// cannot be a profile name (empty, "..", or containing a path separator).
var ErrNoProfile = errors.New("profile not found")

// ErrInvalidSpec reports an agent.yaml that is not valid YAML or does not fit [Spec]: an unknown
// key, a wrong type, an unknown model role. The error names the file, the line and the key.
var ErrInvalidSpec = errors.New("invalid agent.yaml")
