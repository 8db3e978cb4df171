package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/praxis-os/continuity/server"
)

// The engine's errors that are the caller's mistake are *Error values: a
// code, the request field at fault, the value given and a hint, never
// text phrased for one interface. Each interface phrases them itself
// (Error.Phrase with its Phrasing): the command line names its flags
// ("--since"), MCP its tool arguments ("argument since"), the viewer its
// form fields. Error() is the neutral phrasing, with the fields' own
// names, for logs.

// Code says what kind of mistake an Error is.
type Code string

const (
	// CodeBadValue: Field's value (Value) cannot be read or is out of
	// range; Hint says what is wanted.
	CodeBadValue Code = "bad_value"
	// CodeEmptyWindow: Field (since) is not before Other (until).
	CodeEmptyWindow Code = "empty_window"
	// CodeUnknownSession: the session Value is not in the index.
	CodeUnknownSession Code = "unknown_session"
	// CodeForgottenSession: the session Value was forgotten at At.
	CodeForgottenSession Code = "forgotten_session"
	// CodeEmptyQuery: the query has no word to search for.
	CodeEmptyQuery Code = "empty_query"
	// CodeNoSessions: a resume of the latest session in an index that
	// holds none.
	CodeNoSessions Code = "no_sessions"
	// CodeNoEvent: no event has the id Value.
	CodeNoEvent Code = "no_event"
	// CodeBadRequest: another mistake of the caller, said by Hint.
	CodeBadRequest Code = "bad_request"
)

// Error is a caller's mistake, structured (see the top of this file). It
// satisfies IsBadRequest (exit code 2 on the command line, 400 in the
// viewer) and crosses the daemon's socket whole.
type Error struct {
	Code Code `json:"code"`
	// Field is the request field at fault (its JSON name: "since",
	// "as_of", "min_score", "session"), "" when none is.
	Field string `json:"field,omitempty"`
	// Value is the value given, as the message shows it (quoted when
	// it is text).
	Value string `json:"value,omitempty"`
	// Other and OtherValue are a second field involved (CodeEmptyWindow:
	// until).
	Other      string `json:"other,omitempty"`
	OtherValue string `json:"other_value,omitempty"`
	// Hint says what is wanted ("want 1 to 200"), or, for
	// CodeBadRequest, the whole message.
	Hint string `json:"hint,omitempty"`
	// At is when a forgotten session was forgotten.
	At time.Time `json:"at,omitzero"`
}

// Phrasing is how an interface names what an Error refers to.
type Phrasing struct {
	// Field names a request field as the interface's user knows it
	// ("--since", "argument since"); nil: the field's own name.
	Field func(field string) string
	// Sessions is how the interface lists the sessions, for "see ..."
	// ("'continuity sessions'", "list_sessions").
	Sessions string
}

// Neutral is the engine's own phrasing: fields by their names.
var Neutral = Phrasing{Sessions: "'continuity sessions'"}

// fieldLabel is a field's name in the neutral phrasing, where it is not
// the JSON name.
var fieldLabel = map[string]string{"min_score": "min score", "as_of": "as-of"}

// Name is field as p names it.
func (p Phrasing) Name(field string) string {
	if p.Field != nil {
		return p.Field(field)
	}
	if l, ok := fieldLabel[field]; ok {
		return l
	}
	return field
}

// Phrase says e as the interface of p names things.
func (e *Error) Phrase(p Phrasing) string {
	sessions := p.Sessions
	if sessions == "" {
		sessions = Neutral.Sessions
	}
	switch e.Code {
	case CodeBadValue:
		return p.Name(e.Field) + " " + e.Value + ": " + e.Hint
	case CodeEmptyWindow:
		return fmt.Sprintf("%s %s is not before %s %s: the window holds no time", p.Name(e.Field), e.Value, p.Name(e.Other), e.OtherValue)
	case CodeUnknownSession:
		return fmt.Sprintf("unknown session %s (see %s)", e.Value, sessions)
	case CodeForgottenSession:
		return fmt.Sprintf("session %s was forgotten at %s ('continuity forget', retention or another machine's forget): its events are no longer indexed (see %s)",
			e.Value, e.At.UTC().Format(time.RFC3339), sessions)
	case CodeEmptyQuery:
		return "empty query: give words to search for"
	case CodeNoSessions:
		return "resume: " + p.Name(e.Field) + ": no session indexed yet"
	case CodeNoEvent:
		return fmt.Sprintf("%v %s (forgotten, or never indexed)", ErrNoEvent, e.Value)
	}
	return e.Hint
}

func (e *Error) Error() string { return e.Phrase(Neutral) }

// Is makes errors.Is(err, ErrNoEvent) hold for a CodeNoEvent error.
func (e *Error) Is(target error) bool { return target == ErrNoEvent && e.Code == CodeNoEvent }

// Phrase is err's text with the *Error it holds phrased as p says (err's
// own text when it holds none): an interface's way to say an error whose
// context (wrapping) it keeps.
func Phrase(err error, p Phrasing) string {
	e := AsError(err)
	if e == nil {
		return err.Error()
	}
	msg, neutral := err.Error(), e.Error()
	if !strings.Contains(msg, neutral) {
		return msg
	}
	return strings.Replace(msg, neutral, e.Phrase(p), 1)
}

// badValue is a CodeBadValue error for field, its value shown as given
// by show ("%q", "%d", "%v").
func badValue(field, show string, value any, hint string) *Error {
	return &Error{Code: CodeBadValue, Field: field, Value: fmt.Sprintf(show, value), Hint: hint}
}

// badRequest is a CodeBadRequest error saying msg.
func badRequest(msg string) *Error { return &Error{Code: CodeBadRequest, Hint: msg} }

// AsError is the *Error err holds (also one that came back from the
// daemon through the socket), or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// toWire is err as the socket carries it: an *Error keeps its structure
// in the server.Error's detail.
func toWire(err error) error {
	e := AsError(err)
	if e == nil {
		return err
	}
	detail, merr := json.Marshal(e)
	if merr != nil {
		return server.BadRequest(err)
	}
	return &server.Error{Code: 2, Message: err.Error(), Detail: detail}
}

// fromWire is an error of the daemon as the engine returned it: the
// *Error in a server.Error's detail, when it has one.
func fromWire(err error) error {
	var se *server.Error
	if !errors.As(err, &se) || len(se.Detail) == 0 {
		return err
	}
	var e Error
	if json.Unmarshal(se.Detail, &e) != nil || e.Code == "" {
		return err
	}
	return &e
}

// IsBadRequest reports whether err is the caller's mistake (an unknown
// session, a bad query or flag value): exit code 2 on the command line.
func IsBadRequest(err error) bool {
	if AsError(err) != nil {
		return true
	}
	var se *server.Error
	return errors.As(err, &se) && se.Code == 2
}
