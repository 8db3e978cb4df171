package search

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/lazyre"
)

// TimeRef is a span of time that a query names relative to when it is
// asked: "yesterday", "last Wednesday", "this morning", "two weeks ago",
// "in February", "over the past month". Hybrid search ranks the exchanges
// of the span higher (see Searcher.Search); it never hides the others,
// because people misremember dates and mention an event days after it
// happened. A query that names nothing but a time ("what did we do
// yesterday") gets the span's exchanges, newest first (TimeOnly).
//
// Calendar words mean calendar spans in the time zone of the time the
// query is asked at (Query.Now's location: the asker's local time):
// "yesterday" is the previous day from midnight to midnight, whatever the
// hour; "last Wednesday" the most recent Wednesday before today, that day
// only; "this morning" today until noon; "last week" the previous week,
// Monday to Monday. Days are counted on the calendar (time.AddDate), so a
// day of 23 or 25 hours at a daylight-saving change is still one day.
// Counts of larger units ("two weeks ago", "a month ago") are read
// loosely: the point in time, give or take a quarter of the distance.
type TimeRef struct {
	Phrase   string    // the words of the query that name the span
	From, To time.Time // the span, From inclusive, To exclusive
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
	countRE   = `(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple(?: of)?|(?:a )?few|several)`
	unitRE    = `(hour|day|week|month|year)s?`
	weekdayRE = `(sunday|monday|tuesday|wednesday|thursday|friday|saturday)`
	monthRE   = `(january|february|march|april|may|june|july|august|september|october|november|december)`
	// partRE: the parts of a day a phrase can name.
	partRE = `(morning|afternoon|evening|night)`
)

// Parts of a day, as hours from its midnight: morning until noon,
// afternoon until 18:00, evening until midnight; a night runs from 18:00
// to 06:00 the next day.
var dayParts = map[string][2]int{
	"morning": {0, 12}, "afternoon": {12, 18}, "evening": {18, 24}, "night": {18, 30},
}

// timePattern is one way of naming a span: the first pattern of
// timePatterns that matches wins.
type timePattern struct {
	re   func() *regexp.Regexp // compiled on first use (lazyre)
	span func(m []string, now time.Time) (from, to time.Time, ok bool)
}

// timePatterns are tried in order; the first that matches wins. Each
// turns its submatches and the time of the query into a span.
var timePatterns = []timePattern{
	{lazyre.New(`\b` + countRE + ` ` + unitRE + ` ago\b`), spanAgo},
	{lazyre.New(`\b(past|last) (?:` + countRE + ` )?` + unitRE + `\b`), spanPast},
	// "last Saturday": the most recent such day before today, that day
	// only (asked on a Saturday, a week ago). "On Monday" alone is not
	// read: it names any Monday as often as the last one (on the dev
	// set, reading it as the last cost a question its evidence).
	{lazyre.New(`\blast ` + weekdayRE + `\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		today := startOfDay(now)
		back := (int(today.Weekday()) - int(weekdays[m[1]]) + 7) % 7
		if back == 0 {
			back = 7
		}
		d := today.AddDate(0, 0, -back)
		return d, d.AddDate(0, 0, 1), true
	}},
	// "last night": yesterday 18:00 to today 06:00.
	{lazyre.New(`\blast night\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		from, to := partOf(startOfDay(now).AddDate(0, 0, -1), "night")
		return from, to, true
	}},
	// "the day before yesterday", "yesterday", "yesterday morning": that
	// calendar day (or that part of it).
	{lazyre.New(`\b(the day before )?yesterday(?: (?:in the )?` + partRE + `)?\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		d := startOfDay(now).AddDate(0, 0, -1)
		if m[1] != "" {
			d = d.AddDate(0, 0, -1)
		}
		if m[2] != "" {
			from, to := partOf(d, m[2])
			return from, to, true
		}
		return d, d.AddDate(0, 0, 1), true
	}},
	// "this morning", "this afternoon", "this evening", "tonight": that
	// part of today.
	{lazyre.New(`\b(?:this ` + partRE + `|(tonight))\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		part := m[1]
		if m[2] != "" || part == "night" {
			part = "evening"
		}
		from, to := partOf(startOfDay(now), part)
		return from, to, true
	}},
	// "today", "earlier today": today, midnight to midnight.
	{lazyre.New(`\b(?:earlier )?today\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		d := startOfDay(now)
		return d, d.AddDate(0, 0, 1), true
	}},
	// "this week", "this month", "this year": from its start until
	// the end of today.
	{lazyre.New(`\bthis (week|month|year)\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		return startOf(m[1], now), startOfDay(now).AddDate(0, 0, 1), true
	}},
	// "in February", "last March", "during June": the latest such month
	// that has begun, the whole month; "since June": from its first day
	// until the end of today.
	{lazyre.New(`\b(in|during|last|since) ` + monthRE + `\b`), func(m []string, now time.Time) (time.Time, time.Time, bool) {
		mo := months[m[2]]
		y := now.Year()
		if mo > now.Month() {
			y--
		}
		start := time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
		if m[1] == "since" {
			return start, startOfDay(now).AddDate(0, 0, 1), true
		}
		return start, start.AddDate(0, 1, 0), true
	}},
}

