package logformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Building the events that continuity appends itself (`continuity log`,
// the MCP log tools): from fields, or from a JSON object read from stdin,
// filled (timestamp, id) and validated exactly as the daemon will read
// them.

// Request is an event to append, as `continuity log`'s flags and the MCP
// log tools give it.
type Request struct {
	Type, Session, User, AI, Reason, Previous, New, ID, Metadata string
	Files                                                        []string
}

// Build builds, fills (timestamp, id) and validates an event from r, and
// returns its line as it is to be written. Its type must be one of
// protocol version 1: other types are written as JSON (BuildFromJSON),
// where a mistyped flag cannot make one. Its errors name the fields as
// `continuity log`'s flags (--type).
func Build(r Request) ([]byte, Event, error) {
	if !slices.Contains(KnownTypes, r.Type) {
		if k := LooksLikeKnownType(r.Type); k != "" {
			return nil, Event{}, fmt.Errorf("--type %q: did you mean %q?", r.Type, k)
		}
		return nil, Event{}, fmt.Errorf("--type %q: want exchange, context_reset or session_resume (an event of another type is written as JSON on stdin: continuity log -)", r.Type)
	}
	ev := Event{
		Type: r.Type, SessionID: r.Session, ID: r.ID, User: r.User, AI: r.AI, Reason: r.Reason,
		PreviousSession: r.Previous, NewSession: r.New, Files: r.Files,
		Timestamp: time.Now().UTC(),
	}
	if ev.Type == TypeSessionResume && ev.SessionID == "" {
		ev.SessionID = ev.NewSession
	}
	if ev.ID == "" {
		ev.ID = uuid.NewString()
	}
	if r.Metadata != "" {
		ev.Metadata = json.RawMessage(r.Metadata)
	}
	line, err := ev.MarshalLine()
	if err != nil {
		return nil, ev, err
	}
	return checkLine(line)
}

// Overrides are the fields given beside an event read as JSON (nil when
// not given: `continuity log -`'s --session, --type and --id): each fills
// its field when the event lacks it, and is an error when the event has
// another value.
type Overrides struct {
	Session, Type, ID *string
}

// BuildFromJSON reads one JSON object, applies the overrides, fills
// timestamp and id when missing and keeps every other field as given. What
// it reads otherwise than written (the alias "assistant", a timestamp
// without offset) it writes unambiguously ("ai", the offset), and says so
// through warn, as it does for fields protocol version 1 does not know.
func BuildFromJSON(r io.Reader, to string, over Overrides, warn func(string)) ([]byte, Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(DefaultLimits.MaxLineBytes)+1))
	if err != nil {
		return nil, Event{}, fmt.Errorf("read stdin: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) > DefaultLimits.MaxLineBytes {
		return nil, Event{}, fmt.Errorf("event on stdin is over %d bytes", DefaultLimits.MaxLineBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		// Parse says what is wrong, with the offset.
		_, perr := Parse(data, to, time.Now())
		if perr == nil {
			perr = err
		}
		return nil, Event{}, fmt.Errorf("event on stdin: %w", perr)
	}
	// The overrides: added as text at the front of the object, so that the
	// line is then checked as written (duplicate keys, UTF-8).
	type override struct {
		key, flag string
		val       *string
	}
	var add []byte
	var nulls []override
	for _, o := range []override{{"session_id", "session", over.Session}, {"type", "type", over.Type}, {"id", "id", over.ID}} {
		if o.val == nil {
			continue
		}
		if raw, ok := obj[o.key]; ok && string(raw) != "null" {
			var have string
			if json.Unmarshal(raw, &have) != nil || have != *o.val {
				return nil, Event{}, fmt.Errorf("--%s %q but the event on stdin has %s %s: give one or make them agree", o.flag, *o.val, o.key, raw)
			}
			continue
		}
		if _, ok := obj[o.key]; ok {
			nulls = append(nulls, o) // null: absent to Parse; replaced below
			continue
		}
		k, _ := json.Marshal(o.key)
		v, _ := json.Marshal(*o.val)
		add = append(append(append(append(add, k...), ':'), v...), ',')
	}
	if len(add) > 0 {
		i := bytes.IndexByte(data, '{') + 1
		rest := bytes.TrimSpace(data[i:])
		if len(rest) > 0 && rest[0] == '}' {
			add = add[:len(add)-1] // an empty object: no comma
		}
		data = append(append(append([]byte{}, data[:i]...), add...), data[i:]...)
		obj = nil
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, Event{}, fmt.Errorf("event on stdin: %w", err)
		}
	}
	// Validate as written (duplicate keys, UTF-8, types). A null
	// session_id is absent to Parse, which then takes the session from the
	// file name: the one --session gives.
	name := to
	if name == "" && over.Session != nil {
		name = "session-" + *over.Session + ".jsonl"
	}
	ev, err := Parse(data, name, time.Now())
	var le *Error
	if name == "" && errors.As(err, &le) && le.Kind == KindMissingField && le.Field == "session_id" {
		// No file name to take it from: say what the user can give.
		var names []string
		for k := range obj {
			names = append(names, k)
		}
		slices.Sort(names)
		return nil, Event{}, fmt.Errorf(`event on stdin: no "session_id": add one to the event, or give --session ID%s`, FieldHints(names))
	}
	if err != nil {
		return nil, Event{}, fmt.Errorf("event on stdin: %w", err)
	}
	for _, o := range nulls {
		obj[o.key], _ = json.Marshal(*o.val)
	}
	absent := func(key string) bool { raw, ok := obj[key]; return !ok || string(raw) == "null" }
	if absent("timestamp") {
		obj["timestamp"], _ = json.Marshal(time.Now().UTC().Format(time.RFC3339Nano))
	} else if ev.TimestampNoOffset {
		local := ev.Timestamp.In(time.Local).Format(time.RFC3339Nano)
		warn(fmt.Sprintf("timestamp %s has no UTC offset: read as local time (%s) and written as %s", obj["timestamp"], time.Local, local))
		obj["timestamp"], _ = json.Marshal(local)
	}
	if absent("id") {
		obj["id"], _ = json.Marshal(uuid.NewString())
	}
	if ev.AIFromAlias {
		warn(`"assistant" is read as "ai" (its alias) and written as "ai"`)
		obj["ai"] = obj["assistant"]
		delete(obj, "assistant")
	}
	if len(ev.UnknownFields) > 0 {
		warn(fmt.Sprintf("fields %q are not part of protocol version 1 for type %q: kept in the stored line, but not searched nor shown by resume%s", ev.UnknownFields, ev.Type, FieldHints(ev.UnknownFields)))
	}
	line, err := json.Marshal(obj)
	if err != nil {
		return nil, Event{}, err
	}
	return checkLine(append(line, '\n'))
}

