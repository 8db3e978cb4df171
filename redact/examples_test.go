package redact

import (
	"strings"
	"testing"
)

// TestExamplesCoverEveryPattern: every built-in pattern has an example, and
// each example is redacted by its own pattern (and the text around it is
// kept).
func TestExamplesCoverEveryPattern(t *testing.T) {
	ex := Examples()
	for _, name := range Names() {
		text, ok := ex[name]
		if !ok {
			t.Errorf("pattern %q has no example in Examples()", name)
			continue
		}
		got, n := Redact(text)
		if n == 0 || !strings.Contains(got, Replacement(name)) {
			t.Errorf("%s: example not redacted by its pattern: %q -> %q", name, text, got)
		}
	}
	if len(ex) != len(Names()) {
		t.Errorf("%d examples for %d patterns", len(ex), len(Names()))
	}
}
