package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// TestLexicalStrength: L counts the query's terms as the index holds them
// (stems, CJK bigrams), weighs user text above the answer, and is 0 for
// an exchange without any of them.
func TestLexicalStrength(t *testing.T) {
	terms := func(q string) []lexTerm {
		return lexTerms(plainTerms(q), map[string]int64{}, 100)
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

// TestCountASCII: the one-pass count of ASCII texts gives the counts of
// the analysed tokens (scoredTokens, count), on edge cases and on the
// LongMemEval texts when the dataset is there; non-ASCII texts and CJK
// terms are left to the general path.
func TestCountASCII(t *testing.T) {
	terms := func(q string) []lexTerm {
		return lexTerms(plainTerms(q), map[string]int64{}, 100)
	}
	queries := []string{
		"webhook retries", "How many WEBHOOKS did we retry in 2023?", "a b c", "I", "go", "x1 x12 running runs ran",
		"what did I say about my sister's wedding last month", "connection connected connect connecting",
	}
	texts := []string{
		"", "a", "A b C", "Retrying webhooks: the webhook retried, retries stopped.", "webhook", "WEBHOOK!", "x1x12 x1 X12",
		"run,running;RUNS ran-ran", "go gopher GO go-to", "trailing webhook", "webhook\n\tretries\r\n", "I i ii iii",
		strings.Repeat("connection connected; connects ", 50), "my sister's wedding was last month, I said",
	}
	for i, q := range benchQuestions() {
		if i%5 == 0 {
			queries = append(queries, q)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(shareddata.LongMemEval(), "logs", "*.jsonl")); len(logs) > 0 {
		data, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(data), "\n") {
			var x struct{ User, AI string }
			if i < 300 && json.Unmarshal([]byte(l), &x) == nil {
				texts = append(texts, x.User, x.AI)
			}
		}
	}
	t.Logf("%d queries, %d texts", len(queries), len(texts))
	for _, q := range queries {
		lts := terms(q)
		for _, text := range texts {
			got := make([]int, len(lts))
			words, ok := countASCII(lts, text, got)
			if !ok {
				continue
			}
			toks := scoredTokens(lts, text)
			if words != len(toks) {
				t.Fatalf("query %q, %.80q: %d words, analysed tokens are %d", q, text, words, len(toks))
			}
			for i, lt := range lts {
				if want := lt.count(toks); got[i] != want {
					t.Fatalf("query %q, term %v in %.80q: %d, analysed tokens hold %d", q, lt.tokens, text, got[i], want)
				}
			}
		}
	}
	texts = append(texts, "it’s the webhook’s retries — “quoted” … done", "webhook\xffretries \xe2\x80 webhook", "emoji 🎉webhook🎉 retries",
		"x\u00a0webhook\u2003retries", "K\u212Aelvin webhook")
	for _, q := range queries {
		lts := terms(q)
		for _, text := range texts[len(texts)-5:] {
			got := make([]int, len(lts))
			if _, ok := countASCII(lts, text, got); !ok {
				if !strings.Contains(text, "\u212A") {
					t.Errorf("%q took the general path", text)
				}
				continue
			}
			toks := scoredTokens(lts, text)
			for i, lt := range lts {
				if want := lt.count(toks); got[i] != want {
					t.Fatalf("query %q, term %v in %q: %d, analysed tokens hold %d", q, lt.tokens, text, got[i], want)
				}
			}
		}
	}
	if _, ok := countASCII(terms("café"), "Café au lait", make([]int, 1)); ok {
		t.Error("a text with a non-ASCII letter took the ASCII path")
	}
	if _, ok := countASCII(terms("webhook"), "webhookü", make([]int, 1)); ok {
		t.Error("a word going on in a non-ASCII letter took the ASCII path")
	}
	if _, ok := countASCII(terms("日本語"), "plain text", make([]int, 3)); ok {
		t.Error("a CJK term took the ASCII path")
	}
}

// BenchmarkLexicalStrength: L of LongMemEval-sized texts.
func BenchmarkLexicalStrength(b *testing.B) {
	lts := lexTerms(plainTerms("how did we fix the webhook retries from the payment provider"), map[string]int64{}, 100)
	user := strings.Repeat("I keep getting the same notification from the payment provider, it retries forever. ", 20)
	ai := strings.Repeat("Webhook retries happen when your endpoint does not answer 2xx in time; fix the handler. ", 120)
	b.Run("ascii", func(b *testing.B) {
		for b.Loop() {
			lexicalStrength(lts, user, ai)
		}
	})
	b.Run("analysed", func(b *testing.B) { // the general path, for comparison
		for b.Loop() {
			u, a := scoredTokens(lts, user), scoredTokens(lts, ai)
			for _, t := range lts {
				t.count(u)
				t.count(a)
			}
		}
	})
}

// plainTerms are the BM25 terms of a query's words, without its
// identifiers' parts.
func plainTerms(q string) []analyze.Term {
	a := analyseText(q)
	a.ids = nil
	return a.terms(true)
}
