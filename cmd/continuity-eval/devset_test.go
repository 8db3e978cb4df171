package main

import (
	"testing"
)

// TestDevSet checks the developers' set as issue 32 asks for it: at least
// 60 questions, both halves of the split used, most decided one exchange
// after the question, every question sharing at most one content word with
// its evidence exchange (loadDevSet fails otherwise), and the layout
// putting each go-ahead right after its question.
func TestDevSet(t *testing.T) {
	ds, fs, err := loadDevSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 60 {
		t.Fatalf("%d questions, want at least 60", len(ds))
	}
	qs := devQuestions(ds)
	tune, held, next := 0, 0, 0
	for _, q := range qs {
		if inSplit(q.QID, splitTune) {
			tune++
		} else {
			held++
		}
		if q.Type == devNext {
			next++
		}
	}
	if tune < 20 || held < 20 {
		t.Errorf("split %d tune / %d held-out: want both halves of at least 20", tune, held)
	}
	if next*2 < len(qs) {
		t.Errorf("%d of %d questions decided one exchange later: want most", next, len(qs))
	}
	_, sessions := devLayout(ds, fs)
	for _, d := range ds {
		if d.kind() != devNext {
			continue
		}
		evs := sessions[d.Session]
		found := false
		for i := 1; i < len(evs); i++ {
			if evs[i].ID == devEventID(d.ID) {
				found = evs[i-1].User == d.Ask && evs[i].User == d.Go
			}
		}
		if !found {
			t.Errorf("%s: the go-ahead is not the exchange right after the question", d.ID)
		}
	}
}

// TestSharedContentWords: stop words do not count, stems do.
func TestSharedContentWords(t *testing.T) {
	got := sharedContentWords("how do the phones stay signed in?", "Phone sign-in stays as it is.")
	want := []string{"phone", "sign", "stay"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
