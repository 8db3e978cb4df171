package index

// Queries that count or list events by type. Nearly every event is an
// exchange, and only the others are indexed by type (events_other, a
// partial index: an exchange's insert skips it). So these queries read
// the few other events from events_other, naming its condition
// (type != 'exchange') for the planner to use it, and count exchanges as
// all events minus the others: every query here reads indexes only, never
// the events' rows (which hold the texts). typecounts_test.go checks the plans.
const (
	// countEventsSQL counts all events (from the smallest index).
	countEventsSQL = `SELECT count(*) FROM events`

	// otherTypesSQL counts the events of each type but exchange.
	otherTypesSQL = `SELECT type, count(*) FROM events WHERE type != 'exchange' GROUP BY type`

	// otherEventsSQL lists the events that are not exchanges.
	otherEventsSQL = `SELECT id, type FROM events WHERE type != 'exchange'`

	// otherIDsSQL lists the row ids of the events that are not exchanges.
	otherIDsSQL = `SELECT id FROM events INDEXED BY events_other WHERE type != 'exchange'`

	// countExchangesSQL counts the exchanges.
	countExchangesSQL = `(SELECT count(*) FROM events) - (SELECT count(*) FROM events WHERE type != 'exchange')`
)

// countExchangesAfter counts the exchanges above a row id, bound (an SQL
// expression, evaluated twice): a range of events_meta minus the other
// events of events_other (which, holding few, is read whole).
func countExchangesAfter(bound string) string {
	return `(SELECT count(*) FROM events INDEXED BY events_meta WHERE id > ` + bound + `)
		- (SELECT count(*) FROM events INDEXED BY events_other WHERE type != 'exchange' AND id > ` + bound + `)`
}
