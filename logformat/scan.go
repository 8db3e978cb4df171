package logformat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small validating JSON scanner. encoding/json neither
// reports duplicate keys nor tells where each top-level value lies, and
// walking json.Decoder.Token is several times slower than this single pass,
// which checks the grammar of RFC 8259, rejects duplicate keys at every
// depth and records the span of each top-level member. The input must
// already be valid UTF-8.

type valueKind uint8

const (
	kindNone valueKind = iota
	kindString
	kindNumber
	kindObject
	kindArray
	kindTrue
	kindFalse
	kindNull
)

func (k valueKind) String() string {
	switch k {
	case kindString:
		return "string"
	case kindNumber:
		return "number"
	case kindObject:
		return "object"
	case kindArray:
		return "array"
	case kindTrue, kindFalse:
		return "boolean"
	case kindNull:
		return "null"
	}
	return "nothing"
}

// member is one top-level key and the span of its value in the line.
type member struct {
	key        []byte // decoded key
	start, end int    // value is data[start:end]
	kind       valueKind
}

// scanError is a failure of the scan; toError turns it into an *Error.
type scanError struct {
	kind string // KindInvalidJSON, KindDuplicateKey or KindTooLarge
	msg  string
	off  int
	path []pathElem // for KindDuplicateKey, innermost first
}

type pathElem struct {
	key     string
	index   int
	isIndex bool
}

func (e *scanError) toError() *Error {
	switch e.kind {
	case KindDuplicateKey:
		var b strings.Builder
		for i := len(e.path) - 1; i >= 0; i-- {
			p := e.path[i]
			if p.isIndex {
				b.WriteString("[" + strconv.Itoa(p.index) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p.key)
		}
		return &Error{Kind: e.kind, Field: b.String(), Reason: e.msg}
	case KindInvalidJSON:
		return &Error{Kind: e.kind, Reason: fmt.Sprintf("invalid JSON: %s at byte %d", e.msg, e.off)}
	default:
		return &Error{Kind: e.kind, Reason: fmt.Sprintf("%s at byte %d", e.msg, e.off)}
	}
}

// objectSetThreshold is the number of keys above which an object's
// duplicate check switches from a linear scan to a map.
const objectSetThreshold = 16

type scanner struct {
	data     []byte
	pos      int
	maxDepth int
	members  []member // top-level members, filled by top
	memBuf   [16]member
}

// plain[c] is true for bytes that need no attention inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (s *scanner) skipWS() {
	for s.pos < len(s.data) && isWS(s.data[s.pos]) {
		s.pos++
	}
}

func (s *scanner) eof() *scanError {
	return &scanError{kind: KindInvalidJSON, msg: "unexpected end of input", off: len(s.data)}
}

// unexpected reports the character at s.pos.
func (s *scanner) unexpected(context string) *scanError {
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	return &scanError{kind: KindInvalidJSON, msg: "invalid character " + quoteRune(r) + " " + context, off: s.pos}
}

func quoteRune(r rune) string {
	if r == '\'' {
		return `'\''`
	}
	return strconv.QuoteRune(r)
}

// top scans the line's first JSON value and returns its kind. When it is an
// object, top records its members in s.members and checks that only
// whitespace follows; otherwise what follows is not looked at.
func (s *scanner) top() (valueKind, *scanError) {
	s.members = s.memBuf[:0]
	s.skipWS()
	var kind valueKind
	var err *scanError
	if s.pos < len(s.data) && s.data[s.pos] == '{' {
		kind, err = kindObject, s.object(1, true)
	} else {
		start := s.pos
		kind, err = s.value(0)
		if err != nil && err.kind == KindInvalidJSON && s.pos < len(s.data) && s.data[start] != '[' {
			// Plain text, or a fragment: the scanner's detail ("invalid
			// character 'o' in literal null") would only puzzle.
			err = &scanError{kind: KindInvalidJSON, msg: "not a JSON object (a line must be one JSON object, starting with '{')", off: start}
		}
	}
	if err != nil || kind != kindObject {
		return kind, err
	}
	s.skipWS()
	if s.pos < len(s.data) {
		return kind, &scanError{kind: KindTrailingData, msg: "data after the object", off: s.pos}
	}
	return kind, nil
}

// value scans one value at s.pos; depth is that of the enclosing container.
func (s *scanner) value(depth int) (valueKind, *scanError) {
	if s.pos >= len(s.data) {
		return kindNone, s.eof()
	}
	switch c := s.data[s.pos]; c {
	case '{':
		return kindObject, s.object(depth+1, false)
	case '[':
		return kindArray, s.array(depth + 1)
	case '"':
		return kindString, s.str()
	case 't':
		return kindTrue, s.literal("true")
	case 'f':
		return kindFalse, s.literal("false")
	case 'n':
		return kindNull, s.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return kindNumber, s.number()
		}
		return kindNone, s.unexpected("looking for beginning of value")
	}
}

func (s *scanner) tooDeep() *scanError {
	return &scanError{kind: KindTooLarge, msg: fmt.Sprintf("nesting deeper than %d levels", s.maxDepth), off: s.pos}
}

