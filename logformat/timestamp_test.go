package logformat

import (
	"strings"
	"testing"
	"time"
)

func TestParseTimeString(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 UTC, "" for an error
	}{
		{"2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"},
		{"2024-05-01T10:00:00.5Z", "2024-05-01T10:00:00.5Z"},
		{"2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00.123456789Z"},
		{"2024-05-01T10:00:00+02:00", "2024-05-01T08:00:00Z"},
		{"2024-05-01T10:00:00-00:00", "2024-05-01T10:00:00Z"},
		{"2024-05-01 10:00:00Z", "2024-05-01T10:00:00Z"},
		{"2024-05-01t10:00:00z", "2024-05-01T10:00:00Z"},
		{"2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
		{"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"2024-05-01T10:00:00.1234567891Z", "2024-05-01T10:00:00.123456789Z"},
		{"2024-05-01T23:30:00-23:59", "2024-05-02T23:29:00Z"},
		{"2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"},
		{"1900-02-29T00:00:00Z", ""},
		{"2024-04-31T00:00:00Z", ""},
		{"2024-00-01T00:00:00Z", ""},
		{"2024-05-00T00:00:00Z", ""},
		{"2024-05-01T10:60:00Z", ""},
		{"2024-05-01T10:00:00+02:60", ""},
		{"2024-05-01T10:00:00+2:00", ""},
		{"2024-05-01T10:00:00Zx", ""},
		{"2024-05-01T10:00:00.", ""},
		{"+2024-05-01T10:00:00Z", ""},
		{"2024-05-01T10:00:00.-5Z", ""},
		{"2024-05-01X10:00:00Z", ""},
		{"2023-02-29T00:00:00Z", ""},
		{"2024-05-01T24:00:00Z", ""},
		{"2024-05-01T23:59:60Z", ""},
		{"2024-05-01T10:00Z", ""},
		{"2024-5-1T10:00:00Z", ""},
		{"2024-05-01T10:00:00.Z", ""},
		{"2024-05-01T10:00:00,5Z", ""},
		{"2024-05-01T10:00:00+02", ""},
		{"2024-05-01T10:00:00+24:00", ""},
		{"2024-05-01T10:00:00 Z", ""},
		{" 2024-05-01T10:00:00Z", ""},
		{"2024-05-01T10:00:00Z ", ""},
		{"2024-05-01  10:00:00Z", ""},
		{"2024-05-01", ""},
		{"", ""},
		{"0000-01-01T00:00:00Z", ""},
		{"1969-12-31T23:59:59.999999999Z", ""},
	}
	for _, tt := range tests {
		got, _, err := parseTimeString(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parseTimeString(%q) = %v, want error", tt.in, got)
			} else if err.Field != "timestamp" || err.Kind != KindInvalidField {
				t.Errorf("parseTimeString(%q) error %+v", tt.in, err)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339Nano) != tt.want || got.Location() != time.UTC {
			t.Errorf("parseTimeString(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTimeNumber(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 UTC, "" for an error
	}{
		{"0", "1970-01-01T00:00:00Z"},
		{"-0", "1970-01-01T00:00:00Z"},
		{"-0.0", "1970-01-01T00:00:00Z"},
		{"1714557600", "2024-05-01T10:00:00Z"},
		{"1714557600.123456789", "2024-05-01T10:00:00.123456789Z"},
		{"1714557600.1234567899", "2024-05-01T10:00:00.123456789Z"}, // truncated
		{"1714557600.000000001", "2024-05-01T10:00:00.000000001Z"},
		{"1.7145576e9", "2024-05-01T10:00:00Z"},
		{"1.7145576E+9", "2024-05-01T10:00:00Z"},
		{"17145576001e-1", "2024-05-01T10:00:00.1Z"},
		{"0.000000001", "1970-01-01T00:00:00.000000001Z"},
		{"1e-10", "1970-01-01T00:00:00Z"},
		{"1e-99999999999", "1970-01-01T00:00:00Z"},
		{"0e99999999999", "1970-01-01T00:00:00Z"},
		{"0.0000000000000000000000001e25", "1970-01-01T00:00:01Z"},
		{"00000", "1970-01-01T00:00:00Z"},                          // not valid JSON, but harmless
		{"100000000000", "5138-11-16T09:46:40Z"},                   // 1e11: still seconds
		{"100000000001", "1973-03-03T09:46:40.001Z"},               // above: milliseconds
		{"99999999999", "5138-11-16T09:46:39Z"},                    // largest whole seconds
		{"1714557600123", "2024-05-01T10:00:00.123Z"},              // milliseconds
		{"1714557600123.456789", "2024-05-01T10:00:00.123456789Z"}, // fractional ms
		{"1.714557600123e12", "2024-05-01T10:00:00.123Z"},
		{"253402300799999", "9999-12-31T23:59:59.999Z"},
		{"253402300799999.999999", "9999-12-31T23:59:59.999999999Z"},
		{"253402300800000", ""},
		{"1e15", ""},
		{"1e999999999999", ""},
		{"-1", ""},
		{"-1e-9", ""},
	}
	for _, tt := range tests {
		got, err := parseTimeNumber(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parseTimeNumber(%q) = %v, want error", tt.in, got)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339Nano) != tt.want {
			t.Errorf("parseTimeNumber(%q) = %v, %v; want %s", tt.in, got.Format(time.RFC3339Nano), err, tt.want)
		}
	}
}

// FuzzParseTimeString checks the timestamp parser against the standard
// library: what it accepts, time.Parse reads as the same instant (with
// the offset, or in time.Local without one).
func FuzzParseTimeString(f *testing.F) {
	for _, s := range []string{"2024-05-01T10:00:00Z", "2024-05-01t10:00:00.5z", "2024-05-01 10:00:00+02:00",
		"2024-05-01T12:00:00.123456", "2024-05-01 12:00:00", "2024-05-01T12:00", "2024-02-30T00:00:00", "1970-01-01T00:00:00-00:01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, noOffset, err := parseTimeString(s)
		if err != nil {
			return
		}
		// The standard form: 'T', 'Z', at most 9 fraction digits.
		std := []byte(s)
		std[10] = 'T'
		if c := std[len(std)-1]; c == 'z' {
			std[len(std)-1] = 'Z'
		}
		norm := string(std)
		if i := strings.IndexByte(norm, '.'); i >= 0 {
			j := i + 1
			for j < len(norm) && norm[j] >= '0' && norm[j] <= '9' {
				j++
			}
			if j-i-1 > 9 {
				norm = norm[:i+10] + norm[j:]
			}
		}
		var want time.Time
		var perr error
		if noOffset {
			want, perr = time.ParseInLocation("2006-01-02T15:04:05.999999999", norm, time.Local)
		} else {
			want, perr = time.Parse(time.RFC3339Nano, norm)
		}
		if perr != nil {
			t.Fatalf("parseTimeString(%q) = %v, but time.Parse(%q): %v", s, got, norm, perr)
		}
		if !want.Equal(got) {
			t.Fatalf("parseTimeString(%q) = %v, time.Parse gives %v", s, got, want)
		}
	})
}
