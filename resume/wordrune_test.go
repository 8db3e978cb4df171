package resume

import (
	"testing"

	"github.com/praxis-os/continuity/analyze"
)

// Resume's cut reads words as search's terms do (analyze.IsWordRune): a
// private-use character (a Nerd Font or Powerline glyph) is part of a
// word in both; before issue 29 the cut had its own definition, which
// left it out.
func TestCutWordsAsTerms(t *testing.T) {
	for _, s := range []string{"abc", "é", "٣", "\ue0b0", "\U000F0000", "x\u0301"} {
		if !hasWords(s) {
			t.Errorf("hasWords(%q) = false", s)
		}
		if !analyze.IsWordRune([]rune(s)[0]) {
			t.Errorf("analyze.IsWordRune(%q) = false", s)
		}
	}
	for _, s := range []string{"", " ", "--- ", "→", "…"} {
		if hasWords(s) {
			t.Errorf("hasWords(%q) = true", s)
		}
	}
	// The word holding a glyph starts at the glyph (offset 3; the cut's
	// own definition made it start after it, at 6); its term is "main".
	if i := firstHit("-- \ue0b0main --", terms{"main": true}); i != 3 {
		t.Errorf("firstHit of a word led by a glyph = %d, want 3", i)
	}
}
