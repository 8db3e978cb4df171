package search

import (
	"testing"
	"time"
)

// The time a query names is read once (ReadTime): TimeSpan and TimeOnly
// read Query.Named, not the text again. A Named that disagrees with the
// text shows which one they read.
func TestReadTimeOnce(t *testing.T) {
	s := &Searcher{opts: Options{}.withDefaults()}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	q := ReadTime(Query{Text: "what did we do yesterday", Now: now})
	if q.Named == nil || !q.Named.OK || q.Named.Ref.Phrase != "yesterday" {
		t.Fatalf("ReadTime: %+v", q.Named)
	}
	if again := ReadTime(q); again.Named != q.Named {
		t.Errorf("ReadTime read the text again")
	}
	fake := TimeRef{Phrase: "yesterday", From: now.AddDate(0, 0, -30), To: now.AddDate(0, 0, -29)}
	q.Named = &NamedTime{Ref: fake, OK: true}
	if ref, ok := s.TimeSpan(q); !ok || !ref.From.Equal(fake.From) {
		t.Errorf("TimeSpan = %v, %v: want the span read once (%v)", ref, ok, fake.From)
	}
	if ref, ok := s.TimeOnly(q); !ok || !ref.From.Equal(fake.From) {
		t.Errorf("TimeOnly = %v, %v: want the span read once (%v)", ref, ok, fake.From)
	}
	q.Named = &NamedTime{}
	if _, ok := s.TimeSpan(q); ok {
		t.Errorf("TimeSpan found a span that Named says the text does not name")
	}
	// Without ReadTime, the text is read when asked.
	if ref, ok := s.TimeSpan(Query{Text: "the parser yesterday", Now: now}); !ok || ref.Phrase != "yesterday" {
		t.Errorf("TimeSpan without Named = %v, %v", ref, ok)
	}
}
