package index

import (
	"strings"
	"testing"
)

// The writer redacts with the default rules, taken while it opens the
// files (redactorLater); a read-only Open, which stores nothing, compiles
// none.
func TestRedactorOnlyForWriter(t *testing.T) {
	t.Setenv("CONTINUITY_REDACT", "")
	dir := testDir(t)
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.redactor == nil || w.redactorReady != nil {
		t.Fatalf("writer: redactor %v, still pending %v: want the default rules, received", w.redactor, w.redactorReady != nil)
	}
	f := newFeeder(t, w, "a.jsonl")
	// Built from parts: the repository holds no secret-shaped string
	// (redact.TestRepoHasNoFalsePositives).
	secret := "sk-" + "ant-" + strings.Repeat("x7", 14)
	commit(t, w, f.batch(exchangeAt("s", hour(1), "my key is "+secret, "")))
	var user string
	if err := w.r.QueryRow(`SELECT user FROM events`).Scan(&user); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(user, secret) || !strings.Contains(user, "[REDACTED") {
		t.Errorf("stored %q: the secret was not redacted", user)
	}
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.redactor != nil || r.redactorReady != nil {
		t.Errorf("read-only: redaction rules compiled")
	}
}
