package analyze

import (
	"math/rand/v2"
	"testing"
)

// TestStemmer: a Stemmer's stems are AppendStem's, from its cache or not
// (words met again, words whose slots collide, words too long for it,
// words that are not stemmed).
func TestStemmer(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"running", "runs", "ran", "generalization", "relational", "skies", "dying", "a", "is", "x1", "naïve", "internationalization", "caresses"}
	for range 40000 {
		b := make([]byte, 1+r.IntN(20))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz"[r.IntN(26)]
		}
		words = append(words, string(b))
	}
	var s Stemmer
	for round := range 2 {
		for _, w := range words {
			if got, want := string(s.AppendStem([]byte("x"), []byte(w))), "x"+string(AppendStem(nil, []byte(w))); got != want {
				t.Fatalf("round %d, %q: Stemmer %q, AppendStem %q", round, w, got, want)
			}
		}
	}
}
