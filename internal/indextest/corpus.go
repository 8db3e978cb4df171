package indextest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Words are the words of the bm25 engine's exactness tests' texts: a few very common
// ones (so that FTS5's IDF floor and dropCommon come into play), many
// rarer ones, inflections that share a stem, capitals, diacritics and CJK
// (which FTS5 answers: not single index terms).
var Words = func() []string {
	ws := strings.Fields(`the the the the and and of build build builds building deploy deployed deploying
		cache caching cached docker image layer timeout timeouts retry retried webhook stripe payment
		invoice database migration migrations index indexes query queries latency sqlite lock locks
		watcher token budget resume resumed session sessions search vector fusion ranking stemmer
		kernel memory leak Leak LEAK café naïve résumé Ångström 東京 日本語 データ`)
	for i := range 300 {
		ws = append(ws, fmt.Sprintf("rare%d", i))
	}
	return ws
}()

// Corpus returns n exchanges of random Words (Zipf-like: the first
// words far more often), over sessions s0..s(sessions-1), one an hour
// from hour first, with a resume link s(k+1) -> s(k) for k < 4.
func Corpus(rng *rand.Rand, first, n, sessions int) []string {
	z := rand.NewZipf(rng, 1.2, 3, uint64(len(Words)-1))
	pick := func(k int) string {
		var b []string
		for range k {
			b = append(b, Words[z.Uint64()])
		}
		return strings.Join(b, " ")
	}
	var lines []string
	for i := first; i < first+n; i++ {
		lines = append(lines, Exchange(fmt.Sprintf("x%d", i), fmt.Sprintf("s%d", i%sessions), At(i), pick(1+rng.IntN(12)), pick(rng.IntN(40))))
		if i == first {
			for k := range min(4, sessions-1) {
				lines = append(lines, Resume(fmt.Sprintf("s%d", k), fmt.Sprintf("s%d", k+1), At(i)))
			}
		}
	}
	return lines
}

// Query is a random query of 1 to 6 words, sometimes with a word no
// exchange holds or one repeated.
func Query(rng *rand.Rand) string {
	var ws []string
	for range 1 + rng.IntN(6) {
		ws = append(ws, Words[rng.IntN(len(Words))])
	}
	switch rng.IntN(6) {
	case 0:
		ws = append(ws, "nowhere")
	case 1:
		ws = append(ws, ws[0])
	}
	return strings.Join(ws, " ")
}
