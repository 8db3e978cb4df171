package logformat

import "strings"

// KnownTypes are the event types of protocol version 1.
var KnownTypes = []string{TypeExchange, TypeContextReset, TypeSessionResume}

// LooksLikeKnownType returns the known type that typ, an unknown type, is
// most likely a typo of, or "" when it is not close to any: equal once
// the '_' are removed ("contextreset"), or at most one edit away (a
// character added, removed or changed, or two neighbours swapped:
// "exchnage", "exchanges", "context_rest"), two from a type of 10 or more
// characters ("session_resumd_"). Unknown types are otherwise
// accepted (forward compatibility), so a typo would make a known event
// vanish from every answer; a later protocol version will not name a new
// type this close to an existing one.
func LooksLikeKnownType(typ string) string {
	for _, k := range KnownTypes {
		if typ == k {
			return ""
		}
	}
	bare := strings.ReplaceAll(typ, "_", "")
	for _, k := range KnownTypes {
		if bare == strings.ReplaceAll(k, "_", "") || editDistance(typ, k, maxTypo(k)) <= maxTypo(k) {
			return k
		}
	}
	return ""
}

// maxTypo is how many edits away from known a typo may be: two edits
// from a short name reach other words ("change" from "exchange").
func maxTypo(known string) int {
	if len(known) >= 10 {
		return 2
	}
	return 1
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions, adjacent transpositions), or
// max+1 when it is above max.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if prev[len(b)] > max {
		return max + 1
	}
	return prev[len(b)]
}