// spanAgo reads "two weeks ago", "3 days ago", "an hour ago". Days are
// calendar days: "3 days ago" is that day, midnight to midnight (give or
// take a quarter of the distance from 8 days back). Hours, weeks, months
// and years are read loosely: around that point, give or take a quarter
// of the distance (at least half a unit, and a day beyond hours).
func spanAgo(m []string, now time.Time) (time.Time, time.Time, bool) {
	n, ok := count(m[1])
	if !ok || !withinMaxBack(n, m[2]) {
		return time.Time{}, time.Time{}, false
	}
	switch m[2] {
	case "hour":
		back := time.Duration(n) * time.Hour
		slack := max(back/4, 30*time.Minute)
		at := now.Add(-back)
		return at.Add(-slack), at.Add(slack), true
	case "day":
		d := startOfDay(now).AddDate(0, 0, -n)
		slack := n / 4
		if n < 8 {
			slack = 0
		}
		return d.AddDate(0, 0, -slack), d.AddDate(0, 0, 1+slack), true
	}
	days := unitDays(m[2]) * n
	slack := max(days/4, unitDays(m[2])/2, 1)
	d := startOfDay(now).AddDate(0, 0, -days)
	return d.AddDate(0, 0, -slack), d.AddDate(0, 0, 1+slack), true
}

// spanPast reads "the past month", "the last 3 weeks", "the past few
// hours": from that far back until the end of today (now, for hours);
// and "last week", "last month", "last year" without a count: the previous
// calendar week (Monday to Monday), month or year.
func spanPast(m []string, now time.Time) (time.Time, time.Time, bool) {
	unit := m[3]
	if m[1] == "last" && m[2] == "" && unit != "hour" && unit != "day" {
		this := startOf(unit, now)
		switch unit {
		case "week":
			return this.AddDate(0, 0, -7), this, true
		case "month":
			return this.AddDate(0, -1, 0), this, true
		}
		return this.AddDate(-1, 0, 0), this, true
	}
	n := 1
	if m[2] != "" {
		var ok bool
		if n, ok = count(m[2]); !ok {
			return time.Time{}, time.Time{}, false
		}
	}
	if !withinMaxBack(n, unit) {
		return time.Time{}, time.Time{}, false
	}
	end := startOfDay(now).AddDate(0, 0, 1)
	switch unit {
	case "hour":
		return now.Add(-time.Duration(n) * time.Hour), now.Add(time.Minute), true
	case "month":
		return startOfDay(now).AddDate(0, -n, 0), end, true
	case "year":
		return startOfDay(now).AddDate(-n, 0, 0), end, true
	}
	return startOfDay(now).AddDate(0, 0, -unitDays(unit)*n), end, true
}

// partOf is the span of a part of the day d (a midnight): morning,
// afternoon, evening or night.
func partOf(d time.Time, part string) (time.Time, time.Time) {
	h := dayParts[part]
	at := func(hour int) time.Time {
		return time.Date(d.Year(), d.Month(), d.Day()+hour/24, hour%24, 0, 0, 0, d.Location())
	}
	return at(h[0]), at(h[1])
}

// startOf is the start of the week (Monday), month or year holding now.
func startOf(unit string, now time.Time) time.Time {
	d := startOfDay(now)
	switch unit {
	case "week":
		back := (int(d.Weekday()) + 6) % 7 // days since Monday
		return d.AddDate(0, 0, -back)
	case "month":
		return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, d.Location())
	}
	return time.Date(d.Year(), time.January, 1, 0, 0, 0, 0, d.Location())
}

// unitDays is the length of a unit in days: a month 30, a year 365 (the
// loose readings only).
func unitDays(unit string) int {
	switch unit {
	case "week":
		return 7
	case "month":
		return 30
	case "year":
		return 365
	}
	return 1
}

// ParseTimeRef finds a phrase of text that names a span of time relative
// to now, in English; when several do, the one of the first pattern in
// timePatterns' order. ok is false when there is none. Calendar spans are
// in now's location.
func ParseTimeRef(text string, now time.Time) (ref TimeRef, ok bool) {
	lower := strings.ToLower(text)
	for _, p := range timePatterns {
		m := p.re().FindStringSubmatchIndex(lower)
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
		if !ok || !from.Before(to) {
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

// maxBackDays is the furthest back a relative time phrase is read:
// beyond, it is not about this workspace's history.
const maxBackDays = 100 * 365

// withinMaxBack reports whether n units back is within maxBackDays.
func withinMaxBack(n int, unit string) bool {
	if unit == "hour" {
		return n > 0 && n <= maxBackDays*24
	}
	return n > 0 && n <= maxBackDays/unitDays(unit)
}

func startOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}
