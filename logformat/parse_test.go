package logformat

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)

const testFile = "session-abc.jsonl"

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// ev builds an expected event with the defaults of a valid parse.
func ev(typ string, mod func(*Event)) Event {
	e := Event{V: 1, Type: typ, KnownType: true, Timestamp: ts("2024-05-01T10:00:00Z")}
	switch typ {
	case TypeExchange, TypeContextReset, TypeSessionResume:
	default:
		e.KnownType = false
	}
	if mod != nil {
		mod(&e)
	}
	return e
}

const t0 = `"timestamp":"2024-05-01T10:00:00Z"`

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		line string
		file string // testFile when empty
		want Event
	}{
		{"exchange", `{"type":"exchange","session_id":"s1",` + t0 + `,"user":"hi","ai":"hello"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User, e.AI = "s1", "hi", "hello" })},
		{"exchange user only", `{"type":"exchange","session_id":"s1",` + t0 + `,"user":"hi"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "s1", "hi" })},
		{"exchange ai only, user blank", `{"type":"exchange","session_id":"s1",` + t0 + `,"user":"  ","ai":"x"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User, e.AI = "s1", "  ", "x" })},
		{"session from session-<id>.jsonl", `{"type":"exchange",` + t0 + `,"user":"hi"}`, "session-abc.jsonl",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.SessionFromFile, e.User = "abc", true, "hi" })},
		{"session from <id>.jsonl", `{"type":"exchange",` + t0 + `,"user":"hi"}`, "x-1.jsonl",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.SessionFromFile, e.User = "x-1", true, "hi" })},
		{"session from path", `{"type":"context_reset",` + t0 + `}`, "/a/b/session-q.jsonl",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "q", true })},
		{"session id charset", `{"type":"exchange","session_id":"a.b_c:d@e+f-G9",` + t0 + `,"user":"u"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "a.b_c:d@e+f-G9", "u" })},
		{"timestamp missing", `{"type":"exchange","user":"hi"}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.SessionFromFile, e.User = "abc", true, "hi"
				e.Timestamp, e.TimestampInferred = testNow, true
			})},
		{"timestamp fraction and offset", `{"type":"context_reset","timestamp":"2024-05-01T12:00:00.123456789+02:00"}`, "",
			ev(TypeContextReset, func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.Timestamp = ts("2024-05-01T10:00:00.123456789Z")
			})},
		{"timestamp space", `{"type":"context_reset","timestamp":"2024-05-01 10:00:00Z"}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"timestamp lower case", `{"type":"context_reset","timestamp":"2024-05-01t10:00:00z"}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"timestamp negative offset", `{"type":"context_reset","timestamp":"2024-05-01T05:30:00-04:30"}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"epoch seconds", `{"type":"context_reset","timestamp":1714557600}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"epoch seconds fraction", `{"type":"context_reset","timestamp":1714557600.25}`, "",
			ev(TypeContextReset, func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.Timestamp = ts("2024-05-01T10:00:00.25Z")
			})},
		{"epoch seconds exponent", `{"type":"context_reset","timestamp":1.7145576e9}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"epoch milliseconds", `{"type":"context_reset","timestamp":1714557600123}`, "",
			ev(TypeContextReset, func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.Timestamp = ts("2024-05-01T10:00:00.123Z")
			})},
		{"epoch zero", `{"type":"context_reset","timestamp":0}`, "",
			ev(TypeContextReset, func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.Timestamp = ts("1970-01-01T00:00:00Z")
			})},
		{"year 9999", `{"type":"context_reset","timestamp":"9999-12-31T23:59:59.999999999Z"}`, "",
			ev(TypeContextReset, func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.Timestamp = ts("9999-12-31T23:59:59.999999999Z")
			})},
		{"v 1", `{"v":1,"type":"context_reset",` + t0 + `}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.SessionFromFile = "abc", true })},
		{"v 2 kept", `{"v":2,"type":"context_reset",` + t0 + `}`, "",
			ev(TypeContextReset, func(e *Event) { e.V, e.SessionID, e.SessionFromFile = 2, "abc", true })},
		{"context_reset reason", `{"type":"context_reset","session_id":"s",` + t0 + `,"reason":"window full"}`, "",
			ev(TypeContextReset, func(e *Event) { e.SessionID, e.Reason = "s", "window full" })},
		{"session_resume default session", `{"type":"session_resume",` + t0 + `,"previous_session":"a","new_session":"b"}`, "notes.txt",
			ev(TypeSessionResume, func(e *Event) { e.SessionID, e.PreviousSession, e.NewSession = "b", "a", "b" })},
		{"session_resume explicit session", `{"type":"session_resume","session_id":"a",` + t0 + `,"previous_session":"a","new_session":"b"}`, "",
			ev(TypeSessionResume, func(e *Event) { e.SessionID, e.PreviousSession, e.NewSession = "a", "a", "b" })},
		{"unknown type", `{"type":"tool_call_2",` + t0 + `,"zeta":1,"alpha":{"x":[1]},"user":"u"}`, "",
			ev("tool_call_2", func(e *Event) {
				e.SessionID, e.SessionFromFile = "abc", true
				e.UnknownFields = []string{"alpha", "user", "zeta"}
			})},
		{"unknown type, no session", `{"type":"note",` + t0 + `}`, "notes.txt",
			ev("note", nil)},
		{"unknown fields sorted", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u","z":null,"reason":"r","a":[]}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User = "s", "u"
				e.UnknownFields = []string{"a", "reason", "z"}
			})},
		{"id files metadata", `{"type":"exchange","session_id":"s",` + t0 + `,"id":"550e8400-e29b","user":"u","files":["a.go","dir/b c.md"],"metadata":{ "k" : [1, {"x": null}] }}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User, e.ID = "s", "u", "550e8400-e29b"
				e.Files = []string{"a.go", "dir/b c.md"}
				e.Metadata = json.RawMessage(`{ "k" : [1, {"x": null}] }`)
			})},
		{"empty files", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u","files":[],"metadata":{}}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User = "s", "u"
				e.Metadata = json.RawMessage(`{}`)
			})},
		{"nulls are absent", `{"type":"exchange","session_id":null,"timestamp":null,"id":null,"user":"u","ai":null,"files":null,"metadata":null,"v":null}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.SessionFromFile, e.User = "abc", true, "u"
				e.Timestamp, e.TimestampInferred = testNow, true
			})},
		{"CRLF", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u"}` + "\r", "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "s", "u" })},
		{"whitespace", " \t{ \"type\" : \"exchange\" , \"session_id\":\"s\", " + t0 + ", \"user\" : \"u\" } \t", "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "s", "u" })},
		{"escapes", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"a\"b\\c\/d\n\t\r\b\f\u00e9\u20AC\ud83d\ude00","ai":"lone \ud800 \udc00 x"}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID = "s"
				e.User = "a\"b\\c/d\n\t\r\b\f\u00e9€😀"
				e.AI = "lone \uFFFD \uFFFD x"
			})},
		{"raw unicode", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"héllo 世界 😀 <&>"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "s", "héllo 世界 😀 <&>" })},
		{"escaped key", `{"\u0074ype":"exchange","session_id":"s",` + t0 + `,"user":"u"}`, "",
			ev(TypeExchange, func(e *Event) { e.SessionID, e.User = "s", "u" })},
		{"same key in sibling objects", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u","metadata":{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User = "s", "u"
				e.Metadata = json.RawMessage(`{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`)
			})},
		{"many keys", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u","metadata":` + manyKeys(40, "") + `}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User = "s", "u"
				e.Metadata = json.RawMessage(manyKeys(40, ""))
			})},
		{"numbers", `{"type":"exchange","session_id":"s",` + t0 + `,"user":"u","metadata":{"a":-0,"b":1.5e-3,"c":2E+10,"d":0.0,"e":[true,false,null]}}`, "",
			ev(TypeExchange, func(e *Event) {
				e.SessionID, e.User = "s", "u"
				e.Metadata = json.RawMessage(`{"a":-0,"b":1.5e-3,"c":2E+10,"d":0.0,"e":[true,false,null]}`)
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = testFile
			}
			got, err := Parse([]byte(tt.line), file, testNow)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.line, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%s)\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}
}

