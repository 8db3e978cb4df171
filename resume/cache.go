package resume

// What a long-running process (the daemon) keeps between packs.
//
// Without a Cache every pack follows the chain's links (a query per
// session), reads the timeline of all its sessions (every exchange's row
// id, session and time: 100k rows for a 50-session chain at 100k
// exchanges), lays out the candidates, reads the texts of the exchanges it
// tries and counts their tokens. None of that depends on the query or the
// budget, and little of it changes between two packs. A Cache keeps:
//
//   - the session links (all of them: they are few);
//   - each session's timeline (its exchanges and context resets, without
//     texts);
//   - each chain's layout (select.go: timeline, candidates, boundary,
//     per-session spans), by session, depth cap and IncludeCurrent;
//   - the exchanges' texts read lately (by row id: a stored event never
//     changes);
//   - token counts (counts.go);
//   - the exchanges' shapes: what cutting them needs whatever the query
//     (shape.go).
//
// Invalidation. Each pack starts by reading the index's ChangeMark (one
// small query). Equal to the cache's: everything kept is current. A new
// epoch (events deleted: a session forgotten) or an unknown index: all is
// dropped. New events only (rows above the cache's Seq): their sessions'
// timelines and the layouts of every chain holding one of those sessions
// are dropped, and with a session_resume among them, the links and every
// layout too. The full-text index is not kept here (the ranking is asked
// for each pack), so its rebuild needs nothing. Whatever is built while
// the cache is being invalidated is not stored (a generation counter), so
// a pack never stores data older than the mark it checked.
//
// The packs are the same with or without a Cache, byte for byte
// (TestCacheSamePacks).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
)

// CacheConfig bounds a Cache. Zero fields take the defaults.
type CacheConfig struct {
	// TimelineEntries bounds the sessions' timelines kept, in entries
	// (16 bytes each); DefaultCacheTimelineEntries when 0.
	TimelineEntries int
	// LayoutEntries bounds the chains' layouts kept, in timeline entries
	// (about 100 bytes each with the candidates); DefaultCacheLayoutEntries
	// when 0.
	LayoutEntries int
	// EventBytes bounds the exchanges' texts kept; DefaultCacheEventBytes
	// when 0.
	EventBytes int
	// CountEntries bounds the token counts kept, per generation (see
	// counts.go); DefaultCountCacheEntries when 0.
	CountEntries int
	// ShapeBytes bounds the exchanges' shapes kept (shape.go);
	// DefaultCacheShapeBytes when 0.
	ShapeBytes int
	// MaxDelta is how many new events a pack looks at one by one to know
	// which sessions changed; more than that (a backfill), and
	// everything is dropped instead. DefaultCacheMaxDelta when 0.
	MaxDelta int64
}

// Defaults of CacheConfig. What is kept is bounded by what packs asked
// for: at 100k exchanges all the chains of the bench (a 50-session chain
// and 20 of 5 sessions) fit well within the bounds. The bounds (about 100 MiB in
// all: 16 MiB of timelines, the rest layouts, texts, counts and shapes) matter at
// a million exchanges, where a 50-session chain alone lays out 333k
// entries and the bench's 20 short chains 660k: their sessions' timelines
// fit, so a chain whose layout was evicted is laid out again from memory.
const (
	DefaultCacheTimelineEntries = 1_000_000
	DefaultCacheLayoutEntries   = 400_000
	DefaultCacheEventBytes      = 8 << 20
	DefaultCacheShapeBytes      = 8 << 20
	DefaultCacheMaxDelta        = 20_000
)

// Cache keeps what resume reads from an index between packs (see above).
// Give it to IndexSource.Cache; one Cache serves one index. Safe for
// concurrent use.
type Cache struct {
	cfg    CacheConfig
	counts *countCache
	shapes *shapeStore

	// syncMu serialises sync (its queries run outside mu).
	syncMu sync.Mutex

	mu     sync.Mutex
	db     *index.DB // the index the contents come from; nil: none yet
	mark   index.ChangeMark
	gen    uint64 // bumped by every invalidation
	clock  uint64 // use stamps, for eviction
	links  map[string][]index.SessionLink
	tls    map[string]*cachedTimeline
	tlSize int
	lays   map[layoutKey]*cachedLayout
	lSize  int
	evCur  map[int64]index.Event
	evOld  map[int64]index.Event
	evSize int
	stats  CacheStats
}

// CacheStats counts what a Cache did, for tests and status.
type CacheStats struct {
	LayoutHits, LayoutMisses     int64
	TimelineHits, TimelineMisses int64 // per session
	EventHits, EventMisses       int64
	LinkLoads                    int64
	Flushes                      int64 // everything dropped
	Invalidations                int64 // sessions dropped after new events
}

