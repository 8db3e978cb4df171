package logformat

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Parse validates one line of a conversation log under DefaultLimits and
// returns its event. See ParseWithLimits.
func Parse(line []byte, fileName string, now time.Time) (Event, error) {
	return ParseWithLimits(line, fileName, now, DefaultLimits)
}

// ParseWithLimits validates one line of a conversation log and returns its
// event. line is the line without its "\n"; a trailing "\r" is ignored.
// fileName is the base name of the log file, from which exchange and
// context_reset lines without session_id take theirs. now is the timestamp
// of a line without one (TimestampInferred is then set).
//
// Every validation failure is an *Error. A blank line gives KindEmpty, which
// callers skip rather than reject (see IsBlank). The event holds no
// reference to line.
func ParseWithLimits(line []byte, fileName string, now time.Time, lim Limits) (Event, error) {
	lim = lim.withDefaults()
	if len(line) > lim.MaxLineBytes {
		return Event{}, tooLarge("", "line is %d bytes, longer than the limit of %d", len(line), lim.MaxLineBytes)
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if IsBlank(line) {
		return Event{}, &Error{Kind: KindEmpty, Reason: "blank line"}
	}
	if !utf8.Valid(line) {
		return Event{}, invalidUTF8(line)
	}
	if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
		return Event{}, &Error{Kind: KindInvalidJSON, Reason: "invalid JSON: byte order mark (U+FEFF) at byte 0 of a line that does not start the file (only one at the very start of a file is skipped): remove it, or write UTF-8 without it"}
	}
	s := scannerPool.Get().(*scanner)
	defer s.release()
	s.data, s.pos, s.maxDepth = line, 0, lim.MaxDepth
	kind, serr := s.top()
	if serr != nil {
		e := serr.toError()
		switch serr.kind {
		case KindInvalidJSON:
			if hint := shapeHint(line, -1); hint != "" {
				e.Reason = "invalid JSON: " + hint
			}
		case KindTrailingData:
			if hint := shapeHint(line, serr.off); hint != "" {
				e.Reason = hint
			}
		}
		return Event{}, e
	}
	if kind != kindObject {
		reason := "line is a JSON " + kind.String() + ", not an object"
		if hint := shapeHint(line, -1); hint != "" {
			reason = "line is not an object: it " + hint
		}
		return Event{}, &Error{Kind: KindNotObject, Reason: reason}
	}
	p := parser{line: line, lim: lim}
	e, err := p.event(s.members, fileName, now)
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// scannerPool saves allocating a scanner, with its member buffer, per line.
var scannerPool = sync.Pool{New: func() any { return new(scanner) }}

// release drops the references to the line and returns s to the pool.
func (s *scanner) release() {
	clear(s.members)
	s.data, s.members = nil, nil
	scannerPool.Put(s)
}

// IsBlank reports whether line holds only spaces, tabs and line ends. The
// daemon skips such lines; they are not rejects.
func IsBlank(line []byte) bool {
	for _, c := range line {
		if !isWS(c) {
			return false
		}
	}
	return true
}

func invalidUTF8(line []byte) *Error {
	off := 0
	for off < len(line) {
		r, n := utf8.DecodeRune(line[off:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		off += n
	}
	return &Error{Kind: KindInvalidUTF8, Reason: "invalid UTF-8 at byte " + strconv.Itoa(off)}
}

// Top-level field names.
const (
	fType            = "type"
	fV               = "v"
	fTimestamp       = "timestamp"
	fSessionID       = "session_id"
	fID              = "id"
	fFiles           = "files"
	fMetadata        = "metadata"
	fUser            = "user"
	fAI              = "ai"
	fReason          = "reason"
	fPreviousSession = "previous_session"
	fNewSession      = "new_session"
	// fAssistant is an alias of ai in an exchange: the role name chat
	// APIs use, and the most common producer mistake.
	fAssistant = "assistant"
)

// Slots of the known fields.
const (
	sType = iota
	sV
	sTimestamp
	sSessionID
	sID
	sFiles
	sMetadata
	sUser
	sAI
	sReason
	sPrevious
	sNew
	sAssistant
	nSlots
)

// slotOf returns the slot of a known field name, or -1.
func slotOf(key []byte) int {
	switch string(key) {
	case fType:
		return sType
	case fV:
		return sV
	case fTimestamp:
		return sTimestamp
	case fSessionID:
		return sSessionID
	case fID:
		return sID
	case fFiles:
		return sFiles
	case fMetadata:
		return sMetadata
	case fUser:
		return sUser
	case fAI:
		return sAI
	case fReason:
		return sReason
	case fPreviousSession:
		return sPrevious
	case fNewSession:
		return sNew
	case fAssistant:
		return sAssistant
	}
	return -1
}

// slotBelongs reports whether the field in slot is defined for type typ:
// common fields are, type-specific ones only for their own type.
func slotBelongs(slot int, typ string) bool {
	switch slot {
	case sUser, sAI, sAssistant:
		return typ == TypeExchange
	case sReason:
		return typ == TypeContextReset
	case sPrevious, sNew:
		return typ == TypeSessionResume
	}
	return true // common fields
}

type parser struct {
	line  []byte
	lim   Limits
	slots [nSlots]*member // nil when absent or null
}

func (p *parser) raw(m *member) []byte { return p.line[m.start:m.end] }

// str returns the string in slot (present false when absent or null).
func (p *parser) str(slot int, field string) (v string, present bool, err *Error) {
	m := p.slots[slot]
	if m == nil {
		return "", false, nil
	}
	if m.kind != kindString {
		return "", true, invalidField(field, "must be a string, not %s", m.kind)
	}
	return decodeString(p.raw(m)), true, nil
}

// typ is str for the type, without allocating for the known types.
func (p *parser) typ() (string, bool, *Error) {
	if m := p.slots[sType]; m != nil && m.kind == kindString {
		switch string(p.raw(m)) {
		case `"` + TypeExchange + `"`:
			return TypeExchange, true, nil
		case `"` + TypeContextReset + `"`:
			return TypeContextReset, true, nil
		case `"` + TypeSessionResume + `"`:
			return TypeSessionResume, true, nil
		}
	}
	return p.str(sType, fType)
}

// event reads the event of a line whose top-level members are members.
// The fields are checked in a fixed order (type, v, timestamp, session_id,
// id, files, metadata, the type's own), so a line with several faults is
// always rejected for the same one.
func (p *parser) event(members []member, fileName string, now time.Time) (Event, *Error) {
	unknown := p.place(members)
	var e Event
	if err := p.eventType(&e); err != nil {
		return Event{}, err
	}
	p.unknownFields(&e, members, unknown)
	if err := p.version(&e); err != nil {
		return Event{}, err
	}
	if err := p.timestamp(&e, now); err != nil {
		return Event{}, err
	}
	sidPresent, err := p.sessionID(&e)
	if err != nil {
		return Event{}, err
	}
	if err := p.idFilesMetadata(&e); err != nil {
		return Event{}, err
	}
	if err := p.typeFields(&e, sidPresent); err != nil {
		return Event{}, err
	}
	// Session id from the file name.
	if !sidPresent && e.Type != TypeSessionResume {
		id, ferr := sessionFromFileName(fileName, p.lim.MaxSessionIDLen)
		switch {
		case ferr == nil:
			e.SessionID, e.SessionFromFile = id, true
		case e.KnownType:
			return Event{}, missingField(fSessionID, "missing, and the file name gives none: %v", ferr)
		}
	}
	return e, nil
}

// place puts each known, non-null member in its slot, and returns the
// unknown ones.
func (p *parser) place(members []member) (unknown []*member) {
	for i := range members {
		m := &members[i]
		slot := slotOf(m.key)
		if slot < 0 {
			unknown = append(unknown, m)
			continue
		}
		if m.kind != kindNull {
			p.slots[slot] = m
		}
	}
	return unknown
}

// eventType reads the type: required, known or else not a near miss of a
// known one.
func (p *parser) eventType(e *Event) *Error {
	typ, present, err := p.typ()
	if err != nil {
		return err
	}
	if !present {
		return missingField(fType, "missing")
	}
	if err := checkType(typ, p.lim.MaxTypeLen); err != nil {
		return err
	}
	e.Type = typ
	e.KnownType = typ == TypeExchange || typ == TypeContextReset || typ == TypeSessionResume
	if !e.KnownType {
		if known := LooksLikeKnownType(typ); known != "" {
			return invalidField(fType, "unknown type %s looks like a typo of %q: write %q (a type this close to a known one is rejected, not kept as an unknown type)",
				excerpt(typ), known, known)
		}
	}
	return nil
}

// unknownFields sets e's unknown fields, sorted: the unknown members, and
// the type-specific fields of other types (taken out of their slots).
func (p *parser) unknownFields(e *Event, members []member, unknown []*member) {
	for i := range members {
		m := &members[i]
		if slot := slotOf(m.key); slot >= 0 && !slotBelongs(slot, e.Type) {
			unknown = append(unknown, m)
			p.slots[slot] = nil
		}
	}
	if len(unknown) > 0 {
		e.UnknownFields = make([]string, len(unknown))
		for i, m := range unknown {
			e.UnknownFields[i] = string(m.key)
		}
		slices.Sort(e.UnknownFields)
	}
}

// version reads v (default Version).
func (p *parser) version(e *Event) *Error {
	e.V = Version
	if m := p.slots[sV]; m != nil {
		var err *Error
		if e.V, err = parseVersion(m.kind, string(p.raw(m))); err != nil {
			return err
		}
	}
	return nil
}

// timestamp reads the timestamp: an RFC 3339 string or a number of Unix
// seconds or milliseconds; now when absent (TimestampInferred).
func (p *parser) timestamp(e *Event, now time.Time) *Error {
	m := p.slots[sTimestamp]
	if m == nil {
		e.Timestamp = now.Round(0).UTC()
		e.TimestampInferred = true
		return nil
	}
	var err *Error
	switch m.kind {
	case kindString:
		raw := p.raw(m)
		if bytes.IndexByte(raw, '\\') < 0 {
			e.Timestamp, e.TimestampNoOffset, err = parseTimeBytes(raw[1 : len(raw)-1])
		} else {
			e.Timestamp, e.TimestampNoOffset, err = parseTimeString(decodeString(raw))
		}
	case kindNumber:
		e.Timestamp, err = parseTimeNumber(string(p.raw(m)))
	default:
		err = invalidField(fTimestamp, "must be an RFC 3339 string or a number of Unix seconds or milliseconds, not %s", m.kind)
	}
	return err
}

// sessionID reads and checks session_id, when present; a missing one is
// derived or defaulted later.
func (p *parser) sessionID(e *Event) (present bool, err *Error) {
	sid, present, err := p.str(sSessionID, fSessionID)
	if err != nil {
		return false, err
	}
	if present {
		if err := checkSessionID(sid, fSessionID, p.lim.MaxSessionIDLen); err != nil {
			return false, err
		}
		e.SessionID = sid
	}
	return present, nil
}

// idFilesMetadata reads the optional common fields id, files and
// metadata.
func (p *parser) idFilesMetadata(e *Event) *Error {
	id, present, err := p.str(sID, fID)
	if err != nil {
		return err
	}
	if present {
		if err := checkID(id, p.lim.MaxIDLen); err != nil {
			return err
		}
		e.ID = id
	}
	if m := p.slots[sFiles]; m != nil {
		if e.Files, err = p.files(m); err != nil {
			return err
		}
	}
	if m := p.slots[sMetadata]; m != nil {
		if m.kind != kindObject {
			return invalidField(fMetadata, "must be an object, not %s", m.kind)
		}
		e.Metadata = append([]byte(nil), p.raw(m)...)
	}
	return nil
}

// typeFields reads the fields of e's type. A session_resume without
// session_id belongs to its new session.
func (p *parser) typeFields(e *Event, sidPresent bool) *Error {
	var err *Error
	switch e.Type {
	case TypeExchange:
		return p.exchange(e)
	case TypeContextReset:
		e.Reason, _, err = p.str(sReason, fReason)
	case TypeSessionResume:
		if e.PreviousSession, e.NewSession, err = p.resume(); err == nil && !sidPresent {
			e.SessionID = e.NewSession
		}
	}
	return err
}

// exchange reads user and ai (or its alias assistant).
func (p *parser) exchange(e *Event) *Error {
	var err *Error
	if e.User, _, err = p.str(sUser, fUser); err != nil {
		return err
	}
	if e.AI, _, err = p.str(sAI, fAI); err != nil {
		return err
	}
	if alias, present, err := p.str(sAssistant, fAssistant); err != nil {
		return err
	} else if present {
		if p.slots[sAI] != nil {
			return invalidField(fAssistant, `alias of "ai", which the line also has: write only "ai"`)
		}
		e.AI, e.AIFromAlias = alias, true
	}
	return checkExchangeText(e.User, e.AI, p.slots[sUser] != nil || p.slots[sAI] != nil || p.slots[sAssistant] != nil)
}

func (p *parser) resume() (prev, next string, err *Error) {
	var present bool
	if prev, present, err = p.str(sPrevious, fPreviousSession); err != nil {
		return
	}
	if !present {
		return "", "", missingField(fPreviousSession, "missing")
	}
	if next, present, err = p.str(sNew, fNewSession); err != nil {
		return
	}
	if !present {
		return "", "", missingField(fNewSession, "missing")
	}
	return prev, next, checkResume(prev, next, p.lim.MaxSessionIDLen)
}

func checkResume(prev, next string, maxLen int) *Error {
	if err := checkSessionID(prev, fPreviousSession, maxLen); err != nil {
		return err
	}
	if err := checkSessionID(next, fNewSession, maxLen); err != nil {
		return err
	}
	if prev == next {
		return invalidField(fNewSession, "equal to previous_session %s", excerpt(prev))
	}
	return nil
}

// files decodes and checks the files array.
func (p *parser) files(m *member) ([]string, *Error) {
	if m.kind != kindArray {
		return nil, invalidField(fFiles, "must be an array of strings, not %s", m.kind)
	}
	// The scanner validated the array: walk its elements directly.
	s := scanner{data: p.line[:m.end], pos: m.start + 1, maxDepth: p.lim.MaxDepth}
	var files []string
	for i := 0; ; i++ {
		s.skipWS()
		if s.data[s.pos] == ']' {
			break
		}
		if files == nil {
			files = make([]string, 0, 4)
		}
		if i >= p.lim.MaxFiles {
			return nil, tooLarge(fFiles, "more than %d entries", p.lim.MaxFiles)
		}
		start := s.pos
		if s.data[s.pos] != '"' {
			k, _ := s.value(1)
			return nil, invalidField(fileField(i), "must be a string, not %s", k)
		}
		s.str() // valid: cannot fail
		f := decodeString(s.data[start:s.pos])
		if err := checkFile(f, i, p.lim.MaxFileLen); err != nil {
			return nil, err
		}
		files = append(files, f)
		s.skipWS()
		if s.data[s.pos] == ',' {
			s.pos++
		}
	}
	return files, nil
}

func checkFile(f string, i, maxLen int) *Error {
	switch {
	case f == "":
		return invalidField(fileField(i), "empty")
	case len(f) > maxLen:
		return tooLarge(fileField(i), "%d bytes, longer than the limit of %d", len(f), maxLen)
	case strings.IndexByte(f, 0) >= 0:
		return invalidField(fileField(i), "contains a NUL character")
	}
	return nil
}

// fileField names entry i of files.
func fileField(i int) string { return fFiles + "[" + strconv.Itoa(i) + "]" }

// checkType checks a type name: 1 to maxLen bytes of [a-z0-9_], starting
// with a letter.
func checkType(t string, maxLen int) *Error {
	if t == "" {
		return invalidField(fType, "empty")
	}
	if len(t) > maxLen {
		return tooLarge(fType, "%d bytes, longer than the limit of %d", len(t), maxLen)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_') {
			continue
		}
		if i == 0 {
			return invalidField(fType, "%s must start with a lower-case letter", excerpt(t))
		}
		return invalidField(fType, "%s has a character outside a-z 0-9 _ at byte %d", excerpt(t), i)
	}
	return nil
}

// parseVersion parses v: an integer ≥ 1.
func parseVersion(kind valueKind, lit string) (int, *Error) {
	if kind != kindNumber {
		return 0, invalidField(fV, "must be an integer, not %s", kind)
	}
	v, err := strconv.Atoi(lit)
	if err != nil {
		if strings.ContainsAny(lit, ".eE") {
			return 0, invalidField(fV, "must be an integer, not %s", excerpt(lit))
		}
		return 0, invalidField(fV, "%s is out of range", excerpt(lit))
	}
	if v < 1 {
		return 0, invalidField(fV, "%d is less than 1", v)
	}
	return v, nil
}

// checkID checks an id: 1 to maxLen bytes, no control characters.
func checkID(id string, maxLen int) *Error {
	if id == "" {
		return invalidField(fID, "empty")
	}
	if len(id) > maxLen {
		return tooLarge(fID, "%d bytes, longer than the limit of %d", len(id), maxLen)
	}
	for i, r := range id {
		if unicode.IsControl(r) {
			return invalidField(fID, "%s has a control character at byte %d", excerpt(id), i)
		}
	}
	return nil
}

// checkExchangeText requires user or ai to hold more than whitespace.
func checkExchangeText(user, ai string, present bool) *Error {
	if strings.TrimSpace(user) != "" || strings.TrimSpace(ai) != "" {
		return nil
	}
	if !present {
		return missingField(fUser, `an exchange needs "user" or "ai"; both are missing`)
	}
	return invalidField(fUser, `an exchange needs "user" or "ai" to be non-blank; both are empty or whitespace`)
}
