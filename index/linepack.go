package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// An event's raw line is kept byte for byte (export writes it back, edits
// in place compare it, a duplicate id compares it), and its user and ai
// texts are kept as columns (search, resume, the full-text indexer and
// the vectors read them without parsing a line). Storing both held most
// exchanges' text twice: the texts were half of the events table.
//
// So the raw column holds the line without the JSON strings of its user
// and ai texts when they can be rendered again, exactly, from the stored
// columns: a packed line. Writing one, each text is encoded as a JSON
// string by one of a few fixed styles of producers (below); if that
// encoding is found in the line, it is cut out, and the place and style
// are recorded in a header. Reading one (unpackLine), the texts are
// encoded again in the same style and put back at their places: the same
// bytes, by construction (cut and put back are the same bytes at the same
// place), whatever the line's key order, spacing or other fields. A text
// that no style renders as written (an escape the styles do not make,
// "\/" say), a line whose texts are short, and everything that is not an
// exchange keep their line whole.
//
// A packed value starts with packMagic, a byte no JSON text starts with
// (a stored line begins with '{' or JSON white space), so whole lines
// (all those stored before schema version 11 included) read as they are.
//
//	packMagic, count (0-2), then per cut in line order:
//	    field (packUser, packAI), style, uvarint offset in the line
//	then the line with the cuts removed
//
// The styles are frozen: a packed line must render the same bytes with
// every later version of this code. Never change one; add another.
const packMagic = 0x01

const (
	packUser = 1
	packAI   = 2
)

// JSON string styles, as bit sets. The quotes, '"', '\\' and \n \r \t are
// written the same way by every style; other control characters as
// \u00XX with lowercase hex.
const (
	styleShortBF = 1 << iota // \b and \f as such (else \u0008, \u000c)
	styleHTML                // '<', '>', '&' as \u003c, \u003e, \u0026
	styleLineSep             // U+2028, U+2029 as \u2028, \u2029
	styleASCII               // every non-ASCII character as \uXXXX (UTF-16 pairs)
	styleInvalid             // not a style: the first unused bit set
)

// packStyles are the styles tried, in order: JavaScript's JSON.stringify,
// Go's json.Marshal (Go 1.22+), Go's Encoder with SetEscapeHTML(false)
// (logformat.MarshalLine), Python's json.dumps (ensure_ascii). A text
// with none of the characters they differ on renders the same in all.
var packStyles = [...]byte{
	styleShortBF,
	styleShortBF | styleHTML | styleLineSep,
	styleShortBF | styleLineSep,
	styleShortBF | styleASCII,
}

// packMinText is the shortest text worth cutting (a cut costs 3-5 bytes
// of header).
const packMinText = 16

// appendJSONString appends s as a JSON string in style. Runs of bytes
// written as they are are copied at once.
func appendJSONString(dst []byte, s string, style byte) []byte {
	const hex = "0123456789abcdef"
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	html := style&styleHTML != 0
	asIs := 0 // start of the run of bytes not yet copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			dst = append(dst, s[asIs:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b' && style&styleShortBF != 0:
				dst = append(dst, '\\', 'b')
			case c == '\f' && style&styleShortBF != 0:
				dst = append(dst, '\\', 'f')
			default: // a control character, or <, >, & in styleHTML
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			asIs = i
			continue
		}
		if style&(styleASCII|styleLineSep) == 0 {
			i++ // a UTF-8 byte, written as it is
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case style&styleASCII != 0:
			dst = append(dst, s[asIs:i]...)
			if r >= 0x10000 {
				r -= 0x10000
				dst = appendU(dst, 0xd800+(r>>10))
				dst = appendU(dst, 0xdc00+(r&0x3ff))
			} else {
				dst = appendU(dst, r)
			}
			asIs = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[asIs:i]...)
			dst = appendU(dst, r)
			asIs = i + size
		}
		i += size
	}
	dst = append(dst, s[asIs:]...)
	return append(dst, '"')
}

