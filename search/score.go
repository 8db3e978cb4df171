package search

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/embed"
)

// Scores: what Result.Score means, the same for every query.
//
// A result's score estimates how relevant it is, in [0, 1], from the two
// kinds of evidence search has:
//
//   - lexical strength L: how much of the query's weight the exchange's
//     words cover. Each query term t (a stem, or a CJK phrase) weighs
//     w(t) = max(1, idf(t)), idf(t) = ln((N-n+0.5)/(n+0.5)) (n of the N
//     exchanges hold it: rare words weigh more; the floor of 1 keeps a
//     word informative in a small history, where BM25's idf is ~0 for a
//     word most exchanges share). The exchange holds t with the saturating
//     strength f/(f+k), f = 5·(count in the user text) + (count in the
//     assistant's and the files), k = k1·(1-b+b·D/300), k1 = 1.2 and
//     b = 0.75 (BM25's, with its column weights and its length
//     normalisation against a fixed exchange of 300 words: once in the
//     user's words of an average exchange gives 0.81, once in its answer
//     0.45). L = Σ w·strength / Σ w over the query's terms, an identifier
//     of the query counting as one term (ident.go). Holding every term
//     comes near 1; holding only the query's least telling word, near 0.
//     It depends neither on the size of the history nor on how many words
//     the query has.
//   - semantic strength V: the cosine similarity of the query's and the
//     exchange's vectors, rescaled linearly from the embedder's "unrelated"
//     level (0) to its "same meaning" level (1) and clamped (calibration,
//     measured per embedder on the dev set).
//
// Score = 1 - (1-L)·(1-V²/2) in hybrid mode (DefaultVectorShare,
// DefaultVectorPower): either kind of evidence alone can make a result
// relevant, both together more so (a noisy OR). BM25-only search scores L,
// vector-only V. A time the query names and supersession adjust it, and
// it orders the results (rank.go). Search drops the results scoring under
// the query's floor (Query.MinScore, DefaultMinScore by default, a gate:
// Searcher.Floor), so a query about nothing in the history returns
// nothing, or its closest matches marked weak.
//
// Calibrated with continuity-eval --dump-scores on the tune half of the
// dev set (45 questions, 6 nonsense queries in each question's history):
// the hashed embedder's unrelated texts reach cosines of 0.3 to 0.35 (shared
// character n-grams), hence its levels 0.35 and 0.85.

// BM25 parameters of FTS5's bm25() (fts5_aux.c).
const bm25K1 = 1.2

// DefaultMinScore is the score under which results are dropped unless the
// query sets its own floor (Query.MinScore): chosen on the tune half of
// the dev set so that queries about nothing in the history return nothing
// while real questions keep their evidence (see cmd/continuity-eval).
const DefaultMinScore = 0.2

// calibration maps an embedder's cosine similarities to [0, 1].
type calibration struct {
	unrelated, same float64
	// related is the cosine at and above which an exchange relates to
	// the query at all, by its meaning: below unrelated its similarity is
	// no evidence of relevance (it scores 0), but it is not nothing
	// either. When no result reaches the floor's gate, the closest such
	// exchanges are shown, marked weak (rank.go), and "nothing found" is
	// said only when there is none (and no word of the query matches).
	// 0: none (an embedder that relates no meaning).
	related float64
}

// calibrationFor returns the cosine levels of e's vector space, measured
// with continuity-eval --dump-scores: for the builtin hashed embedder on
// the dev set's tune half; for the others on uselite (USE-lite), whose
// top cosine for a nonsense query reaches 0.50 on the coding set (median
// 0.43), while its evidence exchanges have a median of 0.48: below 0.5 a
// cosine says nothing. Other model embedders get the same levels until
// measured.
func calibrationFor(e embed.Embedder) calibration {
	if e != nil && strings.HasPrefix(e.Identity(), embed.ProviderBuiltin+":") {
		// Its similarity is of words and character n-grams, which BM25
		// checks already: no relation by meaning (related 0).
		return calibration{unrelated: 0.35, same: 0.85}
	}
	// related, uselite: the question of a decision asked in other words
	// ("which database did we pick" and the exchange that chose among
	// Postgres, MySQL and SQLite) is near 0.5; queries about nothing in a
	// history of coding exchanges ("medieval falconry jesses and hoods")
	// stay under 0.3, a few nonsense strings reach 0.44 (shown weak then,
	// which says what it is).
	return calibration{unrelated: 0.5, same: 0.9, related: 0.35}
}

