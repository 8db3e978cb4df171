package logformat

import (
	"fmt"
	"strconv"

	"github.com/praxis-os/continuity/internal/words"
)

// Kinds of validation failure, the values of Error.Kind. Each is listed with
// its meaning in protocol.md ("What is rejected").
const (
	// KindEmpty: the line is empty or whitespace only. Not a reject: the
	// daemon skips such lines (see IsBlank).
	KindEmpty = "empty"
	// KindTooLarge: the line, its nesting, or a field exceeds a Limits value.
	KindTooLarge = "too_large"
	// KindInvalidUTF8: the line is not valid UTF-8.
	KindInvalidUTF8 = "invalid_utf8"
	// KindInvalidJSON: the line is not JSON text.
	KindInvalidJSON = "invalid_json"
	// KindNotObject: the line is JSON, but not an object.
	KindNotObject = "not_object"
	// KindTrailingData: something other than whitespace follows the object.
	KindTrailingData = "trailing_data"
	// KindDuplicateKey: an object, at any depth, has the same key twice.
	KindDuplicateKey = "duplicate_key"
	// KindMissingField: a required field is absent (or null).
	KindMissingField = "missing_field"
	// KindInvalidField: a known field has the wrong JSON type or a value
	// outside its rules.
	KindInvalidField = "invalid_field"
)

// Error is a validation failure. Parse, Validate and MarshalLine return
// *Error for every validation failure; use errors.As to inspect it.
type Error struct {
	Kind   string // one of the Kind constants
	Field  string // field path such as "timestamp" or "metadata.a"; "" for the line as a whole
	Reason string // human-readable explanation, without the field name
}

// Error returns `field "timestamp": not RFC 3339: "yesterday"`, or the
// reason alone for line-level problems, e.g.
// `invalid JSON: unexpected end of input at byte 17`.
func (e *Error) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return "field " + strconv.Quote(e.Field) + ": " + e.Reason
}

func newError(kind, field, format string, args ...any) *Error {
	return &Error{Kind: kind, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func invalidField(field, format string, args ...any) *Error {
	return newError(KindInvalidField, field, format, args...)
}

func missingField(field, format string, args ...any) *Error {
	return newError(KindMissingField, field, format, args...)
}

func tooLarge(field, format string, args ...any) *Error {
	return newError(KindTooLarge, field, format, args...)
}

// excerptLen bounds the value quoted in an error reason.
const excerptLen = 64

// excerpt quotes s for an error reason, shortening it to about excerptLen
// bytes (on a rune boundary) so that a reason stays small.
func excerpt(s string) string {
	cut, more := words.Cut(s, excerptLen)
	if !more {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut) + "..."
}
