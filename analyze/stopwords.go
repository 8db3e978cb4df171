package analyze

// Meaningless reports whether a lowercased word carries no meaning of its
// own: a stopword or a single ASCII letter (the "s" of "user's", the "t"
// of "don't").
func Meaningless[W ~string | ~[]byte](w W) bool {
	if len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
		return true
	}
	_, ok := stopwords[string(w)]
	return ok
}

// IsStopword reports whether the lowercased word w is on the stopword list.
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

// stopwords is a small list of English function words, plus the fragments
// contractions split into (don't -> don t).
var stopwords = func() map[string]struct{} {
	words := []string{
		"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could",
		"did", "do", "does", "doing", "down", "during",
		"each", "either",
		"few", "for", "from", "further",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself",
		"just",
		"me", "more", "most", "my", "myself",
		"no", "nor", "not", "now",
		"of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"same", "she", "should", "so", "some", "such",
		"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "us",
		"very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
		"you", "your", "yours", "yourself", "yourselves",
		// contraction fragments
		"don", "doesn", "didn", "isn", "aren", "wasn", "weren", "haven", "hasn", "hadn",
		"won", "wouldn", "shouldn", "couldn", "mustn", "needn", "ll", "ve", "re",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()
