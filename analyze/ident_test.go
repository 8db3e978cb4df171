package analyze

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		text string
		want []string // Text of each identifier found
	}{
		{"why does send_reset_email fail?", []string{"send_reset_email"}},
		{"SendResetEmail panics", []string{"sendresetemail"}},
		{"see auth/views.py, line 3", []string{"auth/views.py"}},
		{"`internal/backoff/policy.go`", []string{"internal/backoff/policy.go"}},
		{"(pkg.Func) and os.ReadFile.", []string{"pkg.func", "os.readfile"}},
		{"error E1234 again", []string{"e1234"}},
		{"commit a3f9c2e broke it", []string{"a3f9c2e"}},
		{"the front-end and a re-run", nil},                   // English hyphenation
		{"the --min-score flag", []string{"--min-score"}},     // a flag
		{"in 2026-11-25 at 10:00 v1.2.3", []string{"v1.2.3"}}, // dates and times have no letter
		{"e.g. i.e. U.S.", nil},                               // letters only, one each
		{"plain words only here", nil},
		{"send_reset_email and send_reset_email", []string{"send_reset_email"}},
		{"getHTTPClient", []string{"gethttpclient"}},
		{"sha256 and utf8", []string{"sha256", "utf8"}},
	}
	for _, tc := range tests {
		var got []string
		for _, id := range Identifiers(tc.text) {
			got = append(got, id.Text)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Identifiers(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	ids := Identifiers("SendResetEmail in auth/views.py and a3f9c2e")
	if !slices.Equal(ids[0].Parts, []string{"send", "reset", "email"}) || !slices.Equal(ids[0].Words, []string{"sendresetemail"}) {
		t.Errorf("camel case: %+v", ids[0])
	}
	if !slices.Equal(ids[1].Words, []string{"auth", "views", "py"}) || ids[1].Hex {
		t.Errorf("path: %+v", ids[1])
	}
	if !ids[2].Hex {
		t.Errorf("hash: %+v", ids[2])
	}
}

func TestCountIdentifier(t *testing.T) {
	id := func(s string) Identifier { return Identifiers(s)[0] }
	tests := []struct {
		text, ident string
		want        int
	}{
		{"send_reset_email raises; see Send_Reset_Email", "send_reset_email", 2},
		{"send reset email", "send_reset_email", 0},
		{"resend_reset_email_now", "send_reset_email", 0}, // inside a longer name
		{"call send_reset_email()", "send_reset_email", 1},
		{"internal/backoff/policy.go\nx", "policy.go", 1},
		{"policy.golden", "policy.go", 0},
		{"commit a3f9c2e81b4d", "a3f9c2e", 1}, // a hash starts a longer one
		{"xa3f9c2e", "a3f9c2e", 0},
		{"SENDRESETEMAIL", "SendResetEmail", 1},
		{"Ünïcode_Ident here", "ünïcode_ident", 1},
	}
	for _, tc := range tests {
		if got := CountIdentifier(tc.text, id(tc.ident)); got != tc.want {
			t.Errorf("CountIdentifier(%q, %q) = %d, want %d", tc.text, tc.ident, got, tc.want)
		}
	}
}

// FuzzIdentifiers: any text: no panic; every identifier found is a
// lowercased token of the text, counted at least once in it, with parts.
//
//	go test -fuzz=FuzzIdentifiers ./analyze/
func FuzzIdentifiers(f *testing.F) {
	for _, s := range []string{"send_reset_email", "auth/views.py (see)", "SendResetEmail", "a3f9c2e81b", "É_ü/x.go", "--min-score", "\xff_\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, id := range Identifiers(text) {
			if id.Text == "" || len(id.Parts) == 0 {
				t.Fatalf("%q: empty identifier %+v", text, id)
			}
			if utf8.ValidString(text) && !strings.Contains(strings.ToLower(text), id.Text) {
				t.Fatalf("%q: %q is not in the text", text, id.Text)
			}
			if utf8.ValidString(text) && strings.ToLower(strings.ToUpper(id.Text)) == id.Text && CountIdentifier(text, id) == 0 && CountIdentifier(strings.ToLower(text), id) == 0 {
				t.Fatalf("%q: %q found but not counted", text, id.Text)
			}
		}
	})
}