// cachedTimeline is one session's timeline kept compact: 16 bytes an
// entry instead of index.TimelineEntry's 64 (its session is the map's
// key, its type an exchange unless listed in resets, its time UTC
// nanoseconds). At a million exchanges 20 chains of 5 sessions hold 660k
// entries: as TimelineEntry they did not fit the bound and every pack of
// a chain read its sessions again.
type cachedTimeline struct {
	rows   []int64
	ts     []int64 // UTC, nanoseconds
	resets []int32 // indexes of the context resets, ascending
	used   uint64
}

func (t *cachedTimeline) len() int { return len(t.rows) }

// compactTimeline keeps the entries of one session's timeline (in the
// timeline's order).
func compactTimeline(es []index.TimelineEntry) *cachedTimeline {
	t := &cachedTimeline{rows: make([]int64, len(es)), ts: make([]int64, len(es))}
	for i, e := range es {
		t.rows[i], t.ts[i] = e.Row, e.Timestamp.UnixNano()
		if e.Type != logformat.TypeExchange {
			t.resets = append(t.resets, int32(i))
		}
	}
	return t
}

// entry returns entry i of session's timeline t, as index.DB.Timeline
// gives it.
func (t *cachedTimeline) entry(i int, session string) index.TimelineEntry {
	typ := logformat.TypeExchange
	if _, reset := slices.BinarySearch(t.resets, int32(i)); reset {
		typ = logformat.TypeContextReset
	}
	return index.TimelineEntry{Row: t.rows[i], SessionID: session, Type: typ, Timestamp: time.Unix(0, t.ts[i]).UTC()}
}

// appendTo appends the entries of session's timeline t to dst, as
// index.DB.Timeline gives them.
func (t *cachedTimeline) appendTo(dst []index.TimelineEntry, session string) []index.TimelineEntry {
	for i := range t.rows {
		dst = append(dst, t.entry(i, session))
	}
	return dst
}

type layoutKey struct {
	session        string
	maxDepth       int
	includeCurrent bool
}

type cachedLayout struct {
	l        *layout
	sessions map[string]bool
	used     uint64
}

// NewCache returns an empty cache bounded by cfg.
func NewCache(cfg CacheConfig) *Cache {
	if cfg.TimelineEntries <= 0 {
		cfg.TimelineEntries = DefaultCacheTimelineEntries
	}
	if cfg.LayoutEntries <= 0 {
		cfg.LayoutEntries = DefaultCacheLayoutEntries
	}
	if cfg.EventBytes <= 0 {
		cfg.EventBytes = DefaultCacheEventBytes
	}
	if cfg.MaxDelta <= 0 {
		cfg.MaxDelta = DefaultCacheMaxDelta
	}
	if cfg.ShapeBytes <= 0 {
		cfg.ShapeBytes = DefaultCacheShapeBytes
	}
	c := &Cache{cfg: cfg, counts: newCountCache(cfg.CountEntries), shapes: newShapeStore(cfg.ShapeBytes)}
	c.flushLocked()
	c.stats = CacheStats{}
	return c
}

// Stats returns the cache's counts so far.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// flushLocked drops everything.
func (c *Cache) flushLocked() {
	c.gen++
	c.links = nil
	c.tls, c.tlSize = map[string]*cachedTimeline{}, 0
	c.lays, c.lSize = map[layoutKey]*cachedLayout{}, 0
	c.evCur, c.evOld, c.evSize = map[int64]index.Event{}, nil, 0
	c.counts.clear()
	c.shapes.clear()
	c.stats.Flushes++
}

