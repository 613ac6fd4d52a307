// Package loop is Zero's engine: Agent Zero's monologue, in Go.
//
// A [Session] holds a chain of agents (agent 0 talks to the user; each may
// call a subordinate with call_subordinate). [Session.Run] gives agent 0 the
// user's message and runs its monologue: build the system prompt and the
// history, stream the model's reply, parse the one JSON tool request it
// holds (package dirtyjson forgives what models get wrong), run the tool,
// add the result to the history, and go round again until the response
// tool answers. Around every step the named extension points of Agent Zero
// run (package hooks), and at every step the run says what happens as an
// [Event]: reasoning, thoughts, the headline, the tool call and its
// streamed output, the answer, warnings and errors.
//
// A message sent while a run goes is an intervention ([Session.Intervene]):
// the agent sees it at its next step, and a running tool is told
// (see [Intervened]). The history is compressed as it grows (compress.go),
// within the limits the session is given ([Limits]).
//
// The loop knows no sandbox, no store, no editor and no configuration file:
// tools come in through the [Tool] interface, the model through [Model],
// settings in a [Setup] and [Config], and approvals through the gate the
// server installs ([Session.SetGate]). Secrets are kept from the model,
// the events and the history by the set in [Config.Secrets].
package loop
