package logformat

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMarshalLine(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 500, time.FixedZone("x", 2*3600))
	tests := []struct {
		name string
		e    Event
		want string
	}{
		{"exchange, all fields",
			Event{V: 1, Type: TypeExchange, Timestamp: at, SessionID: "s1", ID: "id-1", User: "hi", AI: "hello",
				Files: []string{"a.go", "b/c.md"}, Metadata: json.RawMessage(`{ "k" : [1, 2] }`)},
			`{"type":"exchange","timestamp":"2024-05-01T10:00:00.0000005Z","session_id":"s1","id":"id-1","user":"hi","ai":"hello","files":["a.go","b/c.md"],"metadata":{"k":[1,2]}}`},
		{"v 0 is 1, empty user omitted",
			Event{Type: TypeExchange, Timestamp: at.Truncate(time.Second), SessionID: "s1", AI: "x"},
			`{"type":"exchange","timestamp":"2024-05-01T10:00:00Z","session_id":"s1","ai":"x"}`},
		{"v 2 kept",
			Event{V: 2, Type: TypeContextReset, Timestamp: at.Truncate(time.Second), SessionID: "s1", Reason: "full"},
			`{"v":2,"type":"context_reset","timestamp":"2024-05-01T10:00:00Z","session_id":"s1","reason":"full"}`},
		{"session_resume",
			Event{Type: TypeSessionResume, Timestamp: at.Truncate(time.Second), PreviousSession: "a", NewSession: "b"},
			`{"type":"session_resume","timestamp":"2024-05-01T10:00:00Z","previous_session":"a","new_session":"b"}`},
		{"unknown type",
			Event{Type: "note", Timestamp: at.Truncate(time.Second)},
			`{"type":"note","timestamp":"2024-05-01T10:00:00Z"}`},
		{"hostile text",
			Event{Type: TypeExchange, Timestamp: at.Truncate(time.Second), SessionID: "s",
				User: "say \"hi\"\nand\\or 'x' $(rm -rf /) <b>&amp;</b>", AI: "tab\there\r\x00\x1f \u2028 é 😀"},
			`{"type":"exchange","timestamp":"2024-05-01T10:00:00Z","session_id":"s","user":"say \"hi\"\nand\\or 'x' $(rm -rf /) <b>&amp;</b>","ai":"tab\there\r\u0000\u001f \u2028 é 😀"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.e.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want+"\n" {
				t.Errorf("MarshalLine\n got %s\nwant %s", got, tt.want)
			}
			if strings.Count(string(got), "\n") != 1 {
				t.Errorf("line holds %d newlines", strings.Count(string(got), "\n"))
			}
			back, err := Parse(got[:len(got)-1], "notes.txt", testNow)
			if err != nil {
				t.Fatalf("Parse(MarshalLine) = %v", err)
			}
			want := tt.e
			if want.V == 0 {
				want.V = 1
			}
			want.Timestamp = want.Timestamp.UTC()
			want.KnownType = want.Type != "note"
			if want.Type == TypeSessionResume {
				want.SessionID = want.NewSession
			}
			if want.Metadata != nil {
				want.Metadata = compactJSON(t, want.Metadata)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("round trip\n got %+v\nwant %+v", back, want)
			}
		})
	}
}

func compactJSON(t testing.TB, raw []byte) json.RawMessage {
	var b strings.Builder
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}

func TestValidate(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	ok := Event{Type: TypeExchange, Timestamp: at, SessionID: "s", User: "u"}
	if err := Validate(ok); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	tests := []struct {
		name        string
		mod         func(e *Event)
		kind, field string
	}{
		{"v negative", func(e *Event) { e.V = -1 }, KindInvalidField, "v"},
		{"no type", func(e *Event) { e.Type = "" }, KindInvalidField, "type"},
		{"bad type", func(e *Event) { e.Type = "Exchange" }, KindInvalidField, "type"},
		{"no timestamp", func(e *Event) { e.Timestamp = time.Time{} }, KindMissingField, "timestamp"},
		{"timestamp 1969", func(e *Event) { e.Timestamp = time.Unix(-1, 0) }, KindInvalidField, "timestamp"},
		{"timestamp 10000", func(e *Event) { e.Timestamp = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, KindInvalidField, "timestamp"},
		{"no session", func(e *Event) { e.SessionID = "" }, KindMissingField, "session_id"},
		{"bad session", func(e *Event) { e.SessionID = "a b" }, KindInvalidField, "session_id"},
		{"id control", func(e *Event) { e.ID = "a\tb" }, KindInvalidField, "id"},
		{"id invalid UTF-8", func(e *Event) { e.ID = "a\xff" }, KindInvalidUTF8, "id"},
		{"id too long", func(e *Event) { e.ID = strings.Repeat("x", 257) }, KindTooLarge, "id"},
		{"files too many", func(e *Event) { e.Files = make([]string, 1001) }, KindTooLarge, "files"},
		{"file empty", func(e *Event) { e.Files = []string{"a", ""} }, KindInvalidField, "files[1]"},
		{"file NUL", func(e *Event) { e.Files = []string{"a\x00"} }, KindInvalidField, "files[0]"},
		{"file invalid UTF-8", func(e *Event) { e.Files = []string{"\xc0"} }, KindInvalidUTF8, "files[0]"},
		{"metadata array", func(e *Event) { e.Metadata = json.RawMessage(`[]`) }, KindInvalidField, "metadata"},
		{"metadata invalid", func(e *Event) { e.Metadata = json.RawMessage(`{"a":}`) }, KindInvalidJSON, "metadata"},
		{"metadata trailing", func(e *Event) { e.Metadata = json.RawMessage(`{} {}`) }, KindTrailingData, "metadata"},
		{"metadata duplicate", func(e *Event) { e.Metadata = json.RawMessage(`{"a":{"b":1,"b":2}}`) }, KindDuplicateKey, "metadata.a.b"},
		{"metadata invalid UTF-8", func(e *Event) { e.Metadata = json.RawMessage("{\"a\":\"\xff\"}") }, KindInvalidUTF8, "metadata"},
		{"user invalid UTF-8", func(e *Event) { e.User = "\xff" }, KindInvalidUTF8, "user"},
		{"exchange blank", func(e *Event) { e.User, e.AI = " ", "\n" }, KindInvalidField, "user"},
		{"exchange empty", func(e *Event) { e.User = "" }, KindMissingField, "user"},
		{"reason on exchange", func(e *Event) { e.Reason = "r" }, KindInvalidField, "reason"},
		{"new_session on exchange", func(e *Event) { e.NewSession = "n" }, KindInvalidField, "new_session"},
		{"user on context_reset", func(e *Event) { e.Type = TypeContextReset }, KindInvalidField, "user"},
		{"user on unknown type", func(e *Event) { e.Type = "note" }, KindInvalidField, "user"},
		{"resume missing previous", func(e *Event) { e.Type, e.User, e.NewSession = TypeSessionResume, "", "b" }, KindMissingField, "previous_session"},
		{"resume missing new", func(e *Event) { e.Type, e.User, e.PreviousSession = TypeSessionResume, "", "a" }, KindMissingField, "new_session"},
		{"resume same", func(e *Event) {
			e.Type, e.User, e.PreviousSession, e.NewSession = TypeSessionResume, "", "a", "a"
		}, KindInvalidField, "new_session"},
		{"resume bad", func(e *Event) {
			e.Type, e.User, e.PreviousSession, e.NewSession = TypeSessionResume, "", "a", "b/c"
		}, KindInvalidField, "new_session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ok
			tt.mod(&e)
			err := Validate(e)
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Validate = %v, want *Error", err)
			}
			if perr.Kind != tt.kind || perr.Field != tt.field {
				t.Errorf("Validate: kind %q field %q (%v), want %q %q", perr.Kind, perr.Field, err, tt.kind, tt.field)
			}
			if line, err := e.MarshalLine(); err == nil {
				t.Errorf("MarshalLine of an invalid event = %s", line)
			}
		})
	}
}

func TestMarshalLineTooLarge(t *testing.T) {
	e := Event{Type: TypeExchange, Timestamp: time.Unix(1714557600, 0), SessionID: "s", User: strings.Repeat("\"", 600_000)}
	_, err := e.MarshalLine() // 1.2 MB once escaped
	var perr *Error
	if !errors.As(err, &perr) || perr.Kind != KindTooLarge {
		t.Fatalf("MarshalLine = %v, want too_large", err)
	}
	if _, err := e.MarshalLineWithLimits(Limits{MaxLineBytes: 2 << 20}); err != nil {
		t.Fatalf("MarshalLineWithLimits(2 MiB) = %v", err)
	}
}
