// Package hooks runs Zero's extension points: Agent Zero's named points, each with an ordered list of
// extensions that may inspect and change the point's payload.
//
// Two kinds of extension exist. Built-ins are Go functions the engine registers in a [Registry] at
// start-up. User extensions are executables (any language) placed in layered "extensions" directories
// (see [Layers]): a script lives in <layer>/<point>/ and is named like a built-in, so
// "_10_iteration_no.sh" in a higher layer replaces the built-in "_10_iteration_no", and
// "_10_iteration_no.disabled" removes it. [Resolve] scans the layers once and produces a [Set]; the
// engine then calls [Set.Call] at each point. A point without extensions costs a map lookup.
//
// A script receives {"point", "extension", "payload"} as JSON on stdin and may answer one JSON object on
// stdout; the point's [Payload] decides which fields it accepts. A script that fails, times out or
// answers garbage is reported through [Options.OnWarning] and skipped: user extensions never take a
// run down. A built-in's error, on the other hand, stops the point and is returned.
package hooks
