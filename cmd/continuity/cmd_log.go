package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/redact"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// logRequest is what `continuity log` (and the MCP log tool) append.
type logRequest struct {
	Type, Session, User, AI, Reason, Previous, New, ID, Metadata string
	Files                                                        []string
	To                                                           string // file name in the logs folder; default session-<id>~<machine>.jsonl
}

func runLog(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log [flags] [-]", `
Append one event to the workspace's logs: validated against protocol.md,
with timestamp and id (a UUID) filled in when missing, written with a single
O_APPEND write so concurrent writers never interleave (on a fresh line
when a crashed writer left an unfinished one), and printed on stdout as it
is stored, secrets redacted (the log file keeps what was given). The file
is .praxis-os/.conversations/session-<session>~<machine>.jsonl unless --to
names another (a name without "~" gets "~<machine>" too: the machine is
$CONTINUITY_MACHINE, else the host name, so that machines sharing the logs
never write the same file); stderr says which file of which workspace it went to (a command
run in the home folder, or a filesystem root, that holds no .praxis-os is
refused unless --root names it: a workspace there would capture every
project below). With "-", the event is read as one JSON object from stdin (unknown
fields are kept, with a warning); --session, --type and --id fill its
fields when it has none and are an error when it has others; "assistant"
is written as "ai" and a timestamp without offset gets the local one (both
with a warning). Exit 0 only when the whole line was written.

  continuity log --session S --user "question" --ai "answer"
  continuity log --session S --type context_reset --reason "window full"
  continuity log --type session_resume --previous OLD --new NEW
  echo '{"type":"exchange","session_id":"S","user":"u","ai":"a"}' | continuity log -

Log a context_reset when the agent's window was compacted or cleared (resume
then treats what came before as gone from the window and brings it back), and
a session_resume when a new session continues an earlier one (resume and
search --chain then reach back into it). The MCP tools log_context_reset and
log_session_resume write the same events; the Claude Code SessionStart hook
(recipes/) records both by itself.`)
	var r logRequest
	var files stringList
	fs.StringVar(&r.Type, "type", logformat.TypeExchange, "event type: exchange, context_reset or session_resume (other types: JSON on stdin)")
	fs.StringVar(&r.Session, "session", "", "session id (exchange, context_reset)")
	fs.StringVar(&r.User, "user", "", "the user's text (exchange)")
	fs.StringVar(&r.AI, "ai", "", "the assistant's text (exchange)")
	fs.StringVar(&r.Reason, "reason", "", "why the context was reset (context_reset)")
	fs.StringVar(&r.Previous, "previous", "", "the session resumed (session_resume)")
	fs.StringVar(&r.New, "new", "", "the new session (session_resume)")
	fs.StringVar(&r.ID, "id", "", "producer idempotency key (default: a new UUID); a retry with the same id and event is not written again, and another event under an id the file holds is refused")
	fs.StringVar(&r.Metadata, "metadata", "", "a JSON object attached to the event")
	fs.Var(&files, "file", "a path the event refers to (repeatable)")
	fs.StringVar(&r.To, "to", "", "log file name inside the logs folder (default session-<session>~<machine>.jsonl, the machine from $CONTINUITY_MACHINE, else the host name)")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	r.Files = files
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	p, err := e.paths()
	if err != nil {
		return err
	}
	var line []byte
	var ev logformat.Event
	switch {
	case len(pos) == 1 && pos[0] == "-":
		for _, name := range []string{"user", "ai", "reason", "previous", "new", "metadata", "file"} {
			if set[name] {
				return usageError("--%s cannot be combined with '-': the event on stdin gives its own fields (only --session, --type, --id and --to apply to it)", name)
			}
		}
		over := stdinOverrides{}
		if set["session"] {
			over.session = &r.Session
		}
		if set["type"] {
			over.typ = &r.Type
		}
		if set["id"] {
			over.id = &r.ID
		}
		line, ev, err = eventFromJSON(e.stdin, r.To, over, func(msg string) {
			fmt.Fprintf(e.stderr, "continuity log: warning: %s\n", msg)
		})
	case len(pos) == 0:
		line, ev, err = eventFromFlags(r)
	default:
		return usageError("unexpected arguments %q (flags describe the event, or '-' reads it from stdin)", pos)
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	to, err := logFileName(r.To, ev)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := p.layout().PrepareLogs(); err != nil {
		return err
	}
	path := filepath.Join(p.logs, to)
	if set["id"] || ev.ID != "" && len(pos) == 1 {
		// An id the producer chose: a retry gets its first line back.
		prev, err := logformat.FindLogged(path, line)
		if err != nil {
			return err
		}
		if prev != nil {
			if !prev.Same {
				return &exitError{code: 2, err: fmt.Errorf("id %q is already used by another event at %s:%d: give each event its own id (a retry repeats the same event)", ev.ID, to, prev.Line)}
			}
			fmt.Fprintf(e.stderr, "continuity log: already logged at %s:%d (the same event, id %q): not written again\n", path, prev.Line, ev.ID)
			shown, _ := redact.FromEnv().RedactJSON(append(prev.Text, '\n'))
			_, err = e.stdout.Write(shown)
			return err
		}
	}
	if err := logformat.AppendLine(path, line); err != nil {
		return fmt.Errorf("the event was not written whole: %w", err)
	}
	// Where it went (the workspace is found from the current folder), on
	// stderr: stdout is the event.
	fmt.Fprintf(e.stderr, "continuity log: written to %s (workspace %s)\n", path, p.root)
	// The line goes back into the agent's context: print it as it is
	// stored, without the secrets the index will not keep either.
	shown, _ := redact.FromEnv().RedactJSON(line)
	_, err = e.stdout.Write(shown)
	return err
}

// eventFromFlags builds, fills and validates an event from flags. Its type
// must be one of protocol version 1: other types are written as JSON on
// stdin, where a mistyped flag cannot make one.
func eventFromFlags(r logRequest) ([]byte, logformat.Event, error) {
	if !slices.Contains(logformat.KnownTypes, r.Type) {
		if k := logformat.LooksLikeKnownType(r.Type); k != "" {
			return nil, logformat.Event{}, fmt.Errorf("--type %q: did you mean %q?", r.Type, k)
		}
		return nil, logformat.Event{}, fmt.Errorf("--type %q: want exchange, context_reset or session_resume (an event of another type is written as JSON on stdin: continuity log -)", r.Type)
	}
	ev := logformat.Event{
		Type: r.Type, SessionID: r.Session, ID: r.ID, User: r.User, AI: r.AI, Reason: r.Reason,
		PreviousSession: r.Previous, NewSession: r.New, Files: r.Files,
		Timestamp: time.Now().UTC(),
	}
	if ev.Type == logformat.TypeSessionResume && ev.SessionID == "" {
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
	return validate(line)
}

// stdinOverrides are the flags that apply to an event read from stdin
// (nil when not given): each fills its field when the event lacks it, and
// is an error when the event has another value.
type stdinOverrides struct {
	session, typ, id *string
}

// eventFromJSON reads one JSON object, applies the overrides, fills
// timestamp and id when missing and keeps every other field as given. What
// it reads otherwise than written (the alias "assistant", a timestamp
// without offset) it writes unambiguously ("ai", the offset), and says so
// through warn, as it does for fields protocol version 1 does not know.
func eventFromJSON(r io.Reader, to string, over stdinOverrides, warn func(string)) ([]byte, logformat.Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(logformat.DefaultLimits.MaxLineBytes)+1))
	if err != nil {
		return nil, logformat.Event{}, fmt.Errorf("read stdin: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) > logformat.DefaultLimits.MaxLineBytes {
		return nil, logformat.Event{}, fmt.Errorf("event on stdin is over %d bytes", logformat.DefaultLimits.MaxLineBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		// Parse says what is wrong, with the offset.
		_, perr := logformat.Parse(data, to, time.Now())
		if perr == nil {
			perr = err
		}
		return nil, logformat.Event{}, fmt.Errorf("event on stdin: %w", perr)
	}
	// The overrides: added as text at the front of the object, so that the
	// line is then checked as written (duplicate keys, UTF-8).
	type override struct {
		key, flag string
		val       *string
	}
	var add []byte
	var nulls []override
	for _, o := range []override{{"session_id", "session", over.session}, {"type", "type", over.typ}, {"id", "id", over.id}} {
		if o.val == nil {
			continue
		}
		if raw, ok := obj[o.key]; ok && string(raw) != "null" {
			var have string
			if json.Unmarshal(raw, &have) != nil || have != *o.val {
				return nil, logformat.Event{}, fmt.Errorf("--%s %q but the event on stdin has %s %s: give one or make them agree", o.flag, *o.val, o.key, raw)
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
			return nil, logformat.Event{}, fmt.Errorf("event on stdin: %w", err)
		}
	}
	// Validate as written (duplicate keys, UTF-8, types). A null
	// session_id is absent to Parse, which then takes the session from the
	// file name: the one --session gives.
	name := to
	if name == "" && over.session != nil {
		name = "session-" + *over.session + ".jsonl"
	}
	ev, err := logformat.Parse(data, name, time.Now())
	var le *logformat.Error
	if name == "" && errors.As(err, &le) && le.Kind == logformat.KindMissingField && le.Field == "session_id" {
		// No file name to take it from: say what the user can give.
		return nil, logformat.Event{}, errors.New(`event on stdin: no "session_id": add one to the event, or give --session ID`)
	}
	if err != nil {
		return nil, logformat.Event{}, fmt.Errorf("event on stdin: %w", err)
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
		warn(fmt.Sprintf("fields %q are not part of protocol version 1 for type %q: kept in the stored line, but not searched nor shown by resume", ev.UnknownFields, ev.Type))
	}
	line, err := json.Marshal(obj)
	if err != nil {
		return nil, logformat.Event{}, err
	}
	return validate(append(line, '\n'))
}

// validate parses the line to be written exactly as the daemon will.
func validate(line []byte) ([]byte, logformat.Event, error) {
	ev, err := logformat.Parse(bytes.TrimSuffix(line, []byte("\n")), "", time.Now())
	if err != nil {
		return nil, ev, err
	}
	if len(line) > logformat.DefaultLimits.MaxLineBytes {
		return nil, ev, fmt.Errorf("event is %d bytes, over the %d-byte line limit", len(line), logformat.DefaultLimits.MaxLineBytes)
	}
	return line, ev, nil
}

// logFileName is the file an event goes to: --to, else
// session-<session>.jsonl, with the machine in the name
// (<name>~<machine>.jsonl, logformat.MachineName) unless --to gives one:
// two machines sharing the logs never append to the same file.
func logFileName(to string, ev logformat.Event) (string, error) {
	if to != "" {
		if to != filepath.Base(to) || !strings.HasSuffix(to, ".jsonl") || strings.HasPrefix(to, ".") {
			return "", fmt.Errorf("--to %q: want a plain file name ending in .jsonl (it is created in the logs folder)", to)
		}
		if !strings.Contains(to, logformat.MachineSep) {
			// x.jsonl is written as x~<machine>.jsonl: one writer per file
			// across the machines sharing the logs.
			return logformat.MachineLogName(strings.TrimSuffix(to, ".jsonl"), logformat.MachineName()), nil
		}
		return to, nil
	}
	if ev.SessionID == "" {
		return "", errors.New("no session: give --session (or --to FILE)")
	}
	return logformat.MachineLogName("session-"+ev.SessionID, logformat.MachineName()), nil
}
