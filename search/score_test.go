package search

import (
	"strings"
	"testing"

	"github.com/praxis-os/continuity/analyze"
)

// TestLexicalStrength: L counts the query's terms as the index holds them
// (stems, CJK bigrams), weighs user text above the answer, and is 0 for
// an exchange without any of them.
func TestLexicalStrength(t *testing.T) {
	terms := func(q string) []lexTerm {
		return lexTerms(indexTerms(queryTerms(q, true)), map[string]int64{}, 100)
	}
	tests := []struct {
		query, user, ai string
		lo, hi          float64
	}{
		{"webhook retries", "Stripe retried the webhook", "", 0.75, 0.85}, // both, once each in the user text: 5/6.2
		{"webhook retries", "", "Stripe retried the webhook", 0.4, 0.5},   // in the answer: 1/2.2
		{"webhook retries", "the webhook", "", 0.35, 0.45},                // half the weight
		{"webhook retries", "nothing related", "at all", 0, 0},
		{"日本語", "日本語のテスト", "", 0.75, 0.85},
		{"語", "日本語", "", 0.75, 0.85},
		{"naive cafe", "Naïve Café", "", 0.75, 0.85},
	}
	for _, tc := range tests {
		got := lexicalStrength(terms(tc.query), tc.user, tc.ai)
		if got < tc.lo || got > tc.hi {
			t.Errorf("L(%q | %q, %q) = %.3f, want %.2f to %.2f", tc.query, tc.user, tc.ai, got, tc.lo, tc.hi)
		}
	}
	// The fast path counts what the analysed document holds.
	text := strings.Repeat("Retrying webhooks: the webhook retried, retries stopped. ", 20)
	lts := terms("webhook retries")
	fast, full := scoredTokens(lts, text), strings.Fields(analyze.Document(text))
	for _, lt := range lts {
		if a, b := lt.count(fast), lt.count(full); a != b || a == 0 {
			t.Errorf("%v: %d in the fast tokens, %d in the document", lt.tokens, a, b)
		}
	}
}
