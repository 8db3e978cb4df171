package index

import (
	"sync"

	"github.com/praxis-os/continuity/logformat"
)

// The full-text feed: during a backfill (BeginBackfill), each commit
// hands the exchanges it stored to the full-text writer in memory, which
// then need not read them back from index.db (readFullTextBatch: a
// query over every event, its texts copied out of SQLite again; 6 % of a
// backfill's CPU on short lines, more on long ones, where the full-text
// writer is the critical path).
//
// It is exact because it holds what a read would find:
//   - a commit's events get the row ids after the highest ever given
//     (CounterEventSeq), one after the other: a segment (after, last]
//     holds every event of those ids; the exchanges among them, with the
//     texts just stored (user, and ai with the files, SearchableAI);
//   - events are never updated once stored (schema.go), only deleted,
//     and a deletion (ftDeleting) that started after a commit began
//     makes its segment unusable, as for a batch read ahead (ftBatch):
//     the events are then read from index.db.
//
// A segment is used only where it continues the full-text watermark
// exactly; anything else (a gap, a deletion, a feed dropped for its
// size) falls back to reading index.db.
type ftFeed struct {
	mu    sync.Mutex
	segs  []ftSegment
	bytes int
}

// ftSegment is the events one commit stored: ids (after, last].
type ftSegment struct {
	after, last int64
	deleting    int64 // db.ftDeleting when the commit began
	todo        []ftExchange
	bytes       int
}

// ftFeedMaxBytes bounds the texts the feed holds: when the full-text
// writer falls behind by more (long texts), the feed is dropped and the
// writer reads index.db as without one.
const ftFeedMaxBytes = 4 * fullTextStepBytes

// feedExchange is how a commit adds a stored exchange to its segment:
// the texts as the events row holds them (user; ai, files JSON).
func feedExchange(todo []ftExchange, row int64, ev *logformat.Event, files any) []ftExchange {
	f, _ := files.(string)
	return append(todo, ftExchange{row: row, user: ev.User, ai: SearchableAI(ev.AI, f)})
}

// publish adds a committed segment.
func (f *ftFeed) publish(s ftSegment) {
	if s.last <= s.after {
		return
	}
	for i := range s.todo {
		s.bytes += len(s.todo[i].user) + len(s.todo[i].ai)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.segs); n > 0 && f.segs[n-1].last != s.after {
		f.segs, f.bytes = nil, 0 // a gap: what is held cannot be followed
	}
	if f.bytes+s.bytes > ftFeedMaxBytes {
		f.segs, f.bytes = nil, 0
		return
	}
	f.segs = append(f.segs, s)
	f.bytes += s.bytes
}

// take returns the batch of events past after that the feed holds, up
// to fullTextStep events and fullTextStepBytes of texts (at least one
// segment), or nil when it does not hold the events right after after.
// Segments before after are dropped; one that after cuts is cut.
func (f *ftFeed) take(after, deleting int64) *ftBatch {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.segs) > 0 && f.segs[0].last <= after {
		f.bytes -= f.segs[0].bytes
		f.segs = f.segs[1:]
	}
	if len(f.segs) == 0 || f.segs[0].after > after {
		return nil
	}
	if s := &f.segs[0]; s.after < after {
		// Read from index.db up to after already.
		k := 0
		for k < len(s.todo) && s.todo[k].row <= after {
			f.bytes -= len(s.todo[k].user) + len(s.todo[k].ai)
			s.bytes -= len(s.todo[k].user) + len(s.todo[k].ai)
			k++
		}
		s.todo, s.after = s.todo[k:], after
	}
	b := &ftBatch{after: after, last: after, deleting: deleting}
	size, k := 0, 0
	for ; k < len(f.segs); k++ {
		s := &f.segs[k]
		n := int(s.last - s.after)
		if s.after != b.last || s.deleting != deleting ||
			(k > 0 && (b.n+n > fullTextStep || size+s.bytes > fullTextStepBytes)) {
			break
		}
		b.todo = append(b.todo, s.todo...)
		b.last, b.n, size = s.last, b.n+n, size+s.bytes
	}
	if k == 0 {
		return nil // a deletion since: read index.db
	}
	f.segs = f.segs[k:]
	f.bytes -= size
	b.an = analyzeExchanges(b.todo)
	return b
}
