package logformat

import (
	"errors"
	"strings"
	"testing"
)

func TestValidSessionID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"9", true},
		{"Abc-123_x.y:z@h+1", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"-a", false},
		{".a", false},
		{"_a", false},
		{"a b", false},
		{"a/b", false},
		{"a\\b", false},
		{"a\x00", false},
		{"é", false},
		{"a\n", false},
	}
	for _, tt := range tests {
		err := ValidSessionID(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidSessionID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
		var perr *Error
		if err != nil && (!errors.As(err, &perr) || perr.Field != "session_id") {
			t.Errorf("ValidSessionID(%q) error %#v is not an *Error on session_id", tt.id, err)
		}
	}
}

func TestSessionFromFileName(t *testing.T) {
	tests := []struct {
		name, want, errHas string
	}{
		{"session-abc.jsonl", "abc", ""},
		{"abc.jsonl", "abc", ""},
		{"session-2024-05-01T10:00.jsonl", "2024-05-01T10:00", ""},
		{"session.jsonl", "session", ""},
		{"sessionx.jsonl", "sessionx", ""},
		{"session-session-a.jsonl", "session-a", ""},
		{"dir/sub/session-abc.jsonl", "abc", ""},
		{"a.b.jsonl", "a.b", ""},
		{"session-.jsonl", "", "invalid: empty"},
		{".jsonl", "", "invalid: empty"},
		{"abc.json", "", "does not end in .jsonl"},
		{"abc.JSONL", "", "does not end in .jsonl"},
		{"abc.jsonl.bak", "", "does not end in .jsonl"},
		{"my notes.jsonl", "", `gives session id "my notes", which is invalid`},
		{"-x.jsonl", "", "must start with a letter or digit"},
		{"session--x.jsonl", "", "must start"},
		{strings.Repeat("a", 129) + ".jsonl", "", "longer than the limit of 128"},
	}
	for _, tt := range tests {
		got, err := SessionFromFileName(tt.name)
		if tt.errHas == "" {
			if err != nil || got != tt.want {
				t.Errorf("SessionFromFileName(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.errHas) || got != "" {
			t.Errorf("SessionFromFileName(%q) = %q, %v; want error with %q", tt.name, got, err, tt.errHas)
		}
	}
}
