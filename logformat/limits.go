package logformat

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