// sync brings the cache up to date with db's ChangeMark.
func (c *Cache) sync(ctx context.Context, db *index.DB) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	m, err := db.ChangeMark(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	old, sameDB := c.mark, c.db == db
	switch {
	case sameDB && m == old:
		c.mu.Unlock()
		return nil
	case !sameDB || m.Epoch != old.Epoch || m.Seq < old.Seq || m.Seq-old.Seq > c.cfg.MaxDelta:
		c.flushLocked()
		c.db, c.mark = db, m
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	ch, err := db.ChangesBetween(ctx, old.Seq, m.Seq)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if ch.Links {
		c.links = nil
		c.lays, c.lSize = map[layoutKey]*cachedLayout{}, 0
	}
	for _, s := range ch.Sessions {
		if t, ok := c.tls[s]; ok {
			c.tlSize -= t.len()
			delete(c.tls, s)
		}
		for k, cl := range c.lays {
			if cl.sessions[s] {
				c.lSize -= cl.l.size()
				delete(c.lays, k)
			}
		}
		c.stats.Invalidations++
	}
	c.mark = m
	return nil
}

// linksInto returns the links into session, from the links kept.
func (c *Cache) linksInto(ctx context.Context, db *index.DB, session string) ([]index.SessionLink, error) {
	c.mu.Lock()
	links, gen := c.links, c.gen
	c.mu.Unlock()
	if links == nil {
		all, err := db.AllLinks(ctx)
		if err != nil {
			return nil, err
		}
		links = map[string][]index.SessionLink{}
		for _, l := range all {
			links[l.New] = append(links[l.New], l)
		}
		c.mu.Lock()
		c.stats.LinkLoads++
		if c.gen == gen {
			c.links = links
		}
		c.mu.Unlock()
	}
	// A copy: FollowChain sorts what it gets.
	return slices.Clone(links[session]), nil
}

// timeline returns the timeline of sessions, from the sessions' timelines
// kept, reading the others.
func (c *Cache) timeline(ctx context.Context, db *index.DB, sessions []string) ([]index.TimelineEntry, error) {
	type part struct {
		session string
		t       *cachedTimeline
	}
	parts := make([]part, 0, len(sessions))
	var missing []string
	c.mu.Lock()
	gen := c.gen
	c.clock++
	for _, s := range sessions {
		if t, ok := c.tls[s]; ok {
			t.used = c.clock
			parts = append(parts, part{s, t})
			c.stats.TimelineHits++
		} else {
			missing = append(missing, s)
			c.stats.TimelineMisses++
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		read, err := db.Timeline(ctx, missing)
		if err != nil {
			return nil, err
		}
		by := make(map[string][]index.TimelineEntry, len(missing))
		for _, e := range read {
			by[e.SessionID] = append(by[e.SessionID], e)
		}
		c.mu.Lock()
		for _, s := range missing {
			t := compactTimeline(by[s])
			t.used = c.clock
			parts = append(parts, part{s, t})
			if c.gen == gen {
				if old, ok := c.tls[s]; ok {
					c.tlSize -= old.len()
				}
				c.tls[s] = t
				c.tlSize += t.len()
			}
		}
		c.evictTimelinesLocked()
		c.mu.Unlock()
	}
	// The order of index.DB.Timeline: by time, then row id. Each part is
	// in that order already: a few (a short chain's sessions, whose
	// exchanges may interleave) are merged; many (a long chain's, which
	// mostly follow one another) are laid end to end by their first
	// entries, checked in one pass and sorted only when they overlap.
	n := 0
	for _, p := range parts {
		n += p.t.len()
	}
	out := make([]index.TimelineEntry, 0, n)
	if len(parts) <= mergeParts {
		next := make([]int, len(parts)) // each part's next entry
		for {
			best := -1
			for k, p := range parts {
				i := next[k]
				if i == p.t.len() {
					continue
				}
				if best < 0 {
					best = k
					continue
				}
				b := parts[best].t
				j := next[best]
				if p.t.ts[i] < b.ts[j] || p.t.ts[i] == b.ts[j] && p.t.rows[i] < b.rows[j] {
					best = k
				}
			}
			if best < 0 {
				return out, nil
			}
			p := parts[best]
			out = append(out, p.t.entry(next[best], p.session))
			next[best]++
		}
	}
	slices.SortFunc(parts, func(a, b part) int {
		switch {
		case a.t.len() == 0 || b.t.len() == 0:
			return cmp.Compare(a.t.len(), b.t.len())
		}
		if c := cmp.Compare(a.t.ts[0], b.t.ts[0]); c != 0 {
			return c
		}
		return cmp.Compare(a.t.rows[0], b.t.rows[0])
	})
	for _, p := range parts {
		out = p.t.appendTo(out, p.session)
	}
	order := func(a, b index.TimelineEntry) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	}
	if !slices.IsSortedFunc(out, order) {
		slices.SortFunc(out, order)
	}
	return out, nil
}

// mergeParts is the most sessions whose timelines are merged entry by
// entry (a comparison per session per entry); more are sorted.
const mergeParts = 8

// evictTimelinesLocked drops the least recently used timelines until they
// fit in three quarters of their bound.
func (c *Cache) evictTimelinesLocked() {
	if c.tlSize <= c.cfg.TimelineEntries {
		return
	}
	keys := make([]string, 0, len(c.tls))
	for k := range c.tls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(c.tls[a].used, c.tls[b].used) })
	for _, k := range keys {
		if c.tlSize <= c.cfg.TimelineEntries*3/4 {
			break
		}
		c.tlSize -= c.tls[k].len()
		delete(c.tls, k)
	}
}

