package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/redact"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

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
	var r logformat.Request
	var to string // file name in the logs folder; default session-<id>~<machine>.jsonl
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
	fs.StringVar(&to, "to", "", "log file name inside the logs folder (default session-<session>~<machine>.jsonl, the machine from $CONTINUITY_MACHINE, else the host name)")
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
		over := logformat.Overrides{}
		if set["session"] {
			over.Session = &r.Session
		}
		if set["type"] {
			over.Type = &r.Type
		}
		if set["id"] {
			over.ID = &r.ID
		}
		line, ev, err = logformat.BuildFromJSON(e.stdin, to, over, func(msg string) {
			fmt.Fprintf(e.stderr, "continuity log: warning: %s\n", msg)
		})
	case len(pos) == 0:
		line, ev, err = logformat.Build(r)
	default:
		return usageError("unexpected arguments %q (flags describe the event, or '-' reads it from stdin)", pos)
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if to, err = logformat.FileName(to, ev); err != nil {
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
