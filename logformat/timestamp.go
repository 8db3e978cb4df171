package logformat

import (
	"strconv"
	"strings"
	"time"
)

// Accepted timestamps lie in [minTime, maxTime] (UTC).
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// epochMillisThreshold: a numeric timestamp above it is in milliseconds.
const epochMillisThreshold = 1e11

// parseTimeString parses an RFC 3339 date-time (section 5.6):
//
//	YYYY-MM-DD T hh:mm:ss [.fraction] (Z | +hh:mm | -hh:mm)
//
// where "T" may also be "t" or a space, and "Z" may be "z". Fractions
// beyond nanoseconds are truncated; leap seconds (:60) are not accepted.
// The result is UTC.
//
// Without the offset (as Python's datetime.isoformat() and str() write a
// naive datetime) the time is read in the local time zone, time.Local, and
// noOffset is set: producers mostly write their machine's local time so.
func parseTimeString(s string) (t time.Time, noOffset bool, err *Error) {
	t, noOffset, ok := parseRFC3339(s)
	if !ok {
		return time.Time{}, false, invalidField("timestamp", "not RFC 3339: %s", excerpt(s))
	}
	t, err = checkTimeRange(t)
	return t, noOffset, err
}

// parseTimeBytes is parseTimeString on bytes, not allocating when valid.
func parseTimeBytes(s []byte) (t time.Time, noOffset bool, err *Error) {
	t, noOffset, ok := parseRFC3339(s)
	if !ok {
		return time.Time{}, false, invalidField("timestamp", "not RFC 3339: %s", excerpt(string(s)))
	}
	t, err = checkTimeRange(t)
	return t, noOffset, err
}

func parseRFC3339[S string | []byte](s S) (t time.Time, noOffset, ok bool) {
	// num parses the n digits at s[i:].
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if !isDigit(c) {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	// Fixed part: "YYYY-MM-DDThh:mm:ss" is 19 bytes.
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false, false
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false, false
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(time.Month(month), year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false, false
	}
	i := 19
	ns := 0
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			if i-start < 9 {
				ns = ns*10 + int(s[i]-'0')
			}
			i++
		}
		n := i - start
		if n == 0 {
			return time.Time{}, false, false
		}
		for ; n < 9; n++ {
			ns *= 10
		}
	}
	offset := 0 // seconds east of UTC
	switch {
	case i == len(s):
		t := time.Date(year, time.Month(month), day, hour, minute, sec, ns, time.Local)
		return t.UTC(), true, true
	case i == len(s)-1 && (s[i] == 'Z' || s[i] == 'z'):
	case i == len(s)-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, false, false
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, ns, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), false, true
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func checkTimeRange(t time.Time) (time.Time, *Error) {
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, invalidField("timestamp", "%s is outside the years 1970 to 9999 (UTC)", excerpt(t.Format(time.RFC3339Nano)))
	}
	return t, nil
}

// parseTimeNumber parses a JSON number as Unix time: seconds, or
// milliseconds when above 1e11. Fractions are kept to the nanosecond
// (truncated), exactly, without going through floating point.
func parseTimeNumber(lit string) (time.Time, *Error) {
	// On a JSON number ParseFloat fails only out of range, returning
	// ±Inf or 0, which the range checks below handle.
	f, _ := strconv.ParseFloat(lit, 64)
	outside := func() (time.Time, *Error) {
		return time.Time{}, invalidField("timestamp", "%s is outside the years 1970 to 9999 as Unix seconds or milliseconds", excerpt(lit))
	}
	// Milliseconds go to 253402300799999 (9999-12-31T23:59:59.999Z).
	if f < 0 || f > 253402300800000 {
		return outside()
	}
	shift := 0 // the decimal point moves left by shift digits
	if f > epochMillisThreshold {
		shift = 3
	}

	// Split lit into significant digits and the position of the point.
	mant, expStr, hasExp := strings.Cut(strings.TrimPrefix(lit, "-"), "e")
	if !hasExp {
		mant, expStr, hasExp = strings.Cut(mant, "E")
	}
	exp := 0
	if hasExp {
		neg := strings.HasPrefix(expStr, "-")
		expStr = strings.TrimLeft(expStr, "+-0")
		if len(expStr) > 7 {
			expStr = "9999999" // as good as infinite for a value in range
		}
		exp, _ = strconv.Atoi("0" + expStr)
		if neg {
			exp = -exp
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	point := len(intPart) + exp - shift - (len(intPart) + len(frac) - len(digits))
	// Now value = 0.digits × 10^point, and 0 ≤ value ≤ 2.6e14, so
	// point ≤ 15 whenever digits is not empty.
	var secStr, nsStr string
	switch {
	case digits == "":
	case point <= 0:
		if -point < 9 {
			nsStr = strings.Repeat("0", -point) + digits
		}
	case point >= len(digits):
		secStr = digits + strings.Repeat("0", point-len(digits))
	default:
		secStr, nsStr = digits[:point], digits[point:]
	}
	if len(secStr) > 12 {
		return outside()
	}
	var sec, ns int64
	if secStr != "" {
		sec, _ = strconv.ParseInt(secStr, 10, 64)
	}
	if len(nsStr) > 9 {
		nsStr = nsStr[:9]
	}
	if nsStr != "" {
		ns, _ = strconv.ParseInt(nsStr+strings.Repeat("0", 9-len(nsStr)), 10, 64)
	}
	t := time.Unix(sec, ns).UTC()
	if t.Before(minTime) || t.After(maxTime) {
		return outside()
	}
	return t, nil
}
