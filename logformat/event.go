// Package logformat parses and validates the conversation-log protocol
// (protocol.md at the repository root): one JSON object per line.
package logformat

import (
	"encoding/json"
	"time"
)

// Event types of protocol version 1.
const (
	TypeExchange      = "exchange"
	TypeContextReset  = "context_reset"
	TypeSessionResume = "session_resume"
)

// Version is the protocol version this package implements.
const Version = 1

// Event is one validated protocol line.
type Event struct {
	V    int    // protocol version, 1 when absent
	Type string // as written; may be a type this version does not know

	// Timestamp is when the event happened (UTC). When the line has none,
	// it is the time passed to Parse and TimestampInferred is set.
	Timestamp         time.Time
	TimestampInferred bool
	// TimestampNoOffset is set when the timestamp had no UTC offset (as
	// Python's datetime.isoformat() writes): it was read in the local
	// time zone (time.Local) and converted to UTC.
	TimestampNoOffset bool

	// SessionID is the event's session. For exchange and context_reset
	// lines without one it is derived from the file name
	// (session-<id>.jsonl or <id>.jsonl) and SessionFromFile is set; for
	// session_resume it defaults to NewSession.
	SessionID       string
	SessionFromFile bool

	// ID is the producer's idempotency key, "" when absent. Events with the
	// same ID are indexed once.
	ID string

	User string // exchange
	AI   string // exchange
	// AIFromAlias is set when AI was read from "assistant", the alias of
	// "ai".
	AIFromAlias bool

	Reason string // context_reset

	PreviousSession string // session_resume
	NewSession      string // session_resume

	Files    []string        // optional paths the event refers to
	Metadata json.RawMessage // optional JSON object, nil when absent

	// KnownType is false for a type this version does not know; such
	// events are kept (forward compatibility), not rejected.
	KnownType bool
	// UnknownFields lists top-level fields this version does not know,
	// sorted; they are kept in the raw line, not rejected.
	UnknownFields []string
}
