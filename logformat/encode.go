package logformat

import (
	"bytes"
	"encoding/json"
	"time"
)

// wireEvent is the field order of an encoded line.
type wireEvent struct {
	V               int             `json:"v,omitempty"`
	Type            string          `json:"type"`
	Timestamp       string          `json:"timestamp"`
	SessionID       string          `json:"session_id,omitempty"`
	ID              string          `json:"id,omitempty"`
	User            string          `json:"user,omitempty"`
	AI              string          `json:"ai,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	PreviousSession string          `json:"previous_session,omitempty"`
	NewSession      string          `json:"new_session,omitempty"`
	Files           []string        `json:"files,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
}

// MarshalLine validates e (see Validate) and encodes it as one compact JSON
// object followed by "\n", no longer than DefaultLimits.MaxLineBytes. The
// fields come in a fixed order: v (only when above 1), type, timestamp
// (RFC 3339 in UTC, nanoseconds as needed), session_id, id, the fields of
// the type, files, metadata (compacted). encoding/json escapes the strings,
// so any text, with quotes, backslashes, newlines or any Unicode, is safe;
// "<", ">" and "&" are kept as they are. Parse gives back e, except that
// TimestampInferred, SessionFromFile and UnknownFields are cleared.
func (e Event) MarshalLine() ([]byte, error) {
	return e.MarshalLineWithLimits(DefaultLimits)
}

// MarshalLineWithLimits is MarshalLine under lim.
func (e Event) MarshalLineWithLimits(lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	if err := validate(&e, lim); err != nil {
		return nil, err
	}
	w := wireEvent{
		Type:            e.Type,
		Timestamp:       e.Timestamp.UTC().Format(time.RFC3339Nano),
		SessionID:       e.SessionID,
		ID:              e.ID,
		User:            e.User,
		AI:              e.AI,
		Reason:          e.Reason,
		PreviousSession: e.PreviousSession,
		NewSession:      e.NewSession,
		Files:           e.Files,
		Metadata:        e.Metadata,
	}
	if e.V > 1 {
		w.V = e.V
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil { // appends "\n"
		return nil, err
	}
	line := buf.Bytes()
	if n := len(line) - 1; n > lim.MaxLineBytes {
		return nil, tooLarge("", "line is %d bytes, longer than the limit of %d", n, lim.MaxLineBytes)
	}
	return line, nil
}
