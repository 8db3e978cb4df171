package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/praxis-os/continuity/logformat"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// logRequest is what `continuity log` (and the MCP log tool) append.
type logRequest struct {
	Type, Session, User, AI, Reason, Previous, New, ID, Metadata string
	Files                                                        []string
	To                                                           string // file name in the logs folder; default session-<id>.jsonl
}

func runLog(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log [flags] [-]", `
Append one event to the workspace's logs: validated against protocol.md,
with timestamp and id (a UUID) filled in when missing, written with a single
O_APPEND write so concurrent writers never interleave, and printed on stdout.
The file is .praxis-os/.conversations/session-<session>.jsonl unless --to
names another. With "-", the event is read as one JSON object from stdin
(unknown fields are kept).

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
	fs.StringVar(&r.Type, "type", logformat.TypeExchange, "event type: exchange, context_reset or session_resume")
	fs.StringVar(&r.Session, "session", "", "session id (exchange, context_reset)")
	fs.StringVar(&r.User, "user", "", "the user's text (exchange)")
	fs.StringVar(&r.AI, "ai", "", "the assistant's text (exchange)")
	fs.StringVar(&r.Reason, "reason", "", "why the context was reset (context_reset)")
	fs.StringVar(&r.Previous, "previous", "", "the session resumed (session_resume)")
	fs.StringVar(&r.New, "new", "", "the new session (session_resume)")
	fs.StringVar(&r.ID, "id", "", "producer idempotency key (default: a new UUID)")
	fs.StringVar(&r.Metadata, "metadata", "", "a JSON object attached to the event")
	fs.Var(&files, "file", "a path the event refers to (repeatable)")
	fs.StringVar(&r.To, "to", "", "log file name inside the logs folder (default session-<session>.jsonl)")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	r.Files = files
	p, err := e.paths()
	if err != nil {
		return err
	}
	var line []byte
	var ev logformat.Event
	switch {
	case len(pos) == 1 && pos[0] == "-":
		line, ev, err = eventFromJSON(e.stdin, r.To)
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
	if err := logformat.AppendLine(filepath.Join(p.logs, to), line); err != nil {
		return err
	}
	_, err = e.stdout.Write(line)
	return err
}

// eventFromFlags builds, fills and validates an event from flags.
func eventFromFlags(r logRequest) ([]byte, logformat.Event, error) {
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

// eventFromJSON reads one JSON object, fills timestamp and id when missing
// and keeps every other field as given.
func eventFromJSON(r io.Reader, to string) ([]byte, logformat.Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(logformat.DefaultLimits.MaxLineBytes)+1))
	if err != nil {
		return nil, logformat.Event{}, fmt.Errorf("read stdin: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) > logformat.DefaultLimits.MaxLineBytes {
		return nil, logformat.Event{}, fmt.Errorf("event on stdin is over %d bytes", logformat.DefaultLimits.MaxLineBytes)
	}
	// Validate first, as written (duplicate keys, UTF-8, types).
	if _, err := logformat.Parse(data, to, time.Now()); err != nil {
		return nil, logformat.Event{}, fmt.Errorf("event on stdin: %w", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, logformat.Event{}, fmt.Errorf("event on stdin: %w", err)
	}
	if _, ok := obj["timestamp"]; !ok {
		obj["timestamp"], _ = json.Marshal(time.Now().UTC().Format(time.RFC3339Nano))
	}
	if _, ok := obj["id"]; !ok {
		obj["id"], _ = json.Marshal(uuid.NewString())
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
// session-<session>.jsonl.
func logFileName(to string, ev logformat.Event) (string, error) {
	if to != "" {
		if to != filepath.Base(to) || !strings.HasSuffix(to, ".jsonl") || strings.HasPrefix(to, ".") {
			return "", fmt.Errorf("--to %q: want a plain file name ending in .jsonl (it is created in the logs folder)", to)
		}
		return to, nil
	}
	if ev.SessionID == "" {
		return "", errors.New("no session: give --session (or --to FILE)")
	}
	return "session-" + ev.SessionID + ".jsonl", nil
}
