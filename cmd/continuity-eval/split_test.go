package main

import "testing"

func TestSplitHalvesArePartition(t *testing.T) {
	var qs []question
	for _, id := range []string{"07741c45", "0862e8bf", "08f4fc43", "0a995998", "0bc8ad93", "0e4e4c46", "gpt4_59149c78", "x", "y", "z"} {
		qs = append(qs, question{QID: id})
	}
	tune, err := filterSplit(qs, splitTune)
	if err != nil {
		t.Fatal(err)
	}
	held, err := filterSplit(qs, splitHeldOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(tune)+len(held) != len(qs) {
		t.Fatalf("tune %d + heldout %d != %d", len(tune), len(held), len(qs))
	}
	seen := map[string]bool{}
	for _, q := range append(tune, held...) {
		if seen[q.QID] {
			t.Fatalf("%s in both halves", q.QID)
		}
		seen[q.QID] = true
	}
	if _, err := filterSplit(qs, "half"); err == nil {
		t.Fatal("unknown split accepted")
	}
}
