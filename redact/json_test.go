package redact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	tests := []struct {
		name, line string
		n          int
		want       string // a substring of the result
		notWant    string // a secret that must be gone
	}{
		{"escaped slashes hide an AWS secret", `{"user":"aws_secret_access_key = wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY"}`,
			1, "[REDACTED:aws-secret-access-key]", "bPxRfiCY"},
		{"a \\u escape hides an AWS key id", `{"user":"key \u0041KIAIOSFODNN7EXAMPLE here"}`,
			1, `"key [REDACTED:aws-access-key-id] here"`, "IOSFODNN7"},
		{"a \\u escape hides a GitHub token", `{"ai":"ghp_\u0041bcdefghijklmnopqrstuvwxyz0123456789"}`,
			1, "[REDACTED:github-token]", "bcdefghijklmnop"},
		{"in a key/value pair of metadata", `{"metadata":{"aws_secret_access_key":"wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY"}}`,
			1, "[REDACTED:aws-secret-access-key]", "bPxRfiCY"},
		{"plain secrets as before", `{"user":"AKIAIOSFODNN7EXAMPLE and https:\/\/example.com"}`,
			1, `https:\/\/example.com`, "IOSFODNN7"},
		{"escapes without a secret stay byte for byte", `{"user":"caf\u00e9 \/ \u0041 \\u0041 \"q\" \n"}`,
			0, `{"user":"caf\u00e9 \/ \u0041 \\u0041 \"q\" \n"}`, ""},
		{"an escaped backslash is not an escape", `{"user":"\\u0041KIAIOSFODNN7EXAMPLE"}`,
			0, `\\u0041KIAIOSFODNN7EXAMPLE`, ""},
	}
	r := Default()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, n := r.RedactJSON([]byte(tc.line))
			if n != tc.n || !strings.Contains(string(out), tc.want) || (tc.notWant != "" && strings.Contains(string(out), tc.notWant)) {
				t.Fatalf("got %d: %s", n, out)
			}
			if n == 0 && !bytes.Equal(out, []byte(tc.line)) {
				t.Errorf("changed a line without secrets: %s", out)
			}
			if !json.Valid(out) {
				t.Errorf("not JSON any more: %s", out)
			}
		})
	}
	var nilR *Redactor
	if out, n := nilR.RedactJSON([]byte(`{"user":"\u0041KIAIOSFODNN7EXAMPLE"}`)); n != 0 || string(out) != `{"user":"\u0041KIAIOSFODNN7EXAMPLE"}` {
		t.Errorf("a nil redactor changed the line: %s", out)
	}
}

// FuzzUnescapeASCII: undoing the escapes keeps valid JSON valid, with the
// same value.
func FuzzUnescapeASCII(f *testing.F) {
	for _, s := range []string{`{"a":"\/\u0041\\u0041\u00e9\n"}`, `"\u0022\u005c\u007f\u001f"`, `["\`, `"\u00"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, changed := unescapeASCII([]byte(s))
		if !changed {
			if string(out) != s {
				t.Fatalf("unchanged but different: %q", out)
			}
			return
		}
		if !json.Valid([]byte(s)) {
			return
		}
		var a, b any
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("%q -> %q: %v", s, out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q -> %q: value changed", s, out)
		}
	})
}

// BenchmarkRedactJSON is BenchmarkRedact on the exchange as a raw JSON
// line. Without escapes of printable ASCII (as continuity log, Python and
// jq write) RedactJSON costs one scan for a backslash more than
// RedactBytes; with them (Go's json.Marshal writes "<" as "\u003c", PHP
// "/" as "\/") it redacts the line twice.
func BenchmarkRedactJSON(b *testing.B) {
	fields := map[string]string{"type": "exchange", "user": exchange2K[:600], "ai": exchange2K[600:]}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		b.Fatal(err)
	}
	plain := bytes.TrimSpace(buf.Bytes())
	html, err := json.Marshal(fields)
	if err != nil {
		b.Fatal(err)
	}
	if bytes.Equal(plain, html) {
		b.Fatal("the exchange has no character json.Marshal escapes")
	}
	slashes := bytes.ReplaceAll(plain, []byte("/"), []byte(`\/`))
	for _, c := range []struct {
		name string
		line []byte
	}{{"no-ascii-escapes", plain}, {"html-escapes", html}, {"escaped-slashes", slashes}} {
		b.Run(c.name+"/RedactBytes", func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			for b.Loop() {
				RedactBytes(c.line)
			}
		})
		b.Run(c.name+"/RedactJSON", func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			for b.Loop() {
				RedactJSON(c.line)
			}
		})
	}
}
