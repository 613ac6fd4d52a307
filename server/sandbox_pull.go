package server

import "github.com/zeroagent/zero/loop"

// EventSandboxPull: the sandbox image is being pulled for a tool call that
// waits for it (the first command of a Docker sandbox whose engine lacks
// the image). Item is that tool call's item; Text says where the pull is,
// in words ("pulling the sandbox image kalilinux/kali-rolling: 1 of 2
// layers, 45.1 MB of 130.2 MB"); Args holds the numbers as JSON (image,
// layers, layers_done, current, total in bytes, finished, error); Status is
// one of the Pull* values. The app sends it throttled (at most about once a
// second, when a layer is done, and at the end), a server event like the
// approval ones, so it lives here rather than in loop.
const EventSandboxPull loop.EventType = "sandbox_pull"

// Statuses carried by sandbox_pull.
const (
	PullPulling = "pulling"
	PullDone    = "pulled"
	PullFailed  = "failed"
)
