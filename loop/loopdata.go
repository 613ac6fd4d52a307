package loop

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/zeroagent/zero/llm"
)

// LoopData is the scratch state of one monologue, shared with extensions
// (Agent Zero's LoopData).
type LoopData struct {
	// Iteration starts at -1 and rises by one per message-loop turn; it
	// restarts with every monologue (unlike the agent's iteration_no).
	Iteration int
	// System holds the system prompt parts, filled by system_prompt
	// extensions and joined with blank lines.
	System []string
	// UserMessage is the user message that started the monologue.
	UserMessage string
	// HistoryOutput is the history as sent to the model this turn.
	HistoryOutput []llm.Message
	// ExtrasTemporary are added to the prompt of the next turn only;
	// ExtrasPersistent to every turn of the monologue.
	ExtrasTemporary  *Extras
	ExtrasPersistent *Extras
	// LastResponse is the previous reply, for repeat detection.
	LastResponse string
	// ParamsTemporary is cleared every turn; ParamsPersistent lives for
	// the monologue.
	ParamsTemporary  map[string]any
	ParamsPersistent map[string]any
	// CurrentTool is the tool call being executed, if any.
	CurrentTool *ToolCall

	// rendered caches the built-in system prompt parts for the monologue:
	// their files and variables do not change within one.
	rendered map[string]string
	// refitted is set on a turn whose history was compressed to fit its
	// prompt in the window (preparePrompt), which is tried once a turn.
	refitted bool
}

func newLoopData(userMessage string) *LoopData {
	return &LoopData{
		Iteration:        -1,
		UserMessage:      userMessage,
		ExtrasTemporary:  NewExtras(),
		ExtrasPersistent: NewExtras(),
		ParamsTemporary:  map[string]any{},
		ParamsPersistent: map[string]any{},
		rendered:         map[string]string{},
	}
}

// Extras is an insertion-ordered map of prompt extras.
type Extras struct {
	keys []string
	m    map[string]any
}

// NewExtras returns an empty Extras.
func NewExtras() *Extras { return &Extras{m: map[string]any{}} }

// Set adds or replaces key.
func (e *Extras) Set(key string, v any) {
	if _, ok := e.m[key]; !ok {
		e.keys = append(e.keys, key)
	}
	e.m[key] = v
}

// Get returns the value of key.
func (e *Extras) Get(key string) (any, bool) {
	v, ok := e.m[key]
	return v, ok
}

// Delete removes key.
func (e *Extras) Delete(key string) {
	if _, ok := e.m[key]; ok {
		delete(e.m, key)
		e.keys = slices.DeleteFunc(e.keys, func(k string) bool { return k == key })
	}
}

// Len is the number of extras.
func (e *Extras) Len() int { return len(e.keys) }

// Keys returns the keys in insertion order.
func (e *Extras) Keys() []string { return slices.Clone(e.keys) }

// Clear removes everything.
func (e *Extras) Clear() {
	e.keys = e.keys[:0]
	clear(e.m)
}

// Map returns a copy as a plain map (for script extensions).
func (e *Extras) Map() map[string]any {
	m := make(map[string]any, len(e.m))
	for k, v := range e.m {
		m[k] = v
	}
	return m
}

// renderExtras writes the persistent then the temporary extras as one JSON
// object in insertion order, a temporary key replacing a persistent one,
// like Agent Zero's {**persistent, **temporary}.
func renderExtras(persistent, temporary *Extras) string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	write := func(k string, v any) {
		if n > 0 {
			b.WriteString(",\n")
		} else {
			b.WriteByte('\n')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteString(": ")
		if s, ok := v.(string); ok {
			vb, _ := json.Marshal(s)
			b.Write(vb)
			return
		}
		vb, err := json.Marshal(v)
		if err != nil {
			vb, _ = json.Marshal(err.Error())
		}
		b.Write(vb)
	}
	for _, k := range persistent.keys {
		if v, ok := temporary.m[k]; ok {
			write(k, v)
			continue
		}
		write(k, persistent.m[k])
	}
	for _, k := range temporary.keys {
		if _, ok := persistent.m[k]; ok {
			continue
		}
		write(k, temporary.m[k])
	}
	if n > 0 {
		b.WriteByte('\n')
	}
	b.WriteByte('}')
	return b.String()
}
