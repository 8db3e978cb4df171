package index

import "github.com/praxis-os/continuity/logformat"

// CounterRedactions counts the secrets redacted before storage.
const CounterRedactions = "redactions"

// redactEvent removes secrets (see package redact) from everything of an
// event that is stored or embedded: its texts, its metadata and the raw
// line. Vectors are computed from the stored texts, so they never see a
// secret either. It returns the raw line to store and the number of
// redactions (the larger of the raw line's and the fields' counts: the
// same secret usually appears in both).
func (db *DB) redactEvent(ev *logformat.Event, raw []byte) ([]byte, int) {
	r := db.redactor
	if r == nil {
		return raw, 0
	}
	var fields, n int
	ev.User, n = r.Redact(ev.User)
	fields += n
	ev.AI, n = r.Redact(ev.AI)
	fields += n
	ev.Reason, n = r.Redact(ev.Reason)
	fields += n
	if len(ev.Metadata) > 0 {
		ev.Metadata, n = r.RedactJSON(ev.Metadata)
		fields += n
	}
	// RedactJSON: a secret spelled with JSON escapes ("\/", "\u0041")
	// is found in the decoded fields, and must not stay in the raw line.
	raw, n = r.RedactJSON(raw)
	return raw, max(n, fields)
}

// redactBytes redacts a rejected line's excerpt.
func (db *DB) redactBytes(b []byte) []byte {
	out, _ := db.redactor.RedactJSON(b)
	return out
}
