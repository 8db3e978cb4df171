package logformat

import "testing"

func TestLooksLikeKnownType(t *testing.T) {
	for typ, want := range map[string]string{
		"exchange": "", "context_reset": "", "session_resume": "", // known: not a typo
		"contextreset": "context_reset", "sessionresume": "session_resume", "exchang": "exchange",
		"exchnage": "exchange", "exchanges": "exchange", "xchange": "exchange", "exchange_": "exchange",
		"context_rest": "context_reset", "context_resets": "context_reset", "session_resumed": "session_resume",
		"ession_resum": "session_resume",
		// Far enough to be other types.
		"tool_call": "", "exchange_summary": "", "change": "", "context": "", "session_start": "", "x": "", "exchangers": "", "exch": "",
	} {
		if got := LooksLikeKnownType(typ); got != want {
			t.Errorf("LooksLikeKnownType(%q) = %q, want %q", typ, got, want)
		}
	}
}

func FuzzLooksLikeKnownType(f *testing.F) {
	for _, s := range []string{"exchange", "contextreset", "exchnage", "tool_call", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typ string) {
		got := LooksLikeKnownType(typ)
		if got == "" {
			return
		}
		if typ == got || editDistance(typ, got, maxTypo(got)) > maxTypo(got) && !sameBare(typ, got) {
			t.Fatalf("LooksLikeKnownType(%q) = %q", typ, got)
		}
	})
}

func sameBare(a, b string) bool {
	strip := func(s string) string {
		out := []byte{}
		for i := 0; i < len(s); i++ {
			if s[i] != '_' {
				out = append(out, s[i])
			}
		}
		return string(out)
	}
	return strip(a) == strip(b)
}
