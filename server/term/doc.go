// Package term is the terminal's face, beside the editor faces: zero chat
// (a conversation, message after message, in a Bubble Tea program) and
// zero run (one task, shown live or as JSON lines). Like server/acp, it is
// handed the session manager and talks to it as the editors do: sessions
// are created and followed through server, and approvals are asked of the
// broker's requests, at the terminal, by the person in front of it. It
// wires nothing: cmd/zero gives it app's manager.
package term