func appendU(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

type packCut struct {
	field, style byte
	at           int // offset in the line
	n            int // bytes of the encoded text
}

// packLine returns what the raw column stores for line (an event's stored,
// redacted line) whose user and ai columns hold user and ai: the line
// packed when a text can be cut out, else line itself. buf is reused.
func packLine(line []byte, user, ai string, buf []byte) []byte {
	if len(line) > 0 && line[0] == packMagic {
		// Not a JSON line (never stored): packed without cuts, so that
		// it is not mistaken for a packed one.
		return append(append(buf[:0], packMagic, 0), line...)
	}
	if len(line) == 0 || (len(user) < packMinText && len(ai) < packMinText) {
		return line
	}
	var cuts [2]packCut
	n := 0
	var enc [2][]byte
	lc := -1 // lineChars(line), when a text needs it
	for f, text := range [2]string{user, ai} {
		if len(text) < packMinText || !utf8.ValidString(text) {
			continue
		}
		tc := textChars(text)
		if tc != 0 && lc < 0 {
			lc = lineChars(line)
		}
		for _, st := range packStyles {
			if tc != 0 && !styleCanMatch(st, tc, lc) {
				continue
			}
			e := appendJSONString(enc[f][:0], text, st)
			enc[f] = e
			at := packFind(line, e, cuts[:n])
			if at >= 0 {
				cuts[n] = packCut{field: byte(f + 1), style: st, at: at, n: len(e)}
				n++
				break
			}
			if !packStyleMatters(text, st) {
				break // the other styles render it the same
			}
		}
	}
	if n == 0 {
		return line
	}
	if n == 2 && cuts[1].at < cuts[0].at {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	out := append(buf[:0], packMagic, byte(n))
	for _, c := range cuts[:n] {
		out = append(out, c.field, c.style)
		out = binary.AppendUvarint(out, uint64(c.at))
	}
	prev := 0
	for _, c := range cuts[:n] {
		out = append(out, line[prev:c.at]...)
		prev = c.at + c.n
	}
	return append(out, line[prev:]...)
}

// Characters the styles write differently, as found in a line or text.
const (
	charsHTML   = 1 << iota // '<', '>' or '&'
	charsHigh               // a byte of a non-ASCII character
	charsEscape             // the two bytes \u
)

func lineChars(b []byte) (c int) {
	var or byte
	for _, x := range b {
		or |= x
	}
	if or >= utf8.RuneSelf {
		c |= charsHigh
	}
	if bytes.ContainsAny(b, "<>&") {
		c |= charsHTML
	}
	if bytes.Contains(b, []byte(`\u`)) {
		c |= charsEscape
	}
	return c
}

func textChars(s string) (c int) {
	var or byte
	for i := 0; i < len(s); i++ {
		or |= s[i]
	}
	if or >= utf8.RuneSelf {
		c |= charsHigh
	}
	if strings.ContainsAny(s, "<>&") {
		c |= charsHTML
	}
	return c
}

// styleCanMatch is false when a text with the characters tc cannot be
// found in a line with lc written in style st: st would write a '<' or a
// non-ASCII character as \uXXXX and the line has no \u, or as itself and
// the line has none. It spares encoding a long text in every style.
func styleCanMatch(st byte, tc, lc int) bool {
	if tc&charsHTML != 0 {
		if st&styleHTML != 0 && lc&charsEscape == 0 || st&styleHTML == 0 && lc&charsHTML == 0 {
			return false
		}
	}
	if tc&charsHigh != 0 {
		if st&styleASCII != 0 && lc&charsEscape == 0 || st&styleASCII == 0 && lc&charsHigh == 0 {
			return false
		}
	}
	return true
}

// packFind is where e occurs in line without overlapping cuts, or -1.
func packFind(line, e []byte, cuts []packCut) int {
	from := 0
	for from <= len(line)-len(e) {
		i := bytes.Index(line[from:], e)
		if i < 0 {
			return -1
		}
		at := from + i
		overlap := false
		for _, c := range cuts {
			if at < c.at+c.n && c.at < at+len(e) {
				overlap = true
				from = c.at + c.n
				break
			}
		}
		if !overlap {
			return at
		}
	}
	return -1
}

// packStyleMatters reports whether any style renders text otherwise than
// st does: false for a text without the characters the styles differ on.
func packStyleMatters(text string, st byte) bool {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= utf8.RuneSelf, c == '\b', c == '\f', c == '<', c == '>', c == '&':
			return true
		}
	}
	return false
}