// checkLine parses the line to be written exactly as the daemon will.
func checkLine(line []byte) ([]byte, Event, error) {
	ev, err := Parse(bytes.TrimSuffix(line, []byte("\n")), "", time.Now())
	if err != nil {
		return nil, ev, err
	}
	if len(line) > DefaultLimits.MaxLineBytes {
		return nil, ev, fmt.Errorf("event is %d bytes, over the %d-byte line limit", len(line), DefaultLimits.MaxLineBytes)
	}
	return line, ev, nil
}

// FileName is the file in the logs folder an event goes to: to (`log
// --to`), else session-<session>.jsonl, with the machine in the name
// (<name>~<machine>.jsonl, MachineName) unless to gives one: two
// machines sharing the logs never append to the same file.
func FileName(to string, ev Event) (string, error) {
	if to != "" {
		if to != filepath.Base(to) || !strings.HasSuffix(to, ".jsonl") || strings.HasPrefix(to, ".") {
			return "", fmt.Errorf("--to %q: want a plain file name ending in .jsonl (it is created in the logs folder)", to)
		}
		if !strings.Contains(to, MachineSep) {
			// x.jsonl is written as x~<machine>.jsonl: one writer per file
			// across the machines sharing the logs.
			return MachineLogName(strings.TrimSuffix(to, ".jsonl"), MachineName()), nil
		}
		return to, nil
	}
	if ev.SessionID == "" {
		return "", errors.New("no session: give --session (or --to FILE)")
	}
	return MachineLogName("session-"+ev.SessionID, MachineName()), nil
}
