package logformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	// Valid lines of each type.
	`{"type":"exchange","session_id":"s1","timestamp":"2024-05-01T10:00:00Z","user":"hi","ai":"hello"}`,
	`{"v":1,"type":"exchange","timestamp":"2024-05-01T10:00:00.123456789+02:00","id":"6f1c","user":"fix \"bug\"\nplease","ai":"done \\o/ \u00e9 \ud83d\ude00","files":["a.go","b/c d.md"],"metadata":{"model":"m","tokens":{"in":1,"out":2},"tags":["x",null,true,1.5e3]}}`,
	`{"type":"exchange","user":"only user"}`,
	`{"type":"exchange","ai":"only ai","timestamp":1714557600}`,
	`{"type":"exchange","ai":"ms","timestamp":1714557600123.5}`,
	`{"type":"context_reset","session_id":"s1","timestamp":"2024-05-01 10:00:00Z","reason":"window full"}`,
	`{"type":"context_reset"}`,
	`{"type":"session_resume","previous_session":"a","new_session":"b"}`,
	`{"type":"session_resume","session_id":"a","previous_session":"a","new_session":"b","timestamp":"2024-05-01t10:00:00z"}`,
	`{"v":7,"type":"tool_call","session_id":"x@y:z+1","name":"grep","args":{"q":"\u0000"}}`,
	"{\"type\":\"exchange\",\"user\":\"crlf\"}\r",
	` { "type" : "exchange" , "user" : "spaced" } `,
	`{"type":"exchange","user":"u","z":null,"reason":"r","session_id":null,"files":[],"metadata":{}}`,
	`{"type":"exchange","user":"lone \ud800 surrogate \udc00","id":"\u2028"}`,
	`{"\u0074ype":"exchange","\u0075ser":"escaped keys"}`,
	// Producer mistakes read as meant: the alias "assistant", a timestamp
	// without offset (Python's isoformat()).
	`{"type":"exchange","user":"q","assistant":"a"}`,
	`{"type":"exchange","user":"q","ai":null,"assistant":"a","timestamp":"2024-05-01T10:00:00.123456"}`,
	`{"type":"context_reset","assistant":"kept as unknown","timestamp":"2024-05-01 10:00:00"}`,
	// Invalid lines.
	``,
	`   `,
	`{`,
	`{"type":"exchange"`,
	`{"type":"exchange","type":"exchange"}`,
	`{"type":"exchange","metadata":{"a":[{"b":1,"b":2}]}}`,
	`{"type":"context_reset"}{"type":"context_reset"}`,
	`[{"type":"exchange"}]`,
	`"exchange"`,
	`null`,
	`{"type":"exchange","user":"a` + "\xff" + `"}`,
	"\xef\xbb\xbf{\"type\":\"exchange\"}",
	`{"type":"exchange","timestamp":"yesterday","user":"u"}`,
	`{"type":"exchange","timestamp":-1,"user":"u"}`,
	`{"type":"exchange","timestamp":1e999999999,"user":"u"}`,
	`{"type":"exchange","timestamp":"9999-12-31T23:00:00-05:00","user":"u"}`,
	`{"type":"exchange","v":0,"user":"u"}`,
	`{"type":"exchange","v":1.0,"user":"u"}`,
	`{"type":"exchange","session_id":"a b","user":"u"}`,
	`{"type":"exchange","user":" ","ai":"\n"}`,
	`{"type":"session_resume","previous_session":"a","new_session":"a"}`,
	`{"type":"exchange","user":"u","id":"a\u0007"}`,
	`{"type":"exchange","user":"u","files":["a",1,""]}`,
	`{"type":"exchange","user":"u","metadata":[]}`,
	`{"type":"Exchange"}`,
	`{"type":"exchange","ai":"a","assistant":"b"}`,
	`{"type":"exchange","user":"u","assistant":["b"]}`,
	`{"type":"contextreset"}`,
	`{"type":"exchnage","user":"u"}`,
	`{"type":"session_resumes","previous_session":"a","new_session":"b"}`,
	`{"type":"exchange","timestamp":"2024-05-01T10:00","user":"u"}`,
	`{"x":01}`,
	`{"x":"\u12"}`,
	`{"x":[1,]}`,
	`[[[[[[[[[[]]]]]]]]]]`,
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		for _, file := range []string{"session-abc.jsonl", "notes.txt"} {
			f.Add([]byte(s), file)
		}
	}
	f.Add([]byte(`{"type":"exchange","user":"u"}`), "session-.jsonl")
	f.Add([]byte(`{"type":"exchange","user":"u"}`), "my notes.jsonl")
	f.Add([]byte(`{"type":"exchange","user":"u"}`), "x.jsonl")
	for _, pretty := range []string{`{`, `  "type": "exchange",`, `    "a\"b"`, `  },`, `    1.5,`, `  {"type":"exchange","user":"u"},`} {
		f.Add([]byte(pretty), "x.jsonl")
	}
	f.Fuzz(func(t *testing.T, line []byte, file string) {
		e, err := Parse(line, file, testNow)
		stripped := bytes.TrimSuffix(line, []byte("\r"))
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if !reflect.DeepEqual(e, Event{}) {
				t.Fatalf("event %+v returned with error %v", e, err)
			}
			checkErrorAgainstStdlib(t, stripped, perr)
			return
		}

		// Accepted: encoding/json must agree that it is one valid object
		// without duplicate keys, and decode the fields alike.
		if !json.Valid(stripped) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		if refHasDuplicateKey(stripped) {
			t.Fatalf("accepted a duplicate key: %q", line)
		}
		checkFieldsAgainstStdlib(t, stripped, e)

		// Round trip.
		out, err := e.MarshalLine()
		if err != nil {
			var perr *Error
			if errors.As(err, &perr) && perr.Kind == KindTooLarge {
				return
			}
			t.Fatalf("MarshalLine(%+v) = %v", e, err)
		}
		e2, err := Parse(out[:len(out)-1], file, testNow)
		if err != nil {
			t.Fatalf("Parse(MarshalLine) = %v\nline %s", err, out)
		}
		if !reflect.DeepEqual(normalize(t, e), normalize(t, e2)) {
			t.Fatalf("round trip differs\nin  %q\nout %s\n  %+v\n  %+v", line, out, e, e2)
		}
		out2, err := e2.MarshalLine()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("MarshalLine not stable: %s vs %s (%v)", out, out2, err)
		}
	})
}

