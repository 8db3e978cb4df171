package logformat

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// withLocal sets the local time zone for a test: timestamps without an
// offset are read in it.
func withLocal(t *testing.T, loc *time.Location) {
	old := time.Local
	time.Local = loc
	t.Cleanup(func() { time.Local = old })
}

// TestParseProducerMistakes: common producer mistakes are either read as
// meant (an alias, a timestamp without offset) and flagged, or rejected
// with a reason naming the field; none is accepted silently while losing
// data.
func TestParseProducerMistakes(t *testing.T) {
	withLocal(t, time.FixedZone("UTC+2", 2*3600))
	const s = `"session_id":"s",`
	valid := []struct {
		name string
		line string
		want Event
	}{
		{"assistant is an alias of ai", `{"type":"exchange",` + s + t0 + `,"user":"q","assistant":"the answer"}`,
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User, e.AI, e.AIFromAlias = "s", "q", "the answer", true })},
		{"assistant alone", `{"type":"exchange",` + s + t0 + `,"assistant":"only the answer"}`,
			ev(TypeExchange, func(e *Event) { e.SessionID, e.AI, e.AIFromAlias = "s", "only the answer", true })},
		{"assistant null, ai given", `{"type":"exchange",` + s + t0 + `,"ai":"a","assistant":null}`,
			ev(TypeExchange, func(e *Event) { e.SessionID, e.AI = "s", "a" })},
		{"assistant in another type is unknown", `{"type":"context_reset",` + s + t0 + `,"assistant":"x"}`,
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.UnknownFields = "s", []string{"assistant"} })},
		{"python isoformat, no offset: local time", `{"type":"exchange",` + s + `"timestamp":"2024-05-01T12:00:00.123456","user":"q"}`,
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User, e.TimestampNoOffset = "s", "q", true
				e.Timestamp = ts("2024-05-01T10:00:00.123456Z")
			})},
		{"python str(datetime), no offset", `{"type":"exchange",` + s + `"timestamp":"2024-05-01 12:00:00","user":"q"}`,
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User, e.TimestampNoOffset = "s", "q", true })},
		{"unknown type far from known ones", `{"type":"tool_call",` + s + t0 + `}`,
			ev("tool_call", func(e *Event) { e.SessionID = "s" })},
		{"unknown type: a longer name", `{"type":"exchange_summary",` + s + t0 + `}`,
			ev("exchange_summary", func(e *Event) { e.SessionID = "s" })},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.line), testFile, testNow)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.line, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%s)\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}

	invalid := []struct {
		name, line, kind, field, reasonHas string
	}{
		{"ai and assistant both", `{"type":"exchange",` + s + t0 + `,"ai":"a","assistant":"b"}`, KindInvalidField, "assistant", `alias of "ai"`},
		{"assistant not a string", `{"type":"exchange",` + s + t0 + `,"user":"u","assistant":1}`, KindInvalidField, "assistant", "must be a string"},
		{"type typo: missing underscore", `{"type":"contextreset",` + s + t0 + `}`, KindInvalidField, "type", `"context_reset"`},
		{"type typo: sessionresume", `{"type":"sessionresume","previous_session":"a","new_session":"b"}`, KindInvalidField, "type", `"session_resume"`},
		{"type typo: swapped letters", `{"type":"exchnage",` + s + t0 + `,"user":"u"}`, KindInvalidField, "type", `"exchange"`},
		{"type typo: plural", `{"type":"exchanges",` + s + t0 + `,"user":"u"}`, KindInvalidField, "type", `"exchange"`},
		{"type typo: context_rest", `{"type":"context_rest",` + s + t0 + `}`, KindInvalidField, "type", `"context_reset"`},
		{"date only", `{"type":"exchange",` + s + `"timestamp":"2024-05-01","user":"q"}`, KindInvalidField, "timestamp", "not RFC 3339"},
		{"minutes only, no offset", `{"type":"exchange",` + s + `"timestamp":"2024-05-01T12:00","user":"q"}`, KindInvalidField, "timestamp", "not RFC 3339"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.line), testFile, testNow)
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse(%s) = %+v, %v; want an *Error", tt.line, got, err)
			}
			if perr.Kind != tt.kind || perr.Field != tt.field || !strings.Contains(perr.Reason, tt.reasonHas) {
				t.Errorf("Parse(%s): %v (kind %s, field %q); want kind %s field %q reason with %q", tt.line, err, perr.Kind, perr.Field, tt.kind, tt.field, tt.reasonHas)
			}
		})
	}
}