// object scans an object at s.pos ('{'). When top is set, it records the
// members.
func (s *scanner) object(depth int, top bool) *scanError {
	if depth > s.maxDepth {
		return s.tooDeep()
	}
	d := s.data
	s.pos++
	s.skipWS()
	if s.pos < len(d) && d[s.pos] == '}' {
		s.pos++
		return nil
	}
	var small [8][]byte
	keys := small[:0]
	var set map[string]struct{}
	for {
		s.skipWS()
		if s.pos >= len(d) {
			return s.eof()
		}
		if d[s.pos] != '"' {
			if d[s.pos] == '}' { // the empty object returned above: a comma came before
				return &scanError{kind: KindInvalidJSON, msg: "a comma before '}' (JSON allows no trailing comma)", off: s.pos}
			}
			return s.unexpected("looking for beginning of object key string")
		}
		kstart := s.pos
		if err := s.str(); err != nil {
			return err
		}
		key := d[kstart+1 : s.pos-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unescape(key))
		}
		dup := false
		if set != nil {
			_, dup = set[string(key)]
			set[string(key)] = struct{}{}
		} else {
			for _, k := range keys {
				if bytes.Equal(k, key) {
					dup = true
					break
				}
			}
			keys = append(keys, key)
			if len(keys) > objectSetThreshold {
				set = make(map[string]struct{}, 2*len(keys))
				for _, k := range keys {
					set[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			return &scanError{kind: KindDuplicateKey, msg: "duplicate key", off: kstart,
				path: []pathElem{{key: string(key)}}}
		}
		s.skipWS()
		if s.pos >= len(d) {
			return s.eof()
		}
		if d[s.pos] != ':' {
			return s.unexpected("after object key")
		}
		s.pos++
		s.skipWS()
		vstart := s.pos
		kind, err := s.value(depth)
		if err != nil {
			if err.kind == KindDuplicateKey {
				err.path = append(err.path, pathElem{key: string(key)})
			}
			return err
		}
		if top {
			s.members = append(s.members, member{key: key, start: vstart, end: s.pos, kind: kind})
		}
		s.skipWS()
		if s.pos >= len(d) {
			return s.eof()
		}
		switch d[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.unexpected("after object key:value pair")
		}
	}
}

// array scans an array at s.pos ('[').
func (s *scanner) array(depth int) *scanError {
	if depth > s.maxDepth {
		return s.tooDeep()
	}
	d := s.data
	s.pos++
	s.skipWS()
	if s.pos < len(d) && d[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.skipWS()
		if i > 0 && s.pos < len(d) && d[s.pos] == ']' {
			return &scanError{kind: KindInvalidJSON, msg: "a comma before ']' (JSON allows no trailing comma)", off: s.pos}
		}
		if _, err := s.value(depth); err != nil {
			if err.kind == KindDuplicateKey {
				err.path = append(err.path, pathElem{index: i, isIndex: true})
			}
			return err
		}
		s.skipWS()
		if s.pos >= len(d) {
			return s.eof()
		}
		switch d[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.unexpected("after array element")
		}
	}
}

// str scans a string at s.pos ('"'), leaving s.pos after its closing quote.
func (s *scanner) str() *scanError {
	d := s.data
	i := s.pos + 1
	for {
		// Skip 8 plain bytes at a time: no '"', '\\' or byte < 0x20.
		for i+8 <= len(d) {
			v := binary.LittleEndian.Uint64(d[i:])
			ctl := (v - 0x20*lsb) &^ v
			q := v ^ ('"' * lsb)
			bs := v ^ ('\\' * lsb)
			if (ctl|(q-lsb)&^q|(bs-lsb)&^bs)&msb != 0 {
				break
			}
			i += 8
		}
		for i < len(d) && plain[d[i]] {
			i++
		}
		if i >= len(d) {
			return s.eof()
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(d) {
				return s.eof()
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) {
						return s.eof()
					}
					if !isHex(d[j]) {
						s.pos = j
						return s.unexpected("in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				s.pos = i + 1
				return s.unexpected("in string escape code")
			}
		default:
			s.pos = i
			return &scanError{kind: KindInvalidJSON, off: i,
				msg: fmt.Sprintf("invalid character %s in string literal (control characters must be escaped)", quoteRune(rune(c)))}
		}
	}
}

// SWAR constants: a byte of 1s and the high bit of every byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans a number at s.pos.
func (s *scanner) number() *scanError {
	d := s.data
	digits := func(context string) *scanError {
		if s.pos >= len(d) {
			return s.eof()
		}
		if !isDigit(d[s.pos]) {
			return s.unexpected(context)
		}
		for s.pos < len(d) && isDigit(d[s.pos]) {
			s.pos++
		}
		return nil
	}
	if d[s.pos] == '-' {
		s.pos++
	}
	if s.pos < len(d) && d[s.pos] == '0' {
		s.pos++
	} else if err := digits("in numeric literal"); err != nil {
		return err
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if err := digits("after decimal point in numeric literal"); err != nil {
			return err
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if err := digits("in exponent of numeric literal"); err != nil {
			return err
		}
	}
	return nil
}

// literal scans true, false or null at s.pos.
func (s *scanner) literal(lit string) *scanError {
	for i := 0; i < len(lit); i++ {
		if s.pos >= len(s.data) {
			return s.eof()
		}
		if s.data[s.pos] != lit[i] {
			return s.unexpected("in literal " + lit + " (expecting " + quoteRune(rune(lit[i])) + ")")
		}
		s.pos++
	}
	return nil
}

// unescape returns the decoded form of the body of a valid JSON string
// (without its quotes). Like encoding/json, it turns an unpaired UTF-16
// surrogate escape into U+FFFD.
func unescape(s []byte) string {
	var b strings.Builder
	b.Grow(len(s)) // decoding never makes a string longer
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			b.Write(s[i:])
			break
		}
		b.Write(s[i : i+j])
		i += j
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(s[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if p := utf16.DecodeRune(r, hex4(s[i+2:])); p != unicode.ReplacementChar {
						b.WriteRune(p)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// decodeString returns the value of the valid JSON string literal raw
// (with its quotes).
func decodeString(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	return unescape(body)
}