// manyKeys returns an object with n keys k0..k<n-1>, plus dup when not "".
func manyKeys(n int, dup string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	if dup != "" {
		b.WriteString(`,"` + dup + `":0`)
	}
	b.WriteString("}")
	return b.String()
}

func TestParseInvalid(t *testing.T) {
	const ex = `"type":"exchange","session_id":"s",` + t0
	tests := []struct {
		name      string
		line      string
		file      string // testFile when empty
		lim       Limits // DefaultLimits when zero
		kind      string
		field     string
		reasonHas string
	}{
		// Framing.
		{"too large", `{"type":"exchange","user":"` + strings.Repeat("x", 100) + `"}`, "", Limits{MaxLineBytes: 64}, KindTooLarge, "", "longer than the limit of 64"},
		{"empty", ``, "", Limits{}, KindEmpty, "", "blank"},
		{"blank", " \t \r", "", Limits{}, KindEmpty, "", "blank"},
		{"invalid UTF-8", "{\"type\":\"exchange\",\"user\":\"a\xffb\"}", "", Limits{}, KindInvalidUTF8, "", "at byte 28"},
		{"invalid UTF-8 overlong", "{\"type\":\"exchange\",\"user\":\"\xc0\xaf\"}", "", Limits{}, KindInvalidUTF8, "", "at byte 27"},
		{"invalid UTF-8 surrogate", "{\"type\":\"exchange\",\"user\":\"\xed\xa0\x80\"}", "", Limits{}, KindInvalidUTF8, "", "at byte 27"},
		{"BOM", "\xef\xbb\xbf{\"type\":\"exchange\"}", "", Limits{}, KindInvalidJSON, "", "byte order mark"},

		// JSON syntax.
		{"truncated", `{"type":"exchange"`, "", Limits{}, KindInvalidJSON, "", "unexpected end of input at byte 18"},
		{"truncated in string", `{"type":"exch`, "", Limits{}, KindInvalidJSON, "", "unexpected end of input"},
		{"unquoted key", `{type:"exchange"}`, "", Limits{}, KindInvalidJSON, "", "invalid character 't' looking for beginning of object key string at byte 1"},
		{"single quotes", `{'type':'exchange'}`, "", Limits{}, KindInvalidJSON, "", `invalid character '\''`},
		{"leading zero", `{"type":"exchange","x":01}`, "", Limits{}, KindInvalidJSON, "", "invalid character '1' after object key:value pair"},
		{"bad fraction", `{"x":1.}`, "", Limits{}, KindInvalidJSON, "", "after decimal point"},
		{"bad exponent", `{"x":1e}`, "", Limits{}, KindInvalidJSON, "", "in exponent"},
		{"plus number", `{"x":+1}`, "", Limits{}, KindInvalidJSON, "", "looking for beginning of value"},
		{"bad escape", `{"x":"a\qb"}`, "", Limits{}, KindInvalidJSON, "", "in string escape code"},
		{"bad unicode escape", `{"x":"\u12g4"}`, "", Limits{}, KindInvalidJSON, "", `in \u hexadecimal`},
		{"raw control char", "{\"x\":\"a\tb\"}", "", Limits{}, KindInvalidJSON, "", "control characters must be escaped"},
		{"bad literal", `{"x":tru}`, "", Limits{}, KindInvalidJSON, "", "in literal true"},
		{"trailing comma", `{"x":1,}`, "", Limits{}, KindInvalidJSON, "", "a comma before '}'"},
		{"trailing comma array", `{"x":[1,]}`, "", Limits{}, KindInvalidJSON, "", "a comma before ']'"},
		{"missing colon", `{"x" 1}`, "", Limits{}, KindInvalidJSON, "", "after object key"},
		{"NaN", `{"x":NaN}`, "", Limits{}, KindInvalidJSON, "", "looking for beginning of value"},
		{"garbage", `hello`, "", Limits{}, KindInvalidJSON, "", "not a JSON object"},
		{"non-ASCII garbage", `é`, "", Limits{}, KindInvalidJSON, "", "not a JSON object"},

		// Top level.
		{"array", `[{"type":"exchange"}]`, "", Limits{}, KindNotObject, "", "array"},
		{"string", `"exchange"`, "", Limits{}, KindNotObject, "", "string"},
		{"number", `42`, "", Limits{}, KindNotObject, "", "number"},
		{"null", `null`, "", Limits{}, KindNotObject, "", "null"},
		{"two objects", `{"type":"context_reset"}{"type":"context_reset"}`, "", Limits{}, KindTrailingData, "", "at byte 24"},
		{"extra brace", `{"type":"context_reset"}}`, "", Limits{}, KindTrailingData, "", "at byte 24"},
		{"trailing text", `{"type":"context_reset"} x`, "", Limits{}, KindTrailingData, "", "at byte 25"},

		// Duplicate keys.
		{"duplicate top", `{"type":"exchange","type":"context_reset"}`, "", Limits{}, KindDuplicateKey, "type", "duplicate key"},
		{"duplicate escaped", `{"type":"exchange","\u0074ype":"exchange"}`, "", Limits{}, KindDuplicateKey, "type", "duplicate key"},
		{"duplicate nested", `{"type":"exchange","metadata":{"a":1,"b":2,"a":3}}`, "", Limits{}, KindDuplicateKey, "metadata.a", "duplicate key"},
		{"duplicate in array", `{"type":"exchange","metadata":{"l":[{},{"k":1,"k":1}]}}`, "", Limits{}, KindDuplicateKey, "metadata.l[1].k", "duplicate key"},
		{"duplicate in unknown field", `{"type":"exchange","x":{"y":{"z":1,"z":2}}}`, "", Limits{}, KindDuplicateKey, "x.y.z", "duplicate key"},
		{"duplicate among many", `{"type":"exchange","metadata":` + manyKeys(40, "k7") + `}`, "", Limits{}, KindDuplicateKey, "metadata.k7", "duplicate key"},
		{"duplicate among many late", `{"type":"exchange","metadata":` + manyKeys(40, "k39") + `}`, "", Limits{}, KindDuplicateKey, "metadata.k39", "duplicate key"},
		{"duplicate not an object", `[{"a":1,"a":2}]`, "", Limits{}, KindDuplicateKey, "[0].a", "duplicate key"},
		{"too deep", `{"type":"exchange","metadata":{"a":[{"b":1}]}}`, "", Limits{MaxDepth: 3}, KindTooLarge, "", "nesting deeper than 3"},

		// type.
		{"type missing", `{"user":"u"}`, "", Limits{}, KindMissingField, "type", "missing"},
		{"type null", `{"type":null,"user":"u"}`, "", Limits{}, KindMissingField, "type", "missing"},
		{"type number", `{"type":1}`, "", Limits{}, KindInvalidField, "type", "must be a string, not number"},
		{"type empty", `{"type":""}`, "", Limits{}, KindInvalidField, "type", "empty"},
		{"type upper case", `{"type":"Exchange"}`, "", Limits{}, KindInvalidField, "type", "must start with a lower-case letter"},
		{"type digit first", `{"type":"1x"}`, "", Limits{}, KindInvalidField, "type", "must start"},
		{"type dash", `{"type":"tool-call"}`, "", Limits{}, KindInvalidField, "type", "outside a-z 0-9 _ at byte 4"},
		{"type too long", `{"type":"` + strings.Repeat("a", 65) + `"}`, "", Limits{}, KindTooLarge, "type", "65 bytes"},

		// v.
		{"v string", `{"v":"1",` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "must be an integer, not string"},
		{"v fraction", `{"v":1.5,` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "must be an integer"},
		{"v exponent", `{"v":1e0,` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "must be an integer"},
		{"v zero", `{"v":0,` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "less than 1"},
		{"v negative", `{"v":-3,` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "less than 1"},
		{"v overflow", `{"v":123456789012345678901234,` + ex + `,"user":"u"}`, "", Limits{}, KindInvalidField, "v", "out of range"},

		// timestamp.
		{"timestamp word", `{"type":"exchange","session_id":"s","timestamp":"yesterday","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", `not RFC 3339: "yesterday"`},
		{"timestamp date only", `{"type":"exchange","session_id":"s","timestamp":"2024-05-01","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not RFC 3339"},
		{"timestamp no seconds, no offset", `{"type":"exchange","session_id":"s","timestamp":"2024-05-01T10:00","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not RFC 3339"},
		{"timestamp bad month", `{"type":"exchange","session_id":"s","timestamp":"2024-13-01T10:00:00Z","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not RFC 3339"},
		{"timestamp bad offset", `{"type":"exchange","session_id":"s","timestamp":"2024-05-01T10:00:00+0200","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not RFC 3339"},
		{"timestamp before 1970", `{"type":"exchange","session_id":"s","timestamp":"1969-12-31T23:59:59Z","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years 1970 to 9999"},
		{"timestamp before 1970 by offset", `{"type":"exchange","session_id":"s","timestamp":"1970-01-01T00:30:00+01:00","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years"},
		{"timestamp after 9999 by offset", `{"type":"exchange","session_id":"s","timestamp":"9999-12-31T23:00:00-05:00","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years"},
		{"timestamp negative number", `{"type":"exchange","session_id":"s","timestamp":-1,"user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years"},
		{"timestamp huge number", `{"type":"exchange","session_id":"s","timestamp":1e20,"user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years"},
		{"timestamp huge exponent", `{"type":"exchange","session_id":"s","timestamp":1e999999999999,"user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "outside the years"},
		{"timestamp bool", `{"type":"exchange","session_id":"s","timestamp":true,"user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not boolean"},
		{"timestamp numeric string", `{"type":"exchange","session_id":"s","timestamp":"1714557600","user":"u"}`, "", Limits{}, KindInvalidField, "timestamp", "not RFC 3339"},

		// session_id.
		{"session_id space", `{"type":"exchange","session_id":"a b",` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "outside A-Z a-z 0-9 . _ : @ + - at byte 1"},
		{"session_id slash", `{"type":"exchange","session_id":"a/b",` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "outside"},
		{"session_id leading dash", `{"type":"exchange","session_id":"-ab",` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "must start with a letter or digit"},
		{"session_id empty", `{"type":"exchange","session_id":"",` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "empty"},
		{"session_id too long", `{"type":"exchange","session_id":"` + strings.Repeat("a", 129) + `",` + t0 + `,"user":"u"}`, "", Limits{}, KindTooLarge, "session_id", "129 bytes"},
		{"session_id number", `{"type":"exchange","session_id":7,` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "must be a string"},
		{"session_id non-ASCII", `{"type":"exchange","session_id":"sé",` + t0 + `,"user":"u"}`, "", Limits{}, KindInvalidField, "session_id", "outside"},
		{"session_id invalid on unknown type", `{"type":"note","session_id":"a b"}`, "", Limits{}, KindInvalidField, "session_id", "outside"},
		{"no session, file not jsonl", `{"type":"exchange",` + t0 + `,"user":"u"}`, "notes.txt", Limits{}, KindMissingField, "session_id", `missing, and the file name gives none: file name "notes.txt" does not end in .jsonl`},
		{"no session, empty id in file", `{"type":"context_reset",` + t0 + `}`, "session-.jsonl", Limits{}, KindMissingField, "session_id", "which is invalid: empty"},
		{"no session, bad file", `{"type":"exchange",` + t0 + `,"user":"u"}`, "my notes.jsonl", Limits{}, KindMissingField, "session_id", `gives session id "my notes", which is invalid`},
		{"no session, long file", `{"type":"exchange",` + t0 + `,"user":"u"}`, strings.Repeat("a", 129) + ".jsonl", Limits{}, KindMissingField, "session_id", "longer than the limit"},

		// exchange.
		{"exchange empty", `{` + ex + `}`, "", Limits{}, KindMissingField, "user", "both are missing"},
		{"exchange nulls", `{` + ex + `,"user":null,"ai":null}`, "", Limits{}, KindMissingField, "user", "both are missing"},
		{"exchange blank", `{` + ex + `,"user":" \n\t","ai":""}`, "", Limits{}, KindInvalidField, "user", "empty or whitespace"},
		{"exchange user number", `{` + ex + `,"user":1,"ai":"x"}`, "", Limits{}, KindInvalidField, "user", "must be a string, not number"},
		{"exchange ai object", `{` + ex + `,"user":"u","ai":{}}`, "", Limits{}, KindInvalidField, "ai", "must be a string, not object"},

		// context_reset.
		{"reason number", `{"type":"context_reset","session_id":"s","reason":5}`, "", Limits{}, KindInvalidField, "reason", "must be a string"},

		// session_resume.
		{"resume no previous", `{"type":"session_resume","new_session":"b"}`, "", Limits{}, KindMissingField, "previous_session", "missing"},
		{"resume no new", `{"type":"session_resume","previous_session":"a"}`, "", Limits{}, KindMissingField, "new_session", "missing"},
		{"resume bad previous", `{"type":"session_resume","previous_session":"a b","new_session":"b"}`, "", Limits{}, KindInvalidField, "previous_session", "outside"},
		{"resume bad new", `{"type":"session_resume","previous_session":"a","new_session":""}`, "", Limits{}, KindInvalidField, "new_session", "empty"},
		{"resume new number", `{"type":"session_resume","previous_session":"a","new_session":2}`, "", Limits{}, KindInvalidField, "new_session", "must be a string"},
		{"resume same", `{"type":"session_resume","previous_session":"a","new_session":"a"}`, "", Limits{}, KindInvalidField, "new_session", `equal to previous_session "a"`},
		{"resume bad session_id", `{"type":"session_resume","session_id":"!","previous_session":"a","new_session":"b"}`, "", Limits{}, KindInvalidField, "session_id", "must start"},

		// id.
		{"id empty", `{` + ex + `,"user":"u","id":""}`, "", Limits{}, KindInvalidField, "id", "empty"},
		{"id control", `{` + ex + `,"user":"u","id":"a\u0007b"}`, "", Limits{}, KindInvalidField, "id", "control character at byte 1"},
		{"id newline", `{` + ex + `,"user":"u","id":"a\nb"}`, "", Limits{}, KindInvalidField, "id", "control character"},
		{"id C1 control", `{` + ex + `,"user":"u","id":"a\u0085"}`, "", Limits{}, KindInvalidField, "id", "control character"},
		{"id number", `{` + ex + `,"user":"u","id":12}`, "", Limits{}, KindInvalidField, "id", "must be a string"},
		{"id too long", `{` + ex + `,"user":"u","id":"` + strings.Repeat("i", 257) + `"}`, "", Limits{}, KindTooLarge, "id", "257 bytes"},

		// files.
		{"files string", `{` + ex + `,"user":"u","files":"a.go"}`, "", Limits{}, KindInvalidField, "files", "must be an array of strings, not string"},
		{"files number element", `{` + ex + `,"user":"u","files":["a.go",3]}`, "", Limits{}, KindInvalidField, "files[1]", "must be a string, not number"},
		{"files null element", `{` + ex + `,"user":"u","files":[null]}`, "", Limits{}, KindInvalidField, "files[0]", "must be a string, not null"},
		{"files nested array", `{` + ex + `,"user":"u","files":["a",["b"]]}`, "", Limits{}, KindInvalidField, "files[1]", "not array"},
		{"files empty string", `{` + ex + `,"user":"u","files":[""]}`, "", Limits{}, KindInvalidField, "files[0]", "empty"},
		{"files NUL", `{` + ex + `,"user":"u","files":["a\u0000b"]}`, "", Limits{}, KindInvalidField, "files[0]", "NUL"},
		{"files too many", `{` + ex + `,"user":"u","files":["a","b","c"]}`, "", Limits{MaxFiles: 2}, KindTooLarge, "files", "more than 2 entries"},
		{"files too long", `{` + ex + `,"user":"u","files":["` + strings.Repeat("f", 4097) + `"]}`, "", Limits{}, KindTooLarge, "files[0]", "4097 bytes"},

		// metadata.
		{"metadata array", `{` + ex + `,"user":"u","metadata":[1]}`, "", Limits{}, KindInvalidField, "metadata", "must be an object, not array"},
		{"metadata string", `{` + ex + `,"user":"u","metadata":"{}"}`, "", Limits{}, KindInvalidField, "metadata", "must be an object, not string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = testFile
			}
			lim := tt.lim
			if lim == (Limits{}) {
				lim = DefaultLimits
			}
			got, err := ParseWithLimits([]byte(tt.line), file, testNow, lim)
			if err == nil {
				t.Fatalf("ParseWithLimits(%s) = %+v, want error", tt.line, got)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if perr.Kind != tt.kind || perr.Field != tt.field {
				t.Errorf("ParseWithLimits(%s): kind %q field %q (%v), want kind %q field %q", tt.line, perr.Kind, perr.Field, err, tt.kind, tt.field)
			}
			if !strings.Contains(perr.Reason, tt.reasonHas) {
				t.Errorf("reason %q does not contain %q", perr.Reason, tt.reasonHas)
			}
			if !reflect.DeepEqual(got, Event{}) {
				t.Errorf("event %+v returned with an error", got)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{`{"type":"exchange","timestamp":"yesterday","user":"u"}`, `field "timestamp": not RFC 3339: "yesterday"`},
		{`{"type":"exchange"`, `invalid JSON: unexpected end of input at byte 18`},
		{`{"type":"exchange","metadata":{"a":1,"a":2}}`, `field "metadata.a": duplicate key`},
		{"{\"x\":\"\xff\"}", `invalid UTF-8 at byte 6`},
		{`[1]`, `line is a JSON array, not an object`},
		{`not json at all`, `invalid JSON: not a JSON object (a line must be one JSON object, starting with '{') at byte 0`},
		{`  echo hello`, `invalid JSON: not a JSON object (a line must be one JSON object, starting with '{') at byte 2`},
		{`{"type":"exchange","user":"u",}`, `invalid JSON: a comma before '}' (JSON allows no trailing comma) at byte 30`},
		{`{"type":"exchange","files":["a",]}`, `invalid JSON: a comma before ']' (JSON allows no trailing comma) at byte 32`},
		{`{"type":"exchange","user":"u" "ai":"a"}`, `invalid JSON: invalid character '"' after object key:value pair at byte 30`},
		{`{} {}`, `data after the object at byte 3`},
		{`{"type":"exchange","user":"u"}`, `field "session_id": missing, and the file name gives none: file name "log.txt" does not end in .jsonl`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.line), "log.txt", testNow)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s) error %v, want %s", tt.line, err, tt.want)
		}
	}
}

func TestParseLongValueExcerpt(t *testing.T) {
	long := strings.Repeat("y", 10000)
	_, err := Parse([]byte(`{"type":"exchange","timestamp":"`+long+`"}`), testFile, testNow)
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("error not bounded: %d bytes", len(err.Error()))
	}
}

func TestParseDoesNotAlias(t *testing.T) {
	line := []byte(`{"type":"exchange","session_id":"s","user":"hello","id":"x","files":["f"],"metadata":{"a":1},"zz":1}`)
	e, err := Parse(line, testFile, testNow)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'X'
	}
	if e.User != "hello" || e.SessionID != "s" || e.ID != "x" || e.Files[0] != "f" || string(e.Metadata) != `{"a":1}` || e.UnknownFields[0] != "zz" {
		t.Errorf("event changed with the line: %+v", e)
	}
}

func TestParseLimitsDefaults(t *testing.T) {
	// Zero fields of Limits take the default values.
	line := []byte(`{"type":"exchange","session_id":"s","user":"u","files":["a","b"]}`)
	if _, err := ParseWithLimits(line, testFile, testNow, Limits{MaxFiles: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseWithLimits(line, testFile, testNow, Limits{MaxFiles: 1}); err == nil {
		t.Fatal("MaxFiles 1 accepted two files")
	}
}

func TestParseDepthLimit(t *testing.T) {
	deep := func(n int) string {
		return `{"type":"note","x":` + strings.Repeat(`[`, n) + strings.Repeat(`]`, n) + `}`
	}
	// Depth counts the line's object: an array n deep in it reaches n+1.
	if _, err := Parse([]byte(deep(DefaultLimits.MaxDepth-1)), testFile, testNow); err != nil {
		t.Errorf("depth %d: %v", DefaultLimits.MaxDepth, err)
	}
	_, err := Parse([]byte(deep(DefaultLimits.MaxDepth)), testFile, testNow)
	var perr *Error
	if !errors.As(err, &perr) || perr.Kind != KindTooLarge {
		t.Errorf("depth %d: %v, want too_large", DefaultLimits.MaxDepth+1, err)
	}
	// Very deep input must not exhaust the stack.
	if _, err := Parse([]byte(deep(1_000_000)), testFile, testNow); err == nil {
		t.Error("deep nesting accepted")
	}
}

// TestOversizeReason: an oversize line's reject names the limit it is
// over and the flag that raises it. Before, it said only "exceeds the
// maximum line size".
func TestOversizeReason(t *testing.T) {
	got := OversizeReason(12000090, 1<<20)
	for _, want := range []string{"line of 12000090 bytes (11.4 MiB)", "maximum line size of 1048576 bytes (1.0 MiB)", "--max-line-bytes 12000090"} {
		if !strings.Contains(got, want) {
			t.Errorf("OversizeReason = %q, want %q in it", got, want)
		}
	}
	if got := OversizeReason(2000, 0); !strings.Contains(got, "--max-line-bytes") || strings.Contains(got, "size of") {
		t.Errorf("OversizeReason with no known limit = %q", got)
	}
}

// TestWithLineBytes: a line a reader held to a larger maximum line size
// parses; the other limits still apply. Before, the daemon's
// --max-line-bytes could not raise the limit over 1 MiB: the parser
// rejected what the watcher kept.
func TestWithLineBytes(t *testing.T) {
	line := []byte(`{"type":"exchange","session_id":"s","user":"` + strings.Repeat("x", 2<<20) + `","ai":"ok"}`)
	if _, err := Parse(line, "s.jsonl", time.Now()); err == nil {
		t.Fatal("a 2 MiB line parsed with the default limits")
	}
	lim := DefaultLimits.WithLineBytes(len(line))
	if _, err := ParseWithLimits(line, "s.jsonl", time.Now(), lim); err != nil {
		t.Errorf("ParseWithLimits(WithLineBytes): %v", err)
	}
	if lim.MaxSessionIDLen != DefaultLimits.MaxSessionIDLen || DefaultLimits.WithLineBytes(10).MaxLineBytes != DefaultLimits.MaxLineBytes {
		t.Errorf("WithLineBytes: %+v", lim)
	}
}
