package logformat

import "bytes"

// Shapes of lines that are not one JSON object but a piece of JSON
// written over several lines: the reason then says what the file looks
// like and how to write it, rather than what its first byte is.
const (
	// prettyReason is the reason of a line of pretty-printed JSON (jq
	// without -c, json.dumps(indent=2), JSON.stringify(v, null, 2)).
	prettyReason = "looks like pretty-printed JSON (one object written over several lines): write one object per line (jq -c)"
	// arrayReason is the reason of an object followed by a comma, as an
	// element of a JSON array written one element a line.
	arrayReason = "looks like an element of a JSON array (an object followed by a comma): write one object per line, without commas or brackets (jq -c '.[]')"
)

// shapeHint is the reason to give a line the scanner refused, or found
// not to be an object, when its shape is that of a line of multi-line
// JSON; "" otherwise. trailing is the offset of what follows the line's
// object (a trailing-data error), else -1.
func shapeHint(line []byte, trailing int) string {
	if trailing >= 0 {
		// {"type":"exchange",...},
		if string(bytes.Trim(line[trailing:], " \t\r")) == "," {
			return arrayReason
		}
		return ""
	}
	t := bytes.Trim(line, " \t\r")
	switch string(t) {
	case "{", "[", "}", "]", "},", "],", "{},", "[],":
		return prettyReason
	}
	if len(t) == 0 {
		return ""
	}
	indented := line[0] == ' ' || line[0] == '\t'
	if t[0] != '"' {
		// An element of an array: 42, true, null, indented.
		if indented && scalar(bytes.TrimSuffix(t, []byte(","))) {
			return prettyReason
		}
		return ""
	}
	// "key": value, "an element of an array", and the last element,
	// indented.
	n := jsonStringEnd(t)
	if n < 0 {
		return ""
	}
	rest := bytes.TrimLeft(t[n:], " \t")
	if len(rest) > 0 && rest[0] == ':' || string(rest) == "," || indented && len(rest) == 0 {
		return prettyReason
	}
	return ""
}

// scalar reports whether b is a JSON number, true, false or null, as far
// as its bytes tell.
func scalar(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// jsonStringEnd is the length of the JSON string that starts b (b[0] is
// '"'), through its closing quote; -1 when it does not end on the line.
func jsonStringEnd(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