func (c calibration) strength(cos float64) float64 {
	if c.same <= c.unrelated {
		return clamp01(cos)
	}
	return clamp01((cos - c.unrelated) / (c.same - c.unrelated))
}

// lexTerm is one query term as the lexical strength counts it.
type lexTerm struct {
	term   analyze.Term
	weight float64
	// tokens are the index terms it matches in a row (a stem: one; a CJK
	// phrase: its bigrams); prefix: the last matches as a prefix.
	tokens []string
	prefix bool
}

// lexTerms weighs terms (docs: their document counts by key, total: the
// exchanges; see score.go).
func lexTerms(terms []analyze.Term, docs map[string]int64, total int64) []lexTerm {
	out := make([]lexTerm, 0, len(terms))
	for _, t := range terms {
		lt := lexTerm{term: t, weight: 1}
		if t.Key != "" {
			n := float64(docs[t.Key])
			lt.weight = max(1, math.Log((float64(total)-n+0.5)/(n+0.5)))
			lt.tokens = []string{t.Key}
		} else {
			// A CJK phrase: as rare as a word no other exchange holds.
			lt.weight = max(1, math.Log(float64(total)+0.5))
			e := strings.TrimPrefix(t.Expr, `"`)
			lt.prefix = strings.HasSuffix(e, `"*`)
			e = strings.TrimSuffix(strings.TrimSuffix(e, "*"), `"`)
			lt.tokens = strings.Fields(strings.ReplaceAll(e, `""`, `"`))
		}
		out = append(out, lt)
	}
	return out
}

