package logformat

import "strings"

// LogName is what a file name says of a log: its base name (the live
// log's name, "x.jsonl") and, for a rotated log, its rotation number and
// whether it is gzip-compressed (protocol.md, section 8, "Rotation").
type LogName struct {
	Base       string // the live log's name, ending in .jsonl
	Rotation   int    // N of x.jsonl.N and x.jsonl.N.gz; 0 otherwise
	Compressed bool   // ends in .gz
}

// Live reports whether the name is the live log's (x.jsonl).
func (n LogName) Live() bool { return n.Rotation == 0 && !n.Compressed }

// Age orders the logs of one base name, oldest first when sorted by
// descending Age: x.jsonl.N(.gz) is N+1, x.jsonl.gz 1, x.jsonl 0.
func (n LogName) Age() int {
	switch {
	case n.Rotation > 0:
		return n.Rotation + 1
	case n.Compressed:
		return 1
	}
	return 0
}

// maxRotationDigits bounds N in x.jsonl.N: a longer number is no
// logrotate suffix (a process id, a time stamp of a temporary file).
const maxRotationDigits = 4

// ParseLogName reads a file name of the logs folder: "x.jsonl" (the live
// log), "x.jsonl.N" and "x.jsonl.N.gz" (rotated by logrotate or by hand:
// N is 1 to 4 digits, not starting with 0) and "x.jsonl.gz" (compressed);
// x is not empty. ok is false for any other name, which is not a log.
func ParseLogName(name string) (n LogName, ok bool) {
	rest := name
	rest, n.Compressed = strings.CutSuffix(rest, ".gz")
	if i := strings.LastIndexByte(rest, '.'); i > 0 && !strings.HasSuffix(rest, ".jsonl") {
		num := rest[i+1:]
		if len(num) == 0 || len(num) > maxRotationDigits || num[0] == '0' {
			return LogName{}, false
		}
		for _, c := range []byte(num) {
			if c < '0' || c > '9' {
				return LogName{}, false
			}
			n.Rotation = n.Rotation*10 + int(c-'0')
		}
		rest = rest[:i]
	}
	if !strings.HasSuffix(rest, ".jsonl") || len(rest) == len(".jsonl") || strings.ContainsRune(rest, '/') {
		return LogName{}, false
	}
	n.Base = rest
	return n, true
}
