package logformat

import (
	"unicode/utf8"
)

// Validate checks that e can be written as a protocol line under
// DefaultLimits: every rule Parse applies, with no file name to derive a
// session id from (exchange and context_reset need SessionID) and no
// default for the timestamp (it must be set). V 0 means 1. Fields that do
// not belong to e.Type must be empty. Errors are *Error.
func Validate(e Event) error {
	if err := validate(&e, DefaultLimits); err != nil {
		return err
	}
	return nil
}

// ValidateWithLimits is Validate under lim.
func ValidateWithLimits(e Event, lim Limits) error {
	if err := validate(&e, lim.withDefaults()); err != nil {
		return err
	}
	return nil
}

func validate(e *Event, lim Limits) *Error {
	if e.V < 0 {
		return invalidField(fV, "%d is less than 1", e.V)
	}
	if err := checkType(e.Type, lim.MaxTypeLen); err != nil {
		return err
	}
	if e.Timestamp.IsZero() {
		return missingField(fTimestamp, "missing")
	}
	if _, err := checkTimeRange(e.Timestamp.UTC()); err != nil {
		return err
	}
	if e.SessionID != "" {
		if err := checkSessionID(e.SessionID, fSessionID, lim.MaxSessionIDLen); err != nil {
			return err
		}
	} else if e.Type == TypeExchange || e.Type == TypeContextReset {
		return missingField(fSessionID, "missing")
	}
	if e.ID != "" {
		if err := checkUTF8(e.ID, fID); err != nil {
			return err
		}
		if err := checkID(e.ID, lim.MaxIDLen); err != nil {
			return err
		}
	}
	if len(e.Files) > lim.MaxFiles {
		return tooLarge(fFiles, "more than %d entries", lim.MaxFiles)
	}
	for i, f := range e.Files {
		if err := checkUTF8(f, fileField(i)); err != nil {
			return err
		}
		if err := checkFile(f, i, lim.MaxFileLen); err != nil {
			return err
		}
	}
	if len(e.Metadata) > 0 {
		if err := checkMetadata(e.Metadata, lim); err != nil {
			return err
		}
	}

	// Type-specific fields.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{fUser, e.User != ""},
		{fAI, e.AI != ""},
		{fReason, e.Reason != ""},
		{fPreviousSession, e.PreviousSession != ""},
		{fNewSession, e.NewSession != ""},
	} {
		if f.set && !slotBelongs(slotOf([]byte(f.name)), e.Type) {
			return invalidField(f.name, "set, but not a field of type %s", excerpt(e.Type))
		}
	}
	switch e.Type {
	case TypeExchange:
		if err := checkUTF8(e.User, fUser); err != nil {
			return err
		}
		if err := checkUTF8(e.AI, fAI); err != nil {
			return err
		}
		if err := checkExchangeText(e.User, e.AI, e.User != "" || e.AI != ""); err != nil {
			return err
		}
	case TypeContextReset:
		if err := checkUTF8(e.Reason, fReason); err != nil {
			return err
		}
	case TypeSessionResume:
		if e.PreviousSession == "" {
			return missingField(fPreviousSession, "missing")
		}
		if e.NewSession == "" {
			return missingField(fNewSession, "missing")
		}
		if err := checkResume(e.PreviousSession, e.NewSession, lim.MaxSessionIDLen); err != nil {
			return err
		}
	}
	return nil
}

func checkUTF8(s, field string) *Error {
	if utf8.ValidString(s) {
		return nil
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return newError(KindInvalidUTF8, field, "invalid UTF-8 at byte %d", i)
			}
		}
	}
	return newError(KindInvalidUTF8, field, "invalid UTF-8")
}

// checkMetadata checks that raw is one JSON object with no duplicate keys,
// as Parse would accept it.
func checkMetadata(raw []byte, lim Limits) *Error {
	if !utf8.Valid(raw) {
		return newError(KindInvalidUTF8, fMetadata, "%s", invalidUTF8(raw).Reason)
	}
	s := scanner{data: raw, maxDepth: lim.MaxDepth - 1}
	kind, err := s.top()
	if err != nil {
		e := err.toError()
		if e.Field == "" {
			e.Field = fMetadata
		} else {
			e.Field = fMetadata + "." + e.Field
		}
		return e
	}
	if kind != kindObject {
		return invalidField(fMetadata, "must be an object, not %s", kind)
	}
	return nil
}
