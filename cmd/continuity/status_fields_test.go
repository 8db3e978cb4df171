package main

import (
	"strings"
	"testing"

	"github.com/praxis-os/continuity/engine"
)

// TestUnknownFieldHints: status names the protocol field an unknown field
// most likely stands for ("session" for session_id, "ts" for timestamp),
// and says nothing of a field that is no mistake.
func TestUnknownFieldHints(t *testing.T) {
	var b strings.Builder
	printProducerCounts(&b, engine.ProducerCounts{UnknownFieldNames: map[string]int64{"session": 3, "ts": 2, "mood": 1}})
	out := b.String()
	for _, want := range []string{`"session" 3 (write "session_id"?)`, `"ts" 2 (write "timestamp"?)`, `"mood" 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"mood" 1 (`) {
		t.Errorf("a field that is no mistake got a hint:\n%s", out)
	}
}
