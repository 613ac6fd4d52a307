package hooks

import "errors"

// Sentinels carried by [Warning.Err] (and, for [ErrFieldNotAllowed], by [UnmarshalAnswer]); match them
// with errors.Is.
var (
	// ErrNotExecutable marks a file in a point directory that is neither an executable regular file
	// nor a NAME.disabled marker; it is skipped.
	ErrNotExecutable = errors.New("not an executable regular file")
	// ErrDuplicateName marks a second script with the same name in one layer (e.g. "_20_x.sh" and
	// "_20_x.py"); the first in byte order of file names is kept.
	ErrDuplicateName = errors.New("duplicate extension name in one layer")
	// ErrUnknownPoint marks a directory in an extensions folder that names no known extension point,
	// usually a typo; its scripts are still resolved but the engine may never call that point.
	ErrUnknownPoint = errors.New("unknown extension point")
	// ErrMisplaced marks an executable placed directly in an extensions folder instead of in
	// <extensions>/<point>/; it never runs.
	ErrMisplaced = errors.New("executable outside a point directory")
	// ErrScriptFailed marks a script that could not be started or exited non-zero.
	ErrScriptFailed = errors.New("script failed")
	// ErrScriptTimeout marks a script killed (with its whole process group) after Options.Timeout.
	ErrScriptTimeout = errors.New("script timed out")
	// ErrBadAnswer marks a script whose stdout was not empty and not exactly one JSON object.
	ErrBadAnswer = errors.New("script printed an invalid answer")
	// ErrAnswerRejected marks a script answer that the point's Payload.ApplyScript refused.
	ErrAnswerRejected = errors.New("script answer rejected")
	// ErrFieldNotAllowed is returned by UnmarshalAnswer for an answer field the point does not allow.
	ErrFieldNotAllowed = errors.New("field not allowed at this extension point")
)
