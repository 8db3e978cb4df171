package logformat

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// sessionIDChars documents the session id charset in error reasons.
const sessionIDChars = "A-Z a-z 0-9 . _ : @ + -"

// ValidSessionID reports whether s is a valid session id under
// DefaultLimits: 1 to 128 bytes of [A-Za-z0-9._:@+-], starting with a letter
// or digit. The error is an *Error with Field "session_id".
func ValidSessionID(s string) error {
	if err := checkSessionID(s, "session_id", DefaultLimits.MaxSessionIDLen); err != nil {
		return err
	}
	return nil
}

// checkSessionID validates s as the session id in field. It returns an
// *Error (never a typed nil in an interface: callers test the pointer).
func checkSessionID(s, field string, maxLen int) *Error {
	if s == "" {
		return invalidField(field, "empty")
	}
	if len(s) > maxLen {
		return tooLarge(field, "%d bytes, longer than the limit of %d", len(s), maxLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) {
			continue
		}
		if i == 0 {
			return invalidField(field, "%s must start with a letter or digit", excerpt(s))
		}
		switch c {
		case '.', '_', ':', '@', '+', '-':
			continue
		}
		return invalidField(field, "%s has a character outside %s at byte %d", excerpt(s), sessionIDChars, i)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// SessionFromFileName derives a session id from a log file's name:
// "session-<id>.jsonl" gives <id>, any other "<id>.jsonl" gives <id>, and
// a rotated log ("<id>.jsonl.1", "<id>.jsonl.2.gz") what its live log's
// name gives. A path is reduced to its base name first. The error says why the name gives
// no valid id.
func SessionFromFileName(name string) (string, error) {
	id, err := sessionFromFileName(name, DefaultLimits.MaxSessionIDLen)
	if err != nil {
		return "", errors.New(err.Error())
	}
	return id, nil
}

func sessionFromFileName(name string, maxLen int) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		name = filepath.Base(name)
	}
	// A rotated log (x.jsonl.1, x.jsonl.2.gz) is x.jsonl's.
	if ln, ok := ParseLogName(name); ok {
		name = ln.Base
	}
	// A sync tool's conflict copy is its file's; x~machine.jsonl is x's.
	name, _ = ConflictCopy(name)
	if i := strings.Index(name, MachineSep); i > 0 && strings.HasSuffix(name, ".jsonl") {
		name = name[:i] + ".jsonl"
	}
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return "", fmt.Errorf("file name %s does not end in .jsonl", excerpt(name))
	}
	id := base
	if rest, ok := strings.CutPrefix(base, "session-"); ok {
		id = rest
	}
	if err := checkSessionID(id, "", maxLen); err != nil {
		return "", fmt.Errorf("file name %s gives session id %s, which is invalid: %s", excerpt(name), excerpt(id), err.Reason)
	}
	return id, nil
}