// count returns how many times t occurs in the analysed tokens doc.
func (t lexTerm) count(doc []string) int {
	n := 0
	k := len(t.tokens)
	if k == 0 {
		return 0
	}
	for i := 0; i+k <= len(doc); i++ {
		ok := true
		for j, tok := range t.tokens {
			d := doc[i+j]
			if j == k-1 && t.prefix {
				ok = ok && strings.HasPrefix(d, tok)
			} else {
				ok = ok && d == tok
			}
			if !ok {
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// lexicalStrength is L of an exchange (user and ai texts) for terms.
func lexicalStrength(terms []lexTerm, user, ai string) float64 {
	return lexicalScore(terms, nil, user, ai, lengthNorm{})
}

// lengthNorm is BM25's normalisation of a term's strength by the length of
// the exchange: f/(f + k1·(1 - b + b·D/avg)), D the exchange's words (of
// the heads read: head). A long answer mentions many words in passing; an
// exchange of average length counts as before. b 0 turns it off.
type lengthNorm struct {
	b, avg float64
}

// Length normalisation of the lexical strength in search scores: BM25's
// b, and the words of an average exchange (a fixed figure, so that a
// score does not depend on the history). Chosen on the tune halves: see
// DefaultVectorShare.
const (
	lengthB   = 0.75
	lengthAvg = 300
)

// lexicalScore is L of an exchange (user text, and answer with the
// exchange's files) for the query's terms and identifiers (ident.go): the
// terms that belong to an identifier count through it.
func lexicalScore(terms []lexTerm, ids []identTerm, user, ai string, ln lengthNorm) float64 {
	return lexicalScoreField(terms, ids, user, ai, ln, nil)
}

// lexicalScoreField is lexicalScore with extra[i] added to the weighted
// count f of terms[i] (the neighbour field: neighbourfield.go); nil adds
// nothing.
func lexicalScoreField(terms []lexTerm, ids []identTerm, user, ai string, ln lengthNorm, extra []float64) float64 {
	if len(terms) == 0 && len(ids) == 0 {
		return 0
	}
	user, ai = head(user), head(ai)
	var stack [8]float64
	strengths := stack[:0]
	if len(terms) > len(stack) {
		strengths = make([]float64, 0, len(terms))
	}
	var k float64
	strengths, k = termStrengths(terms, user, ai, ln, strengths, extra)
	var memberStack [64]bool
	member := memberStack[:0]
	if len(ids) > 0 {
		member = memberStack[:]
		if len(terms) > len(member) {
			member = make([]bool, len(terms))
		}
		for _, it := range ids {
			for _, i := range it.members {
				member[i] = true
			}
		}
	}
	var got, all float64
	for i, t := range terms {
		if i < len(member) && member[i] {
			continue
		}
		all += t.weight
		got += t.weight * strengths[i]
	}
	for _, it := range ids {
		all += it.weight
		got += it.weight * it.strength(strengths, terms, user, ai, k)
	}
	if all <= 0 {
		return 0
	}
	return clamp01(got / all)
}

// countTerms sets cu[i] and ca[i] to how many times terms[i] stands in
// user and in ai, and returns the texts' token counts: from one pass over
// the bytes when both are ASCII (countASCII), else from their token
// lists.
func countTerms(terms []lexTerm, user, ai string, cu, ca []int) (nu, na int) {
	nu, okU := countASCII(terms, user, cu)
	na, okA := countASCII(terms, ai, ca)
	if !okU || !okA {
		u, a := scoredTokens(terms, user), scoredTokens(terms, ai)
		for i, t := range terms {
			cu[i], ca[i] = t.count(u), t.count(a)
		}
		nu, na = len(u), len(a)
	}
	return nu, na
}

// termStrengths appends to out the strength with which the exchange holds
// each term: f/(f+k), f = 5·(count in user) + (count in ai), k = k1
// length-normalised (ln), plus extra[i] when extra is not nil; and
// returns k.
func termStrengths(terms []lexTerm, user, ai string, ln lengthNorm, out []float64, extra []float64) ([]float64, float64) {
	// Most texts are ASCII and most queries have no CJK phrase: their
	// counts come from one pass over the bytes (countASCII), without
	// building the texts' token lists; the same counts, several times
	// faster (BenchmarkLexicalStrength).
	var stack [16]int
	counts := stack[:]
	if 2*len(terms) > len(stack) {
		counts = make([]int, 2*len(terms))
	}
	cu, ca := counts[:len(terms)], counts[len(terms):2*len(terms)]
	nu, na := countTerms(terms, user, ai, cu, ca)
	k := bm25K1
	if ln.b > 0 && ln.avg > 0 {
		k *= 1 - ln.b + ln.b*float64(nu+na)/ln.avg
	}
	for i := range terms {
		f := 5*float64(cu[i]) + float64(ca[i])
		if extra != nil {
			f += extra[i]
		}
		out = append(out, f/(f+k))
	}
	return out, k
}

// countASCII sets counts[i] to how many words of text have the stem of
// terms[i], as scoredTokens and count would find them, and returns the
// words of text and true; it returns false, leaving counts to the general
// path, when a word of text is not all ASCII or a term is a CJK phrase. An ASCII word is a run
// of letters and digits (analyze.Words), lowercased; only words sharing
// their first two letters with a term are stemmed (see scoredTokens).
// Non-ASCII punctuation, symbols and invalid bytes (which analyze.Words
// reads as U+FFFD) separate words.
func countASCII(terms []lexTerm, text string, counts []int) (words int, ok bool) {
	// Each term's first two bytes (scoredTokens' test of which words to
	// stem), as a key: bytes 1 and 2, and how many there are.
	var stack [8]uint32
	prefixes := stack[:0]
	for _, t := range terms {
		k := t.term.Key
		if k == "" {
			return 0, false
		}
		prefixes = append(prefixes, prefixKey(k))
	}
	clear(counts)
	var buf [64]byte
	for i := 0; i < len(text); {
		switch asciiClass[text[i]] {
		case classOther:
			i++
			continue
		case classNonASCII:
			// Punctuation (’ — “ …) separates words like ASCII's; a
			// letter starts a word the general path folds.
			r, size := utf8.DecodeRuneInString(text[i:])
			if analyze.IsWordRune(r) {
				return 0, false
			}
			i += size
			continue
		}
		j := i + 1
		for j < len(text) && asciiClass[text[j]] == classWord {
			j++
		}
		if j < len(text) && asciiClass[text[j]] == classNonASCII {
			if r, _ := utf8.DecodeRuneInString(text[j:]); analyze.IsWordRune(r) {
				return 0, false // the word goes on in a non-ASCII letter
			}
		}
		word := text[i:j]
		words++
		i = j
		p := prefixKey(word)
		matched := false
		for _, q := range prefixes {
			if p == q {
				matched = true
				break
			}
		}
		if !matched {
			continue
		}
		w := buf[:0]
		if len(word) > len(buf) {
			w = make([]byte, 0, len(word))
		}
		for k := 0; k < len(word); k++ {
			w = append(w, asciiLower[word[k]])
		}
		st := analyze.Stem(string(w))
		for k, t := range terms {
			if st == t.term.Key {
				counts[k]++
			}
		}
	}
	return words, true
}

// prefixKey packs the lowercased first two bytes of w and their number.
func prefixKey(w string) uint32 {
	switch len(w) {
	case 0:
		return 0
	case 1:
		return 1<<16 | uint32(asciiLower[w[0]])
	}
	return 2<<16 | uint32(asciiLower[w[0]])<<8 | uint32(asciiLower[w[1]])
}

// Byte classes of countASCII: analyze's word runes in ASCII (letters and
// digits), other ASCII, and the bytes of non-ASCII runes.
const (
	classOther = iota
	classWord
	classNonASCII
)

var asciiClass, asciiLower = func() (class, lower [256]byte) {
	for c := 0; c < 256; c++ {
		lower[c] = byte(c)
		switch {
		case c >= utf8.RuneSelf:
			class[c] = classNonASCII
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			class[c] = classWord
		case 'A' <= c && c <= 'Z':
			class[c] = classWord
			lower[c] = byte(c) + 'a' - 'A'
		}
	}
	return class, lower
}()

// scoredTokens returns the analysed tokens of text that terms may match:
// analyze.Document's, except that without a CJK term the words are not
// all stemmed — only those sharing their first two letters with a term
// (a stem keeps the first two letters of its word), the others are left
// as "" (they match nothing, and keep the positions).
func scoredTokens(terms []lexTerm, text string) []string {
	prefixes := map[string]bool{}
	for _, t := range terms {
		if t.term.Key == "" {
			return strings.Fields(analyze.Document(text))
		}
		k := t.term.Key
		prefixes[k[:min(2, len(k))]] = true
	}
	words := analyze.Words(text)
	for i, w := range words {
		if prefixes[w[:min(2, len(w))]] {
			words[i] = analyze.Stem(w)
		} else {
			words[i] = ""
		}
	}
	return words
}

// maxScoredText bounds the text of an exchange side whose words the
// lexical strength counts: the head of a 1 MB tool output says what it
// is about, and analysing it whole would cost milliseconds a result.
const maxScoredText = 16 << 10

// head returns the first maxScoredText bytes of s (cut at a rune start).
func head(s string) string {
	if len(s) <= maxScoredText {
		return s
	}
	cut := maxScoredText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}

// In a hybrid score the semantic strength counts as VectorShare·V^
// VectorPower (DefaultVectorShare, DefaultVectorPower): a prompt worded
// like the question without sharing its words is weaker evidence than the
// words themselves, and only a close paraphrase counts much. Chosen on the
// tune halves with the results ordered by their scores (continuity-eval
// --variants vp1,vp1.5,vs1,...): with V whole, prompts merely on the
// question's topic (V 0.4–0.5) outranked the answers holding its words,
// coding set hybrid any@5 0.455 against 0.523 with V²/2 (dev set 0.911
// against 0.867; V²/2 kept the coding set within a question of the rank
// fusion's order, V whole did not).
const (
	DefaultVectorShare = 0.5
	DefaultVectorPower = 2
)

// relevance is the score of a result of lexical strength l and semantic
// strength v.
func relevance(l, v float64) float64 { return 1 - (1-l)*(1-v) }

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// lexTermsOf returns the terms behind lts.
func lexTermsOf(lts []lexTerm) []analyze.Term {
	out := make([]analyze.Term, len(lts))
	for i, t := range lts {
		out[i] = t.term
	}
	return out
}
