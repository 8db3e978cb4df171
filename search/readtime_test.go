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

// The words of a query are read with its time (ReadTime), once: the
// time-only test and the lexical side read that analysis, not the text.
// A weekday named alone is read with the time too.
func TestReadTextOnce(t *testing.T) {
	s := &Searcher{opts: Options{}.withDefaults()}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) // a Friday
	q := ReadTime(Query{Text: "what did we do yesterday", Now: now})
	if q.text == nil || !q.text.timeOnly() {
		t.Fatalf("ReadTime: text %+v", q.text)
	}
	if again := ReadTime(q); again.text != q.text {
		t.Errorf("ReadTime analysed the text again")
	}
	q.Text = "the sqlite lock yesterday" // read already: not looked at again
	if _, ok := s.TimeOnly(q); !ok {
		t.Errorf("TimeOnly read the text again")
	}
	w := ReadTime(Query{Text: "what did we do on Saturday", Now: now})
	if w.Named.OK || w.Named.Weekday == nil || w.Named.Weekday.Phrase != "on saturday" || !w.Named.Weekday.From.Equal(time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("ReadTime of a weekday: %+v %+v", w.Named, w.Named.Weekday)
	}
	if ref, ok := s.TimeOnly(w); !ok || !ref.From.Equal(w.Named.Weekday.From) {
		t.Errorf("TimeOnly of a weekday alone = %v, %v", ref, ok)
	}
	// In a query about something, the weekday names no span.
	if _, ok := s.TimeOnly(Query{Text: "the sqlite lock on saturday", Now: now}); ok {
		t.Errorf("TimeOnly of a weekday in a query about something")
	}
	// The lexical side counts the words around the time phrase.
	p := ReadTime(Query{Text: "the parser yesterday", Now: now})
	if p.text.timeOnly() || p.text.rest == nil || len(p.text.rest.terms(true)) != 1 || p.text.rest.terms(true)[0].Key != "parser" {
		t.Errorf("the text without its time phrase: %+v", p.text.rest)
	}
}
