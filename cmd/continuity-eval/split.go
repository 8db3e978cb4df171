package main

import (
	"fmt"
	"hash/fnv"
)

// Splits of the dev set. Policy choices (fusion weights, resume shares,
// score floors) are tuned on one half and reported on the other, so that a
// reported figure is never the tuning set's own. The halves are fixed by the
// question id alone, so every tool and every session agrees on them without
// a list to keep in sync.
const (
	splitAll     = "all"
	splitTune    = "tune"    // fnv32a(qid) even: choose settings here
	splitHeldOut = "heldout" // fnv32a(qid) odd: report figures here
)

// inSplit reports whether the question qid belongs to split.
func inSplit(qid, split string) bool {
	switch split {
	case splitAll, "":
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(qid))
	even := h.Sum32()%2 == 0
	if split == splitTune {
		return even
	}
	return !even
}

// filterSplit keeps the questions of split, or says why it cannot.
func filterSplit(qs []question, split string) ([]question, error) {
	switch split {
	case splitAll, "", splitTune, splitHeldOut:
	default:
		return nil, fmt.Errorf("--split %q: want %s, %s or %s", split, splitAll, splitTune, splitHeldOut)
	}
	var out []question
	for _, q := range qs {
		if inSplit(q.QID, split) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--split %s: no question in this half", split)
	}
	return out, nil
}
