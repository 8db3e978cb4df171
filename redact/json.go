package redact

import "bytes"

// RedactJSON is RedactBytes for a line of JSON, such as a raw log line.
//
// JSON lets a writer escape any character: "\/" for "/" (PHP and some
// JavaScript encoders do it by default), "\u0041" for "A". A secret
// written that way does not match its pattern in the raw bytes, though it
// does in the decoded text, so RedactBytes alone would store it in the
// raw line while the decoded fields are redacted. RedactJSON also tries
// the line with those escapes of printable ASCII undone (unescapeASCII);
// when that finds more secrets, it returns that form, redacted: no longer
// the writer's bytes, but the same JSON value less the secrets. Otherwise,
// as RedactBytes, it returns b itself when there is no secret.
func (r *Redactor) RedactJSON(b []byte) ([]byte, int) {
	out, n := r.RedactBytes(b)
	if r == nil {
		return out, n
	}
	plain, changed := unescapeASCII(b)
	if !changed {
		return out, n
	}
	if out2, n2 := r.RedactBytes(plain); n2 > n {
		return out2, n2
	}
	return out, n
}

// RedactJSON redacts a line of JSON with the built-in rules; see
// Redactor.RedactJSON.
func RedactJSON(b []byte) ([]byte, int) { return Default().RedactJSON(b) }

// unescapeASCII returns b with the JSON escapes that stand for a printable
// ASCII character other than '"' and '\' ("\/", "\u0041") replaced by the
// character, which JSON allows as is: the same JSON value, spelled as a
// secret pattern can see it. Other escapes ("\n", "\\", "\"", "\u00e9")
// are kept. changed is false, and b returned, when there is none.
func unescapeASCII(b []byte) (out []byte, changed bool) {
	last := 0 // b[last:i] is not copied to out yet
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			j := bytes.IndexByte(b[i:], '\\')
			if j < 0 {
				break
			}
			i += j
			if i+1 >= len(b) {
				break
			}
		}
		c, n := asciiEscape(b[i:])
		if n == 0 {
			i++ // a kept escape: in "\\u0041" the second backslash starts none
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[last:i]...)
		out = append(out, c)
		i += n - 1
		last = i + 1
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// asciiEscape reads the escape that starts e (e[0] is a backslash): the
// character it stands for and its length, or n == 0 for an escape that
// stays (or an incomplete one).
func asciiEscape(e []byte) (c byte, n int) {
	switch e[1] {
	case '/':
		return '/', 2
	case 'u':
		if len(e) < 6 {
			return 0, 0
		}
		v := 0
		for _, h := range e[2:6] {
			var d int
			switch {
			case h >= '0' && h <= '9':
				d = int(h - '0')
			case h >= 'a' && h <= 'f':
				d = int(h-'a') + 10
			case h >= 'A' && h <= 'F':
				d = int(h-'A') + 10
			default:
				return 0, 0
			}
			v = v<<4 | d
		}
		if v >= 0x20 && v <= 0x7e && v != '"' && v != '\\' {
			return byte(v), 6
		}
	}
	return 0, 0
}
