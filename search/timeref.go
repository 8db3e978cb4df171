package search

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeRef is a span of time that a query names relative to when it is
// asked: "two weeks ago", "last Saturday", "in February", "over the past
// month". Hybrid search ranks the exchanges of the span higher (see
// Searcher.Search); it never hides the others, because people misremember
// dates and mention an event days after it happened.
type TimeRef struct {
	Phrase   string    // the words of the query that name the span
	From, To time.Time // the span, From inclusive, To exclusive
}

const day = 24 * time.Hour

// Units of relative time phrases. A month is 30 days and a year 365: the
// spans are generous enough that calendar precision does not matter.
var timeUnits = map[string]time.Duration{
	"day": day, "week": 7 * day, "month": 30 * day, "year": 365 * day,
}

// countWords are the counts spelled out in relative time phrases.
var countWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
	"a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var months = map[string]time.Month{
	"january": time.January, "february": time.February, "march": time.March, "april": time.April,
	"may": time.May, "june": time.June, "july": time.July, "august": time.August,
	"september": time.September, "october": time.October, "november": time.November, "december": time.December,
}

const (
	countRE = `(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple(?: of)?|(?:a )?few|several)`
	unitRE  = `(day|week|month|year)s?`
)

// timePatterns are tried in order; the first that matches wins. Each
// turns its submatches and the time of the query into a span.
var timePatterns = []struct {
	re   *regexp.Regexp
	span func(m []string, now time.Time) (from, to time.Time, ok bool)
}{
	// "two weeks ago", "3 days ago", "a month ago": around that point,
	// give or take a quarter of the distance (at least half a unit, and
	// a day), and the day itself.
	{regexp.MustCompile(`\b` + countRE + ` ` + unitRE + ` ago\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		n, ok := count(m[1])
		if !ok {
			return time.Time{}, time.Time{}, false
		}
		unit := timeUnits[m[2]]
		back, ok := distance(n, unit)
		if !ok {
			return time.Time{}, time.Time{}, false
		}
		slack := max(back/4, unit/2, day)
		at := now.Add(-back)
		return at.Add(-slack), at.Add(slack + day), true
	}},
	// "the past month", "the last 3 weeks", "the past few months": from
	// that far back until now.
	{regexp.MustCompile(`\b(?:past|last) (?:` + countRE + ` )?` + unitRE + `\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		n := 1
		if m[1] != "" {
			var ok bool
			if n, ok = count(m[1]); !ok {
				return time.Time{}, time.Time{}, false
			}
		}
		unit := timeUnits[m[2]]
		// "last week" is the previous calendar week: reach back two.
		if m[1] == "" && strings.Contains(m[0], "last") {
			n = 2
		}
		back, ok := distance(n, unit)
		if !ok {
			return time.Time{}, time.Time{}, false
		}
		return now.Add(-back), now.Add(day), true
	}},
	// "last Saturday": the latest such day before today, and the two
	// days after it, when it is told about.
	{regexp.MustCompile(`\blast (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		today := startOfDay(now)
		back := (int(today.Weekday()) - int(weekdays[m[1]]) + 7) % 7
		if back == 0 {
			back = 7
		}
		d := today.AddDate(0, 0, -back)
		return d.Add(-day), d.Add(3 * day), true
	}},
	// "yesterday", "the day before yesterday".
	{regexp.MustCompile(`\b(the day before )?yesterday\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		d := startOfDay(now).AddDate(0, 0, -1)
		if m[1] != "" {
			d = d.AddDate(0, 0, -1)
		}
		return d.Add(-day / 2), d.Add(day + day/2), true
	}},
	// "today", "this morning", "earlier today", "tonight".
	{regexp.MustCompile(`\b(today|this morning|this afternoon|this evening|tonight)\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		return now.Add(-day), now.Add(day), true
	}},
	// "this week", "this month", "this year": the part of it so far,
	// counted generously as a whole unit back.
	{regexp.MustCompile(`\bthis (week|month|year)\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		return now.Add(-timeUnits[m[1]]), now.Add(day), true
	}},
	// "in February", "last March", "during June": the latest such month
	// that has begun, and three days either side; "since June": from
	// then until now.
	{regexp.MustCompile(`\b(in|during|last|since) (january|february|march|april|may|june|july|august|september|october|november|december)\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		mo := months[m[2]]
		y := now.Year()
		if mo > now.Month() {
			y--
		}
		start := time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
		if m[1] == "since" {
			return start.Add(-3 * day), now.Add(day), true
		}
		return start.Add(-3 * day), start.AddDate(0, 1, 0).Add(3 * day), true
	}},
}

// ParseTimeRef finds a phrase of text that names a span of time relative
// to now, in English; when several do, the one of the first pattern in
// timePatterns' order. ok is false when there is none.
func ParseTimeRef(text string, now time.Time) (ref TimeRef, ok bool) {
	lower := strings.ToLower(text)
	for _, p := range timePatterns {
		m := p.re.FindStringSubmatchIndex(lower)
		if m == nil {
			continue
		}
		subs := make([]string, len(m)/2)
		for i := range subs {
			if m[2*i] >= 0 {
				subs[i] = lower[m[2*i]:m[2*i+1]]
			}
		}
		from, to, ok := p.span(subs, now)
		if !ok {
			continue
		}
		return TimeRef{Phrase: lower[m[0]:m[1]], From: from, To: to}, true
	}
	return TimeRef{}, false
}

// count reads a spelled-out or numeric count; zero and absurd counts are
// not counts.
func count(s string) (int, bool) {
	if n, ok := countWords[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// maxBack is the furthest back a relative time phrase is read: beyond,
// it is not about this workspace's history (and would overflow a
// time.Duration, about 292 years).
const maxBack = 100 * 365 * day

// distance is n units, if within maxBack.
func distance(n int, unit time.Duration) (time.Duration, bool) {
	if n <= 0 || n > int(maxBack/unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

func startOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}