// normalize clears what a round trip does not keep.
func normalize(t *testing.T, e Event) Event {
	e.TimestampInferred = false
	e.TimestampNoOffset = false
	e.AIFromAlias = false
	e.SessionFromFile = false
	e.UnknownFields = nil
	if e.Metadata != nil {
		var b bytes.Buffer
		if err := json.Compact(&b, e.Metadata); err != nil {
			t.Fatalf("metadata %q: %v", e.Metadata, err)
		}
		e.Metadata = b.Bytes()
	}
	return e
}

func checkErrorAgainstStdlib(t *testing.T, line []byte, perr *Error) {
	switch perr.Kind {
	case KindEmpty:
		if !IsBlank(line) {
			t.Fatalf("empty for %q", line)
		}
	case KindInvalidUTF8:
		if utf8.Valid(line) {
			t.Fatalf("invalid_utf8 for valid UTF-8 %q", line)
		}
	case KindInvalidJSON, KindTrailingData:
		if json.Valid(line) {
			t.Fatalf("%s (%v) for valid JSON %q", perr.Kind, perr, line)
		}
	case KindNotObject:
		var v any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("not_object for %q, which does not start with a value: %v", line, err)
		}
		if _, ok := v.(map[string]any); ok {
			t.Fatalf("not_object for an object %q", line)
		}
	case KindDuplicateKey:
		if json.Valid(line) && !refHasDuplicateKey(line) {
			t.Fatalf("duplicate_key (%v) for %q", perr, line)
		}
	case KindTooLarge:
	case KindMissingField, KindInvalidField:
		if !json.Valid(line) || refHasDuplicateKey(line) {
			t.Fatalf("%s (%v) for %q, which the JSON checks should have caught", perr.Kind, perr, line)
		}
	default:
		t.Fatalf("unknown kind %q", perr.Kind)
	}
}

// refHasDuplicateKey walks valid JSON with json.Decoder.Token and reports a
// duplicate key at any depth (keys compared decoded).
func refHasDuplicateKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isObject && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.wantKey = false
			continue
		}
		if top != nil && top.isObject {
			top.wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, isObject: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].isObject {
				stack[len(stack)-1].wantKey = true
			}
		}
	}
}

// checkFieldsAgainstStdlib decodes line with encoding/json and compares
// the string fields and the unknown-field list with e.
func checkFieldsAgainstStdlib(t *testing.T, line []byte, e Event) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	str := func(name, got string) {
		if v, ok := m[name].(string); ok && v != got {
			t.Fatalf("%s: got %q, encoding/json %q", name, got, v)
		}
	}
	str("type", e.Type)
	str("id", e.ID)
	if !e.SessionFromFile {
		str("session_id", e.SessionID)
	}
	switch e.Type {
	case TypeExchange:
		str("user", e.User)
		if e.AIFromAlias {
			str("assistant", e.AI)
		} else {
			str("ai", e.AI)
		}
	case TypeContextReset:
		str("reason", e.Reason)
	case TypeSessionResume:
		str("previous_session", e.PreviousSession)
		str("new_session", e.NewSession)
	}
	if files, ok := m["files"].([]any); ok {
		if len(files) != len(e.Files) {
			t.Fatalf("files: %q vs %v", e.Files, files)
		}
		for i, f := range files {
			if f.(string) != e.Files[i] {
				t.Fatalf("files[%d]: %q vs %q", i, e.Files[i], f)
			}
		}
	}
	var unknown []string
	for k := range m {
		slot := slotOf([]byte(k))
		if slot < 0 || !slotBelongs(slot, e.Type) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	if !slices.Equal(unknown, e.UnknownFields) {
		t.Fatalf("unknown fields %q, encoding/json gives %q", e.UnknownFields, unknown)
	}
}