// unpackLine renders the line an event's raw column holds (see packLine)
// with its user and ai columns.
func unpackLine(raw []byte, user, ai sql.NullString) ([]byte, error) {
	if len(raw) == 0 || raw[0] != packMagic {
		return raw, nil
	}
	if len(raw) < 2 || raw[1] > 2 {
		return nil, fmt.Errorf("packed line: bad header")
	}
	n := int(raw[1])
	p := 2
	var cuts [2]packCut
	for i := 0; i < n; i++ {
		if p+2 > len(raw) {
			return nil, fmt.Errorf("packed line: short header")
		}
		cuts[i].field, cuts[i].style = raw[p], raw[p+1]
		at, k := binary.Uvarint(raw[p+2:])
		if k <= 0 {
			return nil, fmt.Errorf("packed line: bad offset")
		}
		cuts[i].at = int(at)
		p += 2 + k
	}
	rest := raw[p:]
	var texts [2][]byte
	size := len(rest)
	for i := 0; i < n; i++ {
		c := &cuts[i]
		var col sql.NullString
		switch c.field {
		case packUser:
			col = user
		case packAI:
			col = ai
		default:
			return nil, fmt.Errorf("packed line: unknown field %d", c.field)
		}
		if !col.Valid || c.style >= styleInvalid {
			return nil, fmt.Errorf("packed line: field %d missing or style %d unknown", c.field, c.style)
		}
		texts[i] = appendJSONString(nil, col.String, c.style)
		size += len(texts[i])
	}
	out := make([]byte, 0, size)
	prev := 0 // in rest
	cut := 0  // bytes of the line cut so far
	for i := 0; i < n; i++ {
		at := cuts[i].at - cut
		if at < prev || at > len(rest) {
			return nil, fmt.Errorf("packed line: offset %d out of range", cuts[i].at)
		}
		out = append(out, rest[prev:at]...)
		out = append(out, texts[i]...)
		prev = at
		cut += len(texts[i])
	}
	return append(out, rest[prev:]...), nil
}

// StoredLine is unpackLine for callers outside the package that read the
// events table themselves (tests, tools): the line of a row from its raw,
// user and ai columns.
func StoredLine(raw []byte, user, ai sql.NullString) ([]byte, error) {
	return unpackLine(raw, user, ai)
}

// packStoredLines (schema version 11) packs the raw lines of the
// exchanges stored before, in row order, a chunk at a time; a line whose
// texts cannot be cut stays whole. Each packed line is checked to render
// the stored bytes before it replaces them.
func packStoredLines(ctx context.Context, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, `UPDATE events SET raw = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	type row struct {
		id       int64
		raw      []byte
		user, ai sql.NullString
	}
	var last int64
	for {
		var chunk []row
		err := eachRow(ctx, tx, `SELECT id, raw, user, ai FROM events
			WHERE id > ? AND type = 'exchange' ORDER BY id LIMIT 2000`, func(rows *sql.Rows) error {
			var r row
			if err := rows.Scan(&r.id, &r.raw, &r.user, &r.ai); err != nil {
				return err
			}
			chunk = append(chunk, r)
			return nil
		}, last)
		if err != nil {
			return fmt.Errorf("read stored lines: %w", err)
		}
		if len(chunk) == 0 {
			return nil
		}
		for _, r := range chunk {
			last = r.id
			if len(r.raw) == 0 || r.raw[0] == packMagic {
				continue
			}
			packed := packLine(r.raw, r.user.String, r.ai.String, nil)
			if len(packed) >= len(r.raw) {
				continue
			}
			if back, err := unpackLine(packed, r.user, r.ai); err != nil || !bytes.Equal(back, r.raw) {
				continue // cannot happen: keep the line whole
			}
			if _, err := upd.ExecContext(ctx, packed, r.id); err != nil {
				return fmt.Errorf("pack the line of row %d: %w", r.id, err)
			}
		}
	}
}
