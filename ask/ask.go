// Package ask is a question someone other than the model puts to the user
// during a run (an MCP server's elicitation: a form to fill in, or a page
// to open), and the user's answer. mcpclient turns a server's request into
// a Question, the server package's broker carries it to the face of the
// session, and the face asks the person in its protocol's way; nothing of
// it reaches the model.
package ask

import "errors"

// The actions of an Answer, as MCP names them.
const (
	Accept  = "accept"  // the person answered (filled the form, opened the page)
	Decline = "decline" // the person said no
	Cancel  = "cancel"  // dismissed without a choice, or no one could answer
)

// Question is what is asked. A form has Fields; a page to open has URL
// (and no Fields); a question with neither is a plain yes or no.
type Question struct {
	// ID is given by the broker, unique in the process.
	ID string `json:"id"`
	// Session is the session whose run asks.
	Session string `json:"session,omitempty"`
	// Server names who asks: the MCP server's name as configured.
	Server string `json:"server"`
	// Message is the asker's text, to be shown as theirs, not Zero's.
	Message string `json:"message"`
	// Fields are the form's fields, in the order the asker gave them.
	Fields []Field `json:"fields,omitempty"`
	// URL is the page a URL question asks the person to open (https, or
	// http on loopback).
	URL string `json:"url,omitempty"`
}

// Field is one field of a form. MCP allows flat forms only: a string
// (with a format or a length), a number or an integer (with bounds), a
// boolean, one option of a list, or several of a list.
type Field struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is one of the Type* values.
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Default is the asker's default (a string, float64, bool or []string,
	// as Type says), nil when none: an answer that leaves the field out
	// gets it.
	Default any `json:"default,omitempty"`
	// Options are the choices of TypeChoice and TypeChoices.
	Options []Option `json:"options,omitempty"`
	// Format is a string's format: "email", "uri", "date" or "date-time".
	Format string `json:"format,omitempty"`
	// MinLength and MaxLength bound a string, Min and Max a number, MinItems
	// and MaxItems a list of choices; nil is unbounded.
	MinLength *int     `json:"min_length,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MinItems  *int     `json:"min_items,omitempty"`
	MaxItems  *int     `json:"max_items,omitempty"`
}

// The types of a Field.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeChoice  = "choice"  // one of Options (a string enum)
	TypeChoices = "choices" // any of Options (an array of a string enum)
)

// Option is one choice: Value is what is sent, Title what is shown.
type Option struct {
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// Answer is the person's answer. Content holds the form's values by field
// name (string, float64, bool or []string) when Action is Accept; it may
// hold a secret, so it is never logged, stored or shown to the model.
type Answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Declined is the answer when no one can answer.
var Declined = Answer{Action: Decline}

// ErrNoOne: the question could not be put to anyone (no face of the
// session can ask).
var ErrNoOne = errors.New("no one can answer the question")