// layout returns the layout of session's chain, kept or built with build.
func (c *Cache) layout(ctx context.Context, key layoutKey, build func() (*layout, error)) (*layout, error) {
	c.mu.Lock()
	c.clock++
	if cl, ok := c.lays[key]; ok {
		cl.used = c.clock
		c.stats.LayoutHits++
		c.mu.Unlock()
		return cl.l, nil
	}
	c.stats.LayoutMisses++
	gen := c.gen
	c.mu.Unlock()
	l, err := build()
	if err != nil {
		return nil, err
	}
	if l.size() > c.cfg.LayoutEntries {
		return l, nil // too large to keep
	}
	sessions := make(map[string]bool, len(l.chain.Sessions))
	for _, s := range l.chain.Sessions {
		sessions[s] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return l, nil // invalidated meanwhile: it may be stale
	}
	if old, ok := c.lays[key]; ok {
		c.lSize -= old.l.size()
	}
	c.lays[key] = &cachedLayout{l: l, sessions: sessions, used: c.clock}
	c.lSize += l.size()
	if c.lSize > c.cfg.LayoutEntries {
		keys := make([]layoutKey, 0, len(c.lays))
		for k := range c.lays {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b layoutKey) int { return cmp.Compare(c.lays[a].used, c.lays[b].used) })
		for _, k := range keys {
			if c.lSize <= c.cfg.LayoutEntries*3/4 || k == key {
				break
			}
			c.lSize -= c.lays[k].l.size()
			delete(c.lays, k)
		}
	}
	return l, nil
}

// events returns the events of rows (in that order, those that exist),
// from the texts kept, reading the others.
func (c *Cache) events(ctx context.Context, db *index.DB, rows []int64) ([]index.Event, error) {
	got := make(map[int64]index.Event, len(rows))
	var missing []int64
	c.mu.Lock()
	gen := c.gen
	for _, r := range rows {
		if e, ok := c.evCur[r]; ok {
			got[r] = e
			c.stats.EventHits++
		} else if e, ok := c.evOld[r]; ok {
			got[r] = e
			c.putEventLocked(e)
			c.stats.EventHits++
		} else {
			missing = append(missing, r)
			c.stats.EventMisses++
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		read, err := db.EventsByRowsWithoutRaw(ctx, missing)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		for r, e := range read {
			// Resume never reads the raw line: not kept.
			e.Raw = nil
			got[r] = e
			if c.gen == gen {
				c.putEventLocked(e)
			}
		}
		c.mu.Unlock()
	}
	out := make([]index.Event, 0, len(rows))
	for _, r := range rows {
		if e, ok := got[r]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// putEventLocked keeps e; when the current generation is full, the older
// one is dropped (see countCache).
func (c *Cache) putEventLocked(e index.Event) {
	size := eventSize(e)
	if size > c.cfg.EventBytes/8 {
		return
	}
	if c.evSize+size > c.cfg.EventBytes/2 {
		c.evOld, c.evCur, c.evSize = c.evCur, map[int64]index.Event{}, 0
	}
	if _, ok := c.evCur[e.Row]; !ok {
		c.evCur[e.Row] = e
		c.evSize += size
	}
}

func eventSize(e index.Event) int {
	n := 200 + len(e.User) + len(e.AI) + len(e.EventID) + len(e.SessionID) + len(e.Metadata)
	for _, f := range e.Files {
		n += 16 + len(f)
	}
	return n
}

// cachingSource is a Source that keeps things between packs (IndexSource
// with a Cache).
type cachingSource interface {
	caching() bool
	sync(ctx context.Context) error
	counts() *countCache
	shapes() *shapeStore
	layout(ctx context.Context, session string, maxDepth int, includeCurrent bool) (*layout, error)
}

func (s *IndexSource) caching() bool { return s.Cache != nil }

func (s *IndexSource) sync(ctx context.Context) error {
	if err := s.Cache.sync(ctx, s.DB); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

func (s *IndexSource) counts() *countCache { return s.Cache.counts }

func (s *IndexSource) shapes() *shapeStore { return s.Cache.shapes }

func (s *IndexSource) layout(ctx context.Context, session string, maxDepth int, includeCurrent bool) (*layout, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return s.Cache.layout(ctx, layoutKey{session, maxDepth, includeCurrent}, func() (*layout, error) {
		return buildLayout(ctx, s, session, maxDepth, includeCurrent)
	})
}
