package logformat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	t.Setenv(MachineEnv, "m")
	cases := []struct {
		name    string
		r       Request
		err     string
		file    string
		session string
	}{
		{"exchange", Request{Type: TypeExchange, Session: "s1", User: "u", AI: "a"}, "", "session-s1~m.jsonl", "s1"},
		{"reset", Request{Type: TypeContextReset, Session: "s1", Reason: "full"}, "", "session-s1~m.jsonl", "s1"},
		{"resume takes the new session", Request{Type: TypeSessionResume, Previous: "a", New: "b"}, "", "session-b~m.jsonl", "b"},
		{"mistyped type", Request{Type: "exchang", Session: "s"}, `--type "exchang": did you mean "exchange"?`, "", ""},
		{"unknown type", Request{Type: "note", Session: "s"}, `--type "note": want exchange, context_reset or session_resume`, "", ""},
		{"bad metadata", Request{Type: TypeExchange, Session: "s", User: "u", Metadata: "{"}, "metadata", "", ""},
		{"no session", Request{Type: TypeExchange, User: "u"}, "session", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			line, ev, err := Build(c.r)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(line), "}\n") || ev.ID == "" || ev.Timestamp.IsZero() || ev.SessionID != c.session {
				t.Errorf("line %s, event %+v", line, ev)
			}
			if f, err := FileName("", ev); err != nil || f != c.file {
				t.Errorf("FileName = %q, %v; want %q", f, err, c.file)
			}
		})
	}
}

func TestBuildFromJSON(t *testing.T) {
	s, typ, id := "s9", TypeExchange, "k1"
	cases := []struct {
		name, in string
		over     Overrides
		err      string
		warns    int
		want     map[string]string // fields of the line written
	}{
		{"as given", `{"type":"exchange","session_id":"s","user":"u","ai":"a"}`, Overrides{}, "", 0, map[string]string{"session_id": `"s"`}},
		{"session filled", `{"type":"exchange","user":"u","ai":"a"}`, Overrides{Session: &s}, "", 0, map[string]string{"session_id": `"s9"`}},
		{"type and id filled", `{"session_id":"s","user":"u","ai":"a"}`, Overrides{Type: &typ, ID: &id}, "", 0, map[string]string{"type": `"exchange"`, "id": `"k1"`}},
		{"conflicting session", `{"type":"exchange","session_id":"s","user":"u"}`, Overrides{Session: &s}, `--session "s9" but the event on stdin has session_id "s"`, 0, nil},
		{"no session", `{"type":"exchange","user":"u"}`, Overrides{}, `no "session_id": add one to the event, or give --session ID`, 0, nil},
		{"session under another name", `{"type":"exchange","sessionId":"x","user":"u"}`, Overrides{}, `give --session ID; "sessionId" looks like "session_id"`, 0, nil},
		{"assistant alias", `{"type":"exchange","session_id":"s","user":"u","assistant":"a"}`, Overrides{}, "", 1, map[string]string{"ai": `"a"`}},
		{"unknown field kept", `{"type":"exchange","session_id":"s","user":"u","mood":"ok"}`, Overrides{}, "", 1, map[string]string{"mood": `"ok"`}},
		{"not JSON", `{"type":`, Overrides{}, "event on stdin", 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warns := 0
			line, _, err := BuildFromJSON(strings.NewReader(c.in), "", c.over, func(string) { warns++ })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(line, &obj); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if string(obj[k]) != v {
					t.Errorf("%s = %s, want %s (line %s)", k, obj[k], v, line)
				}
			}
			if obj["id"] == nil || obj["timestamp"] == nil {
				t.Errorf("id or timestamp not filled: %s", line)
			}
			if warns != c.warns {
				t.Errorf("%d warnings, want %d", warns, c.warns)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	t.Setenv(MachineEnv, "m")
	ev := Event{SessionID: "s"}
	for _, c := range []struct{ to, want, err string }{
		{"", "session-s~m.jsonl", ""},
		{"x.jsonl", "x~m.jsonl", ""},
		{"x~other.jsonl", "x~other.jsonl", ""},
		{"../x.jsonl", "", "want a plain file name"},
		{".x.jsonl", "", "want a plain file name"},
		{"x.txt", "", "want a plain file name"},
	} {
		got, err := FileName(c.to, ev)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("FileName(%q) err = %v, want %q", c.to, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("FileName(%q) = %q, %v; want %q", c.to, got, err, c.want)
		}
	}
	if _, err := FileName("", Event{}); err == nil {
		t.Errorf("FileName without a session: no error")
	}
}
