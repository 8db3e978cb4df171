package logformat

import (
	"fmt"
	"strconv"
)

// Limits bounds what a line may hold. Every limit is in bytes unless said
// otherwise, and is documented in protocol.md. A zero or negative field
// means the DefaultLimits value.
type Limits struct {
	// MaxLineBytes is the largest line, not counting its "\n".
	MaxLineBytes int
	// MaxSessionIDLen is the longest session_id (and previous_session,
	// new_session).
	MaxSessionIDLen int
	// MaxIDLen is the longest id.
	MaxIDLen int
	// MaxTypeLen is the longest type.
	MaxTypeLen int
	// MaxFiles is the most entries in files.
	MaxFiles int
	// MaxFileLen is the longest entry in files.
	MaxFileLen int
	// MaxDepth is the deepest nesting of objects and arrays; the line's own
	// object is depth 1, so metadata's object is depth 2.
	MaxDepth int
}

// DefaultLimits are the limits Parse, Validate and MarshalLine use.
var DefaultLimits = Limits{
	MaxLineBytes:    1 << 20,
	MaxSessionIDLen: 128,
	MaxIDLen:        256,
	MaxTypeLen:      64,
	MaxFiles:        1000,
	MaxFileLen:      4096,
	MaxDepth:        1000,
}

// withDefaults replaces zero and negative fields by DefaultLimits values.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxLineBytes, d.MaxLineBytes)
	set(&l.MaxSessionIDLen, d.MaxSessionIDLen)
	set(&l.MaxIDLen, d.MaxIDLen)
	set(&l.MaxTypeLen, d.MaxTypeLen)
	set(&l.MaxFiles, d.MaxFiles)
	set(&l.MaxFileLen, d.MaxFileLen)
	set(&l.MaxDepth, d.MaxDepth)
	return l
}

// WithLineBytes is l with MaxLineBytes raised to n when n is larger: the
// limits of a line a reader already held to a maximum line size of its
// own (the watcher, to the daemon's --max-line-bytes), whose other
// limits still apply. Without it a --max-line-bytes above the default
// would let the reader keep a line the parser then rejects.
func (l Limits) WithLineBytes(n int) Limits {
	l = l.withDefaults()
	if n > l.MaxLineBytes {
		l.MaxLineBytes = n
	}
	return l
}

// OversizeReason is the reject reason of a line of n bytes (not counting
// its "\n") over the maximum line size limit (0: not known): it names the
// limit and the flag that raises it.
func OversizeReason(n int64, limit int) string {
	size := fmt.Sprintf("line of %d bytes (%s)", n, mib(n))
	if limit <= 0 {
		size += " exceeds the maximum line size"
	} else {
		size += fmt.Sprintf(" exceeds the maximum line size of %d bytes (%s)", limit, mib(int64(limit)))
	}
	return size + fmt.Sprintf("; to index such lines, run the daemon (or ingest) with --max-line-bytes %d or more "+
		"(a line already rejected is read again when the index is rebuilt from the logs: delete .praxis-os/.cache, then run ingest or the daemon with the flag)", n)
}

// mib writes n bytes in MiB, or KiB below one MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
