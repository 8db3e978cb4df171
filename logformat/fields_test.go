package logformat

import "testing"

func TestLooksLikeKnownField(t *testing.T) {
	cases := []struct{ name, want string }{
		{"session", "session_id"},
		{"sessionId", "session_id"},
		{"session-id", "session_id"},
		{"sesion_id", "session_id"},
		{"ts", "timestamp"},
		{"Timestamp", "timestamp"},
		{"timestmap", "timestamp"},
		{"created_at", "timestamp"},
		{"prompt", "user"},
		{"response", "ai"},
		{"answer", "ai"},
		{"previous_session_id", "previous_session"},
		{"prevSession", "previous_session"},
		{"newSession", "new_session"},
		{"Files", "files"},
		{"meta_data", "metadata"},
		// Not a mistake: no field of the protocol.
		{"session_id", ""},
		{"ai", ""},
		{"mood", ""},
		{"tool_calls", ""},
		{"model", ""},
		{"agent", ""},
		{"ids", ""},
		{"tags", ""},
	}
	for _, c := range cases {
		if got := LooksLikeKnownField(c.name); got != c.want {
			t.Errorf("LooksLikeKnownField(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
