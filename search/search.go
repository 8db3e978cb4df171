// Package search finds past exchanges: query-time ranking. It fuses two
// retrievers: BM25 over the index's full-text table (events_fts), or the
// daemon's bm25 engine (lexicon.go), and nearest neighbours in an
// in-memory vector space (package vectors), kept in step with the index by
// the embedding worker (embedding.Worker). The fusion proposes candidates;
// their scores (score.go) order the results (rank.go). Results can be
// restricted to a session, a resume chain, a time range or event types.
//
// BM25 does most of the work; the vectors add what words alone miss
// (inflections, typos, related wording) — with the builtin hashed
// embedder, little; with a semantic model, more. Search never needs the
// vectors: while none are available (a re-embed after an embedder switch,
// a remote embedder that is down), it is BM25 alone.
package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/vectors"
)

// Mode selects the retrievers a search uses.
type Mode int

const (
	// ModeHybrid fuses BM25 and vector candidates (the default).
	ModeHybrid Mode = iota
	// ModeLexical is BM25 alone.
	ModeLexical
	// ModeVector is vector similarity alone; it finds nothing while there
	// is no vector space.
	ModeVector
)

// String returns "hybrid", "bm25" or "vector".
func (m Mode) String() string {
	switch m {
	case ModeHybrid:
		return "hybrid"
	case ModeLexical:
		return "bm25"
	case ModeVector:
		return "vector"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode is the inverse of Mode.String.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{ModeHybrid, ModeLexical, ModeVector} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("search: unknown mode %q (want hybrid, bm25 or vector)", s)
}

// Bounds of Query.Limit.
const (
	DefaultLimit = 10
	MaxLimit     = 200
)

// ErrEmptyQuery is returned for a query without text.
var ErrEmptyQuery = errors.New("search: empty query")

// Query is one search. Zero fields put no constraint.
type Query struct {
	Text string
	// Session restricts results to one session.
	Session string
	// Chain restricts results to a session and the sessions it resumes,
	// transitively (session_resume links followed backwards). With
	// Session too, results come from Session if it is in the chain, and
	// from nothing otherwise.
	Chain string
	// Since (inclusive) and Until (exclusive) bound the timestamps.
	Since, Until time.Time
	// Types restricts results to these event types. Only exchanges are
	// searchable, so a list without "exchange" finds nothing.
	Types []string
	Limit int  // DefaultLimit when 0; at most MaxLimit
	Mode  Mode // ModeHybrid when zero
	// Now is when the query is asked: relative times in Text ("two weeks
	// ago") are read against it. Zero means time.Now().
	Now time.Time
	// MinScore is the floor of the results' scores (Result.Score, in
	// [0, 1]): results under it are left out. nil means the searcher's
	// (Options.MinScore) in hybrid and BM25 modes, none in vector mode
	// (see Floor); 0 keeps every result.
	MinScore *float64
	// Sessions restricts results to these sessions: a chain the caller
	// has followed already (resume, whose depth cap it is). It cannot be
	// combined with Session or Chain.
	Sessions []string
	// Context, 0 to MaxContext, adds to each result up to this many
	// exchanges of its session before and after it (Result.Context; see
	// context.go). It changes neither the results nor their order.
	Context int
	// Named is the time span Text names, read against Now, once per
	// query (ReadTime): the searcher's steps and callers asking TimeOnly
	// and TimeSpan read it instead of parsing the text again. nil: not
	// read yet (a search reads it first).
	Named *NamedTime
	// text is Text read with Named (readText): its words and identifiers
	// analysed. nil: not read yet.
	text *queryText
}

// NamedTime is the time span a query's text names (ParseTimeRef), OK
// false when it names none.
type NamedTime struct {
	Ref TimeRef
	OK  bool
	// Weekday, when the text names no span, is the last of a weekday it
	// names alone ("what did we do on saturday"): the span of a query
	// about nothing else (TimeOnly); in a query about something, a
	// weekday names no span (any Saturday).
	Weekday *TimeRef
}

// ReadTime returns q with its text read once for the calls that follow:
// the time span it names (Named), and its words and identifiers.
func ReadTime(q Query) Query {
	if q.Named == nil {
		now := q.now()
		ref, ok := ParseTimeRef(q.Text, now)
		q.Named = &NamedTime{Ref: ref, OK: ok}
		if m := onWeekdayRE().FindStringSubmatch(strings.ToLower(q.Text)); !ok && m != nil {
			if ref, ok := ParseTimeRef("last "+m[2], now); ok {
				ref.Phrase = m[0]
				q.Named.Weekday = &ref
			}
		}
	}
	if q.text == nil {
		q.text = readText(q.Text, q.Named)
	}
	return q
}

// now is when q is asked: Now, else the time now.
func (q Query) now() time.Time {
	if q.Now.IsZero() {
		return time.Now()
	}
	return q.Now
}

// timeRef is the span q's text names: Named, else parsed now.
func (q Query) timeRef() (TimeRef, bool) {
	if q.Named != nil {
		return q.Named.Ref, q.Named.OK
	}
	return ParseTimeRef(q.Text, q.now())
}

// Result is one found exchange.
type Result struct {
	ID        string    `json:"id"` // the event id: the producer's id if it gave one, else generated
	SessionID string    `json:"session_id,omitempty"`
	Timestamp time.Time `json:"timestamp"`
	User      string    `json:"user,omitempty"`
	AI        string    `json:"ai,omitempty"`
	// Files are the files the exchange names (its "files" field).
	Files []string `json:"files,omitempty"`
	// Score is the result's relevance in [0, 1], comparable across
	// searches (see score.go): a noisy OR of its lexical and semantic
	// strengths, times its fit to a time the query names, rounded to
	// ScoreStep. It is what orders the results: higher first, and at
	// equal score the newer exchange first (rank.go).
	Score float64 `json:"score"`
	// Weak marks a result returned although no result reached the
	// default floor (the gate, see Floor): one of the closest matches,
	// probably not what was asked about.
	Weak bool `json:"weak,omitempty"`
	// SupersededBy is the newest later exchange among the results that
	// asks the same question and answers it differently (supersede.go);
	// Supersedes lists the earlier ones this one supersedes, newest first.
	SupersededBy *Ref   `json:"superseded_by,omitempty"`
	Supersedes   []Ref  `json:"supersedes,omitempty"`
	File         string `json:"file"`
	Line         int64  `json:"line"`
	Row          int64  `json:"-"` // the index row (events.id)
	// Context are the exchanges of its session around it, when the query
	// asked for them (Query.Context): before it (negative offsets) and
	// after, in the session's order. They are context, not matches.
	Context []ContextExchange `json:"context,omitempty"`
	// Lexical and Semantic are the strengths behind Score, Relevance the
	// score before rounding, Fused the rank fusion's score that chose the
	// candidates; for evaluation.
	Lexical   float64 `json:"-"`
	Semantic  float64 `json:"-"`
	Relevance float64 `json:"-"`
	Fused     float64 `json:"-"`
	// Cosine is the raw similarity of the query's and the exchange's
	// vectors (0 without), for calibration.
	Cosine float64 `json:"-"`
}

// Ref names another exchange: a result's superseding or superseded one.
type Ref struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// Fusion is how the two candidate lists become one ranking.
type Fusion int

const (
	// FusionRRF is weighted reciprocal rank fusion: the sum over the
	// lists of weight / (RRFK + rank). It needs no score calibration, so
	// it behaves the same whatever the embedder's similarity scale.
	FusionRRF Fusion = iota
	// FusionScore is the weighted sum of min-max normalised scores.
	FusionScore
)

// Options tune the ranking. Zero fields take the value of DefaultOptions.
type Options struct {
	Fusion Fusion
	// RRFK is the rank offset of reciprocal rank fusion: smaller values
	// favour the heads of the lists.
	RRFK float64
	// Depth is how many candidates each retriever contributes to the
	// fusion, whatever the query's limit: the ranking never depends on
	// the limit (the top 5 of a limit-5 search are the top 5 of a
	// limit-100 one). A limit above Depth gets at most the union of the
	// lists.
	Depth int
	// UserWeight and AIWeight are the BM25 column weights. Questions are
	// about what the user said and did; the assistant's long answers
	// repeat the question's words without being its answer.
	UserWeight, AIWeight float64
	// LexicalWeight and VectorWeight weigh the retrievers in the fusion.
	// VectorWeight 0 means: 0.3 for the builtin embedder, whose hashed
	// word and character features mostly agree with BM25 and make a
	// weaker vote; 0.5 for model embedders (chosen with uselite on the
	// tune halves of the dev set and of the coding set: 1 lost to BM25
	// on the coding set, 0.5 did not; see notes in continuity-eval).
	LexicalWeight, VectorWeight float64
	// TimeWeight weighs, relative to their whole-history counterparts,
	// the candidate lists searched within the time span a query names
	// ("two weeks ago"; see Search). Negative turns this off.
	TimeWeight float64
	// TimeOutside is the share of their relevance the exchanges outside
	// the time span a query names keep (see rank.go); 0 means
	// DefaultTimeOutside, 1 keeps it whole.
	TimeOutside float64
	// VectorShare scales the semantic strength in a hybrid score (see
	// DefaultVectorShare); 0 means the default.
	VectorShare float64
	// VectorFloor, when positive, makes a hybrid score at least
	// VectorFloor times the semantic strength V, so that a strong match
	// by meaning alone is not ranked under weak word overlap (V²/2 alone
	// buries it; issue 32: a fusion that never loses to its parts). 0
	// means the defaults (DefaultVectorFloor, with DefaultVectorFloorBelow
	// and DefaultVectorFloorTop); set, VectorFloorBelow and VectorFloorTop
	// are taken as given; negative turns it off. It never opens the
	// floor's gate (rank.go).
	VectorFloor float64
	// VectorFloorBelow, when positive, applies VectorFloor only to
	// queries whose best lexical strength among the scored candidates is
	// under it: words that match weakly do not bury a strong match by
	// meaning, words that match well keep their order (issue 32 item 2).
	VectorFloorBelow float64
	// VectorFloorTop, when positive, applies VectorFloor only to the
	// hits with the VectorFloorTop largest cosines among those scored
	// (fusion.go): the best matches by meaning, not every weak one.
	VectorFloorTop int
	// VectorFloorRelative measures the semantic strength the vector floor
	// lifts to from the scored candidates' own cosines as well
	// (relativeStrength); for evaluation.
	VectorFloorRelative bool
	// WeakScoreOrder keeps the weak matches of a query whose gate closed
	// (no result reaches the floor) in the order of their scores, as
	// before issue 32; by default the closest by meaning (cosine) and the
	// best by score alternate, so that a match by meaning alone is not
	// buried under weak word overlap (fusion.go). For evaluation.
	WeakScoreOrder bool
	// LengthAvg is the words of an average exchange for the length
	// normalisation of the lexical strength in scores (score.go); 0 means
	// the default, negative turns the normalisation off.
	LengthAvg float64
	// VectorPower raises the semantic strength to this power in a hybrid
	// score (see DefaultVectorPower); 0 means the default.
	VectorPower float64
	// KeepFillerWords keeps conversational filler words (fillerWords) in
	// the BM25 query; for evaluation.
	KeepFillerWords bool
	// Expansion, when positive, expands BM25 queries with that many
	// terms from their first results (pseudo-relevance feedback, rm3.go);
	// for evaluation.
	Expansion int
	// MinScore is the floor of the results' scores when a query sets none
	// (Query.MinScore): 0 means DefaultMinScore, negative no floor.
	MinScore float64
	// CohortMargin, when positive, lowers the embedder's "unrelated"
	// cosine level for a query to its largest cosine with a fixed cohort
	// of everyday texts (cohort.go) plus this margin, when that is lower:
	// a query far from everything unrelated gets credit for weaker
	// similarities. For evaluation.
	CohortMargin float64
	// MaxTermShare leaves out of the BM25 query the terms held by more
	// than this share of all exchanges (keeping the rarest ones if that
	// would leave none): FTS5 scores every match of every term, and a term
	// in most exchanges costs the most time while its IDF ranks nothing.
	// 0 means the default (DefaultMaxTermShare); negative keeps all.
	MaxTermShare float64
	// NeighbourLexical and NeighbourVector weigh an exchange's neighbours
	// in its session as a field of its own (neighbours.go): its lexical
	// and semantic strengths are at least these shares of its neighbours'.
	// 0 means the defaults (DefaultNeighbourLexical, ...), negative off.
	NeighbourLexical, NeighbourVector float64
	// NeighbourCombine is how the neighbour field combines with the
	// exchange's own evidence: NeighbourMax (the default), NeighbourSum
	// or NeighbourField (neighbourfield.go).
	NeighbourCombine int
}

// DefaultMaxTermShare: terms in more than this share of exchanges are left
// out of BM25 queries (see Options.MaxTermShare).
const DefaultMaxTermShare = 0.05

// minCommonDocs: a term held by fewer exchanges is never left out.
const minCommonDocs = 1000

// DefaultOptions are the ranking defaults, chosen on the LongMemEval dev
// subset with cmd/continuity-eval (see its TestSweep).
var DefaultOptions = Options{
	Fusion:        FusionRRF,
	RRFK:          10,
	Depth:         MaxLimit,
	UserWeight:    5,
	AIWeight:      1,
	LexicalWeight: 1,
	TimeWeight:    1,
	TimeOutside:   DefaultTimeOutside,
	VectorShare:   DefaultVectorShare,
	VectorPower:   DefaultVectorPower,
	LengthAvg:     lengthAvg,
	MinScore:      DefaultMinScore,

	VectorFloor:      DefaultVectorFloor,
	VectorFloorBelow: DefaultVectorFloorBelow,
	VectorFloorTop:   DefaultVectorFloorTop,

	NeighbourLexical: DefaultNeighbourLexical,
	NeighbourVector:  DefaultNeighbourVector,
}

// lexicalMatch is the BM25 query for the text t: the index terms of its
// words (textAnalysis.terms) less those too common to be worth scoring
// (Options.MaxTermShare), and their MATCH expression; and those terms
// weighed for the lexical strength (see score.go). ls are the lexical
// engines of this search (lexicals), which count the terms' documents.
func (s *Searcher) lexicalMatch(ctx context.Context, t *textAnalysis, ls []index.Lexical) (terms []analyze.Term, match string, lts []lexTerm) {
	terms = t.terms(!s.opts.KeepFillerWords)
	var keys []string
	for _, t := range terms {
		if t.Key != "" {
			keys = append(keys, t.Key)
		}
	}
	docs, total, err := s.termDocs(ctx, keys, ls)
	if err != nil {
		// Counts only prune and scale: search without them.
		s.log.Debug("term document counts", "err", err)
		docs, total = nil, 0
	}
	share := s.opts.MaxTermShare
	if share == 0 {
		share = DefaultMaxTermShare
	}
	if share > 0 && len(terms) > 1 && total > 0 {
		terms = dropCommon(terms, docs, total, share)
	}
	return terms, analyze.MatchAny(terms), lexTerms(terms, docs, total)
}

// dropCommon removes the terms held by more than share of the total
// exchanges (docs: document counts by key), keeping the two rarest when
// all are that common. A term without a single index term to count (a
// CJK phrase) is kept.
func dropCommon(terms []analyze.Term, docs map[string]int64, total int64, share float64) []analyze.Term {
	// Below minCommonDocs matches a term is cheap to score whatever its
	// share: small indexes are never pruned.
	limit := max(int64(share*float64(total)), minCommonDocs)
	var kept []analyze.Term
	for _, t := range terms {
		if docs[t.Key] <= limit {
			kept = append(kept, t)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	order := slices.Clone(terms)
	sort.SliceStable(order, func(a, b int) bool { return docs[order[a].Key] < docs[order[b].Key] })
	return order[:min(2, len(order))]
}

// dfCache holds document counts of terms read from the full-text index
// in one of its states (index.DB.FullTextState). The counts of common
// terms are the costly ones (fts5vocab reads their whole doclist) and
// recur in most queries.
type dfCache struct {
	mu    sync.Mutex
	state int64
	total int64            // exchanges in the index; -1 unknown
	docs  map[string]int64 // by stem; 0 for a stem the index lacks
}

// dfCacheMax bounds the cache: past it, it starts afresh.
const dfCacheMax = 50000

// termDocs is db.TermDocs from the first of ls that can count stems:
// the bm25 engine when it is current (the same counts, read from memory),
// else FTS5 (ftsLexical.TermDocs).
func (s *Searcher) termDocs(ctx context.Context, stems []string, ls []index.Lexical) (map[string]int64, int64, error) {
	for _, l := range ls {
		if docs, total, ok, err := l.TermDocs(ctx, stems); ok {
			return docs, total, err
		}
	}
	return nil, 0, errNoLexical
}

// TermDocs is db.TermDocs through the cache. Only a process that writes
// the full-text index can tell when it changes, so only there (in the
// daemon) are counts kept; they are dropped at each change, and so are
// always those the index gives now. ok is always true.
func (f *ftsLexical) TermDocs(ctx context.Context, stems []string) (_ map[string]int64, _ int64, ok bool, _ error) {
	docs, total, err := f.termDocs(ctx, stems)
	return docs, total, true, err
}

func (f *ftsLexical) termDocs(ctx context.Context, stems []string) (map[string]int64, int64, error) {
	state, ok := f.db.FullTextState()
	if !ok {
		return f.db.TermDocs(ctx, stems)
	}
	c := f.df
	c.mu.Lock()
	if c.docs == nil || c.state != state || len(c.docs) > dfCacheMax {
		c.state, c.total, c.docs = state, -1, map[string]int64{}
	}
	out := make(map[string]int64, len(stems))
	var missing []string
	for _, st := range stems {
		if n, ok := c.docs[st]; ok {
			out[st] = n
		} else {
			missing = append(missing, st)
		}
	}
	total := c.total
	c.mu.Unlock()
	if len(missing) == 0 && total >= 0 {
		return out, total, nil
	}
	docs, total, err := f.db.TermDocs(ctx, missing)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	if c.state == state {
		for _, st := range missing {
			c.docs[st] = docs[st]
		}
		c.total = total
	}
	c.mu.Unlock()
	for _, st := range missing {
		out[st] = docs[st]
	}
	return out, total, nil
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Fusion != 0 {
		d.Fusion = o.Fusion
	}
	if o.RRFK > 0 {
		d.RRFK = o.RRFK
	}
	if o.Depth > 0 {
		d.Depth = o.Depth
	}
	if o.UserWeight > 0 || o.AIWeight > 0 {
		d.UserWeight, d.AIWeight = o.UserWeight, o.AIWeight
	}
	if o.LexicalWeight > 0 {
		d.LexicalWeight = o.LexicalWeight
	}
	if o.VectorWeight > 0 {
		d.VectorWeight = o.VectorWeight
	}
	if o.TimeWeight != 0 {
		d.TimeWeight = o.TimeWeight
	}
	if o.TimeOutside > 0 {
		d.TimeOutside = o.TimeOutside
	}
	if o.MinScore != 0 {
		d.MinScore = o.MinScore
	}
	d.KeepFillerWords = o.KeepFillerWords
	if o.VectorShare > 0 {
		d.VectorShare = o.VectorShare
	}
	if o.VectorPower > 0 {
		d.VectorPower = o.VectorPower
	}
	if o.VectorFloor != 0 {
		// A floor of its own, with its own conditions (negative: off).
		d.VectorFloor, d.VectorFloorBelow, d.VectorFloorTop = o.VectorFloor, o.VectorFloorBelow, o.VectorFloorTop
		d.VectorFloorRelative = o.VectorFloorRelative
	}
	d.WeakScoreOrder = o.WeakScoreOrder
	if o.LengthAvg != 0 {
		d.LengthAvg = o.LengthAvg
	}
	d.CohortMargin = o.CohortMargin
	d.Expansion = o.Expansion
	if o.NeighbourLexical != 0 {
		d.NeighbourLexical = o.NeighbourLexical
	}
	if o.NeighbourVector != 0 {
		d.NeighbourVector = o.NeighbourVector
	}
	d.NeighbourCombine = o.NeighbourCombine
	return d
}

// vectorWeight is VectorWeight, or its default for the embedder.
func (o Options) vectorWeight(e embed.Embedder) float64 {
	switch {
	case o.VectorWeight > 0:
		return o.VectorWeight
	case e != nil && strings.HasPrefix(e.Identity(), embed.ProviderBuiltin+":"):
		return 0.3
	}
	return 0.5
}

// Config sets up a Searcher.
type Config struct {
	DB *index.DB
	// Embedder embeds queries; nil means BM25 only. Only a vector space of
	// its identity (vectors.SpaceIdentity) is searched: vectors of two embedders
	// are never compared.
	Embedder embed.Embedder
	// Vectors returns the current vector space, or nil while there is
	// none; typically (*embedding.Worker).Space. nil means BM25 only.
	Vectors func() *vectors.Space
	// More are further vector spaces of the same model under other text
	// recipes (several vectors per exchange): an exchange's similarity is
	// the largest over the spaces that hold it. For evaluation (issue 14:
	// "two vectors per exchange, max similarity"); their identities are
	// not checked against Embedder's.
	More []func() *vectors.Space
	// Lexicon, when set, is a lexical engine asked before FTS5 (the
	// daemon's bm25 engine, which answers the BM25 queries of plain words
	// whenever it is current); nil means FTS5 always.
	Lexicon LexicalEngine
	Options Options
	Logger  *slog.Logger
}

// Searcher answers queries. It is safe for concurrent use.
type Searcher struct {
	df     dfCache
	cohort cohort
	db     *index.DB
	emb    embed.Embedder
	space  func() *vectors.Space
	more   []func() *vectors.Space
	lex    LexicalEngine
	fts    *ftsLexical // FTS5, the lexical engine that always answers
	opts   Options
	vw     float64 // vector weight in the fusion
	log    *slog.Logger
}

// New returns a Searcher.
func New(cfg Config) (*Searcher, error) {
	if cfg.DB == nil {
		return nil, errors.New("search: no index")
	}
	opts, err := withNeighboursFromEnv(cfg.Options)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	s := &Searcher{db: cfg.DB, emb: cfg.Embedder, space: cfg.Vectors, more: cfg.More, lex: cfg.Lexicon, opts: opts.withDefaults(), log: cfg.Logger}
	s.vw = s.opts.vectorWeight(cfg.Embedder)
	s.fts = &ftsLexical{db: cfg.DB, df: &s.df}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// candidate is one exchange proposed by the retrievers.
type candidate struct {
	row   int64
	score float64 // fused: orders the candidates
	// lex and cos are its BM25 score and cosine similarity when a
	// lexical or vector list holds it (hasLex, hasVec).
	lex, cos       float64
	hasLex, hasVec bool
	// lexical and semantic are the strengths derived from them, rel the
	// score before rounding (score.go, rank.go).
	lexical, semantic, rel float64
	// gateRel is rel without the vector floor (Options.VectorFloor):
	// what opens the floor's gate (rank.go).
	gateRel float64
	// inIdent: the identifier list holds it (it may hold one of the
	// query's identifiers whole: ident.go).
	inIdent bool
	// inContext: a neighbour list holds it (neighbours.go); nbLexical
	// and nbSemantic are its neighbour field's strengths, weighted.
	inContext             bool
	nbLexical, nbSemantic float64
	// fieldLexical is the lexical strength with the neighbour field
	// (NeighbourField: neighbourfield.go).
	fieldLexical float64
	ts           int64 // its timestamp, unix nanoseconds (read when scored)
}

// ranked is one retriever's candidate list, best first, and its weight in
// the fusion.
type ranked struct {
	rows   []int64
	scores []float64
	weight float64
	vector bool // scores are cosine similarities, else BM25 scores
	// ident: the identifier list (its BM25 scores are of another query:
	// only its ranks count).
	ident bool
	// context: a neighbour list (neighbours.go): only its ranks count.
	context bool
}

func lexicalList(hs []index.LexicalHit, weight float64) ranked {
	r := ranked{rows: make([]int64, len(hs)), scores: make([]float64, len(hs)), weight: weight}
	for i, h := range hs {
		r.rows[i], r.scores[i] = h.Row, h.Score
	}
	return r
}

// identList is the identifier list (ident.go) as a fusion list.
func identList(hs []index.LexicalHit, weight float64) ranked {
	r := lexicalList(hs, weight)
	r.ident = true
	return r
}

func vectorList(hs []vectors.Hit, weight float64) ranked {
	r := ranked{rows: make([]int64, len(hs)), scores: make([]float64, len(hs)), weight: weight, vector: true}
	for i, h := range hs {
		r.rows[i], r.scores[i] = h.Row, h.Score
	}
	return r
}

// Search runs q and returns at most q.Limit results, best first (by
// score, then newer first: rank.go). Exchanges with identical texts (same
// user and ai, as when a log is copied) are returned once, at the best
// rank.
//
// In hybrid mode, a query that names a time relative to when it is asked
// ("two weeks ago", "last Saturday": ParseTimeRef, read against q.Now)
// and sets no time bounds of its own is also run within that span, and
// those in-span lists join the fusion (weight Options.TimeWeight), while
// the exchanges outside the span keep Options.TimeOutside of their score:
// the exchanges of the span rise, the others stay findable. A query that
// names nothing but a time lists the span's exchanges (TimeOnly).
func (s *Searcher) Search(ctx context.Context, q Query) ([]Result, error) {
	a, err := s.Answer(ctx, q)
	return a.Results, err
}

// Answer is what a search found, and why its vector side took no part
// when it took none.
type Answer struct {
	Results []Result
	// VectorsMissing is why the vectors took no part in a hybrid or
	// vector query (see Searcher.VectorsMissing, and a query that could
	// not be embedded), "" when they did or the query is lexical. It is
	// read with the vector space the search used: a space that finishes
	// loading while the query runs cannot leave an answer that found
	// nothing and gives no reason.
	VectorsMissing string
}

// Answer runs q as Search does and says, with its results, why vectors
// took no part when they took none.
func (s *Searcher) Answer(ctx context.Context, q Query) (Answer, error) {
	if q.Context < 0 || q.Context > MaxContext {
		return Answer{}, fmt.Errorf("search: context %d: want 0 to %d exchanges on each side", q.Context, MaxContext)
	}
	view := s.view()
	var a Answer
	if q.Mode != ModeLexical {
		a.VectorsMissing = view.missing
	}
	r, err := s.rank(ctx, q, view)
	if err != nil || r == nil {
		return a, err
	}
	if r.missing != "" {
		a.VectorsMissing = r.missing
	}
	if a.Results, err = s.results(ctx, s.db.ExchangesByRows, r); err != nil {
		return Answer{}, err
	}
	if err := s.withContext(ctx, a.Results, q.Context); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// RankRows returns the rows Search would consider for q, in the order of
// the rank fusion (ties: the newer first), without reading any text: for
// a caller that needs an order only and reads the texts it uses itself
// (resume ranks some 200 exchanges of a chain and then shows a few
// dozen). The list holds the candidates Search reads and scores for
// q.Limit results (poolSize), exchanges of identical texts all listed,
// rows of events deleted since included; Search shows them ordered by
// their scores, which need the texts. For a query about nothing but a
// time, it is the span's exchanges, newest first, as Search shows them. q
// must not have a score floor (MinScore must be 0): a floor needs the
// texts.
func (s *Searcher) RankRows(ctx context.Context, q Query) ([]int64, error) {
	if q.MinScore == nil || *q.MinScore > 0 {
		return nil, errors.New("search: RankRows needs MinScore 0 (a floor needs the texts)")
	}
	r, err := s.rank(ctx, q, s.view())
	if err != nil || r == nil {
		return nil, err
	}
	cands := r.cands[:min(len(r.cands), poolSize(r.limit))]
	rows := make([]int64, len(cands))
	for i, c := range cands {
		rows[i] = c.row
	}
	return rows, nil
}

// ranking is a query's candidates, fused and scored, before their texts
// are read (results), with what results needs to finish them.
type ranking struct {
	cands []*candidate
	// near are candidates dropped for the floor that still relate to
	// the query by their meaning (Searcher.score), the most similar
	// first: the weak matches when nothing else is.
	near       []*candidate
	lts        []lexTerm
	ids        []identTerm // the query's identifiers (ident.go)
	gate, each float64
	limit      int
	// span is the time span the query names (TimeSpan), nil when none;
	// timeOutside the share of their relevance the exchanges outside it
	// keep. timeOnly: the query names nothing else (TimeOnly); its
	// candidates are the span's exchanges, newest first.
	span        *TimeRef
	timeOutside float64
	timeOnly    bool
	// vshare and vpow: the semantic strength counts as vshare·V^vpow
	// (VectorShare, VectorPower in hybrid mode; 1 and 1 otherwise).
	vshare, vpow float64
	// vfloor: in hybrid mode, a result scores at least vfloor·V
	// (Options.VectorFloor; 0: no such floor).
	vfloor float64
	// vfloorBelow: vfloor applies only when the best lexical strength of
	// the scored candidates is under it (0: always).
	vfloorBelow float64
	// vfloorTop: vfloor applies to this many hits, the largest cosines
	// (0: all).
	vfloorTop int
	vfloorRel bool
	cal       calibration
	// weakInterleave: in hybrid mode, unless Options.WeakScoreOrder.
	weakInterleave bool
	ln             lengthNorm
	// nbLex and nbVec weigh the neighbour field (neighbours.go), adj the
	// adjacency read so far.
	nbLex, nbVec float64
	adj          map[int64]index.Adjacency
	// nbCombine: how the neighbour field combines (NeighbourMax, ...).
	nbCombine int
	// missing: the vector side failed (a remote embedder down) and the
	// lexical side answered alone; why, for Answer.VectorsMissing.
	missing string
}

// rank runs both sides of q and fuses them; nil when nothing can match.
// The vector side searches view, read once by the caller.
func (s *Searcher) rank(ctx context.Context, q Query, view vectorView) (*ranking, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, ErrEmptyQuery
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if len(q.Types) > 0 && !slices.Contains(q.Types, logformat.TypeExchange) {
		return nil, nil
	}
	// The text is read once, here (or by the caller: ReadTime); the
	// steps below read q.Named and q.text.
	q = ReadTime(q)
	if ref, ok := s.TimeOnly(q); ok {
		return s.rankTimeOnly(ctx, q, ref, limit)
	}
	// The query's embedding (the costliest step of the vector side)
	// depends on nothing else: it starts first, while the filter's chain
	// is read and the BM25 query runs.
	var embedding func() ([]float32, error)
	if q.Mode != ModeLexical {
		ectx, cancel := context.WithCancel(ctx)
		defer cancel() // an early return stops it
		embedding = s.embedQuery(ectx, q.Text, view)
	}
	f, none, err := s.filter(ctx, q)
	if err != nil || none {
		return nil, err
	}
	sq := sideQuery{f: f, depth: s.opts.Depth} // never the limit: see Options.Depth
	var span *TimeRef
	if ref, ok := q.Named.Ref, q.Named.OK; ok && s.anchors(q) {
		g := f
		g.Since, g.Until = ref.From, ref.To
		sq.inSpan = &g
		span = &ref
	}

	// The vector side runs concurrently with BM25.
	var vch <-chan vecAnswer
	if q.Mode != ModeLexical {
		vch = s.vectorSide(ctx, embedding, view, sq)
	}
	var lex lexAnswer
	if q.Mode != ModeVector {
		lex = s.lexicalSide(ctx, q, sq)
	}
	var vec vecAnswer
	vecOK := false
	missing := ""
	if vch != nil {
		switch a := <-vch; {
		case a.err == nil:
			vec, vecOK = a, true
		case q.Mode == ModeVector:
			return nil, a.err
		default:
			// The vector side improves search but is not required: a
			// remote embedder that is down must not break it.
			s.log.Warn("vector search failed; using BM25 alone", "err", a.err)
			missing = fmt.Sprintf("the vector search failed (%v): lexical (BM25) ranking only for this query", a.err)
			if qe := (*queryEmbedError)(nil); errors.As(a.err, &qe) {
				missing = fmt.Sprintf("the query could not be embedded (%v): lexical (BM25) ranking only for this query", qe.err)
			}
		}
	}
	if lex.err != nil && vecOK && errors.Is(lex.err, index.ErrNoFullText) {
		// fulltext.db is missing (deleted, being rebuilt): the vectors
		// alone answer meanwhile.
		s.log.Warn("full-text index unavailable; using vectors alone", "err", lex.err)
		lex.err = nil
	}
	if lex.err != nil {
		return nil, fmt.Errorf("search: %w", lex.err)
	}
	gate, each := s.floors(q)
	nbLists, adj := s.neighbourLists(ctx, q, f, lex, vec)
	cands, near := s.fuseAndScore(ctx, lex, vec, each, nbLists...)
	vshare, vpow, vfloor := 1.0, 1.0, 0.0
	if q.Mode == ModeHybrid {
		vshare, vpow, vfloor = s.opts.VectorShare, s.opts.VectorPower, s.opts.VectorFloor
	}
	r := &ranking{cands: cands, near: near, lts: lex.lts, ids: lex.ids, gate: gate, each: each, limit: limit,
		span: span, timeOutside: s.opts.TimeOutside, vshare: vshare, vpow: vpow, vfloor: vfloor, adj: adj, vfloorBelow: s.opts.VectorFloorBelow}
	r.nbLex, r.nbVec = s.neighbourWeights(q.Mode)
	r.nbCombine = s.opts.NeighbourCombine
	r.missing = missing
	r.vfloorTop, r.vfloorRel = s.opts.VectorFloorTop, s.opts.VectorFloorRelative
	r.cal = calibrationFor(s.emb)
	r.weakInterleave = q.Mode == ModeHybrid && !s.opts.WeakScoreOrder
	if s.opts.LengthAvg > 0 {
		r.ln = lengthNorm{b: lengthB, avg: s.opts.LengthAvg}
	}
	if s.opts.TimeWeight < 0 {
		r.span = nil // time anchoring off (evaluation)
	}
	return r, nil
}

// rankTimeOnly is rank for a query about nothing but the time span ref
// (TimeOnly): its candidates are the span's exchanges under q's other
// constraints, newest first.
func (s *Searcher) rankTimeOnly(ctx context.Context, q Query, ref TimeRef, limit int) (*ranking, error) {
	f, none, err := s.filter(ctx, q)
	if err != nil || none || !ref.From.Before(ref.To) {
		return nil, err
	}
	f.Since, f.Until = ref.From, ref.To
	rows, err := s.db.ExchangesNewestFirst(ctx, f, poolSize(limit))
	if err != nil {
		return nil, fmt.Errorf("search: exchanges from %s to %s: %w", ref.From, ref.To, err)
	}
	r := &ranking{limit: limit, timeOnly: true, span: &ref, timeOutside: 1}
	for _, row := range rows {
		r.cands = append(r.cands, &candidate{row: row})
	}
	return r, nil
}

// sideQuery is what both sides of a query search: the filter, the same
// filter within the time span the query names (nil when none), and how
// many candidates each takes.
type sideQuery struct {
	f      index.Filter
	inSpan *index.Filter
	depth  int
}

// vecAnswer is the vector side's answer: its candidates, within the span
// too, and the query's vector (nil when not embedded).
type vecAnswer struct {
	hits, inSpan []vectors.Hit
	qv           []float32
	err          error
}

// vectorSide starts the vector side of a query on a goroutine of its own;
// its answer comes on the channel.
func (s *Searcher) vectorSide(ctx context.Context, embedding func() ([]float32, error), view vectorView, sq sideQuery) <-chan vecAnswer {
	vch := make(chan vecAnswer, 1)
	go func() {
		filters := []index.Filter{sq.f}
		if sq.inSpan != nil {
			filters = append(filters, *sq.inSpan)
		}
		var a vecAnswer
		var lists [][]vectors.Hit
		if lists, a.qv, a.err = s.vectorCandidates(ctx, embedding, view, sq.depth, filters...); a.err == nil {
			a.hits = lists[0]
			if sq.inSpan != nil {
				a.inSpan = lists[1]
			}
		}
		vch <- a
	}()
	return vch
}

// lexAnswer is the lexical side's answer: its hits, within the span too,
// and the terms whose strength scores the results.
type lexAnswer struct {
	hits, inSpan []index.LexicalHit
	lts          []lexTerm
	// ids are the query's identifiers, idHits the exchanges holding them
	// whole, or nearly (identMatch, asked of FTS5).
	ids    []identTerm
	idHits []index.LexicalHit
	err    error
}

// lexicalSide runs the BM25 side of q (read: ReadTime): the bm25 engine,
// when it holds what FTS5 holds, answers the queries of plain words
// (lexical), FTS5 the others and the expanded query (Options.Expansion).
func (s *Searcher) lexicalSide(ctx context.Context, q Query, sq sideQuery) (a lexAnswer) {
	ls, release := s.lexicals(ctx)
	defer release()
	terms, m, lts := s.lexicalMatch(ctx, &q.text.textAnalysis, ls)
	a.lts = lts
	if m == "" {
		return a
	}
	a.lts = s.withoutTimePhrase(ctx, q, ls, lts)
	w := [2]float64{s.opts.UserWeight, s.opts.AIWeight}
	if a.hits, a.err = s.lexical(ctx, ls, terms, m, w, sq.f, sq.depth); a.err != nil {
		return a
	}
	a.ids, a.idHits = s.identifierSide(ctx, &q.text.textAnalysis, a.lts, w, sq)
	if s.opts.Expansion > 0 {
		if m2 := s.expand(ctx, lexTermsOf(a.lts), a.hits, s.opts.Expansion); m2 != "" {
			m, terms = m2, nil
			if a.hits, a.err = s.lexical(ctx, ls, terms, m, w, sq.f, sq.depth); a.err != nil {
				return a
			}
		}
	}
	if sq.inSpan != nil {
		a.inSpan, a.err = s.lexical(ctx, ls, terms, m, w, *sq.inSpan, sq.depth)
	}
	return a
}

// withoutTimePhrase returns the lexical terms of q without the words
// naming a time ("two weeks ago"), which say when, not what: the lexical
// strength leaves them out. It returns lts, q's terms, when the phrase is
// all there is.
func (s *Searcher) withoutTimePhrase(ctx context.Context, q Query, ls []index.Lexical, lts []lexTerm) []lexTerm {
	if rest := q.text.rest; q.Named.OK && rest != nil {
		if _, _, l := s.lexicalMatch(ctx, rest, ls); len(l) > 0 {
			return l
		}
	}
	return lts
}

// fuseAndScore fuses both sides' lists (the in-span ones weighted by
// Options.TimeWeight) and scores the candidates, dropping those that
// cannot reach the floor each; near are the closest of those dropped that
// relate to the query at all (see score).
func (s *Searcher) fuseAndScore(ctx context.Context, lex lexAnswer, vec vecAnswer, each float64, extra ...ranked) (cands, near []*candidate) {
	o := s.opts
	cands = s.fuse(append([]ranked{
		lexicalList(lex.hits, o.LexicalWeight), vectorList(vec.hits, s.vw),
		lexicalList(lex.inSpan, o.LexicalWeight*o.TimeWeight), vectorList(vec.inSpan, s.vw*o.TimeWeight),
		identList(lex.idHits, o.LexicalWeight),
	}, extra...)...)
	cal := calibrationFor(s.emb)
	if s.opts.CohortMargin > 0 && vec.qv != nil {
		if top, ok := s.cohortTop(ctx, vec.qv); ok {
			cal.unrelated = min(cal.unrelated, top+s.opts.CohortMargin)
		}
	}
	return s.score(cands, each, cal)
}

// lexical is db.Lexical(ctx, match, w, f, limit), answered by the first
// of ls that can answer it exactly (index.Lexical): the bm25 engine when
// it is current and terms, the terms of match, are plain words; FTS5
// otherwise. nil terms: match was made otherwise, FTS5 answers.
func (s *Searcher) lexical(ctx context.Context, ls []index.Lexical, terms []analyze.Term, match string, w [2]float64, f index.Filter, limit int) ([]index.LexicalHit, error) {
	q := index.LexicalQuery{Terms: terms, Match: match, Weights: w, Filter: f, Limit: limit}
	for _, l := range ls {
		if hits, ok, err := l.Rank(ctx, q); ok || err != nil {
			return hits, err
		}
	}
	return nil, errNoLexical
}

// score sets the candidates' semantic strength (see score.go) and drops
// those that cannot reach floor: without a lexical match (BM25's or the
// identifier list's), their score is at most V. Of those dropped, near
// are the WeakMatches most similar that still relate to the query
// (cal.related): shown, marked weak, when nothing reaches the gate
// (results), rather than claiming that nothing matches.
func (s *Searcher) score(cands []*candidate, floor float64, cal calibration) (out, near []*candidate) {
	out = cands[:0]
	for _, c := range cands {
		if c.hasVec {
			c.semantic = cal.strength(c.cos)
		}
		c.rel = relevance(0, c.semantic)
		switch {
		case c.hasLex || c.inIdent || c.inContext || c.rel >= floor:
			out = append(out, c)
		case cal.related > 0 && c.hasVec && c.cos >= cal.related:
			near = append(near, c)
		}
	}
	sort.SliceStable(near, func(i, j int) bool { return near[i].cos > near[j].cos })
	return out, near[:min(len(near), WeakMatches)]
}

// Floor is the score floor q is held to: a query none of whose results
// reaches it returns nothing. It is q.MinScore if set (then every result
// must reach it); else, in hybrid and BM25 modes, Options.MinScore, and
// none in vector mode: the model's cosines alone do not separate a
// paraphrase from an unrelated text well enough for a default floor
// (with uselite, a floor cost vector-only search much of its recall on
// the dev set: continuity-eval).
//
// The default floor is a gate on the query, not a cut of every result:
// once one result reaches it, the results down to tailShare of it are
// kept (see floors).
func (s *Searcher) Floor(q Query) float64 {
	gate, _ := s.floors(q)
	return gate
}

// tailShare: under the default floor, the results a query keeps once its
// best reaches the floor are those scoring at least this share of it.
//
// Why a gate and not a cut: the floor is there so that a query about
// nothing in the history returns nothing, and a query is about something
// or not; but the evidence of a question asked in other words (few shared
// words, a cosine just above the unrelated level) often scores under the
// floor while a better-worded exchange above it does pass. Cut per result
// at 0.2, hybrid any@5 on the coding set's tune half was 0.477 against
// 0.545 without a floor; gated at 0.2 with results kept down to 0.1 it is
// 0.545, with the same nonsense queries answered (none on the coding set,
// 9 of 270 on the dev set's tune half), and the dev set's tune half
// unchanged (0.911 / 0.778). Chosen on the tune halves; see continuity-eval.
const tailShare = 0.5

// floors returns the floor the best result of q must reach (gate) and
// the one every result must reach (each).
func (s *Searcher) floors(q Query) (gate, each float64) {
	switch {
	case q.MinScore != nil:
		f := max(*q.MinScore, 0)
		return f, f
	case q.Mode == ModeVector:
		return 0, 0
	}
	f := max(s.opts.MinScore, 0)
	return f, f * tailShare
}

// TimeSpan is the span of time q names relative to when it is asked, if
// Search ranks its exchanges higher: in hybrid mode, with time anchoring
// on (Options.TimeWeight) and no Since or Until in q.
func (s *Searcher) TimeSpan(q Query) (TimeRef, bool) {
	if !s.anchors(q) {
		return TimeRef{}, false
	}
	return q.timeRef()
}

// anchors reports whether Search ranks the exchanges of the span q's text
// names higher (TimeSpan).
func (s *Searcher) anchors(q Query) bool {
	return q.Mode == ModeHybrid && s.opts.TimeWeight > 0 && q.Since.IsZero() && q.Until.IsZero()
}

// filter turns q's constraints into an index filter; none is true when
// they cannot match anything.
func (s *Searcher) filter(ctx context.Context, q Query) (f index.Filter, none bool, err error) {
	f.Since, f.Until, f.Types = q.Since, q.Until, q.Types
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return f, true, nil
	}
	switch {
	case len(q.Sessions) > 0 && (q.Chain != "" || q.Session != ""):
		return f, false, errors.New("search: Sessions cannot be combined with Session or Chain")
	case len(q.Sessions) > 0:
		f.Sessions = q.Sessions
	case q.Chain != "":
		chain, err := s.db.Chain(ctx, q.Chain, -1)
		if err != nil {
			return f, false, fmt.Errorf("search: resume chain of %s: %w", q.Chain, err)
		}
		if q.Session != "" {
			if !slices.Contains(chain, q.Session) {
				return f, true, nil
			}
			chain = []string{q.Session}
		}
		f.Sessions = chain
	case q.Session != "":
		f.Sessions = []string{q.Session}
	}
	return f, false, nil
}

// ScopeHolds reports whether q's filters (session, chain, time window)
// admit any exchange, whatever its words: a search that found nothing
// within them says whether there was anything to find.
func (s *Searcher) ScopeHolds(ctx context.Context, q Query) (bool, error) {
	f, none, err := s.filter(ctx, q)
	if err != nil || none {
		return false, err
	}
	rows, err := s.db.ExchangesNewestFirst(ctx, f, 1)
	return len(rows) > 0, err
}

// VectorsMissing says why a query is answered without vectors, "" when
// the vector side takes part: no embedder configured, the space still
// loading (a daemon that just started), no vector stored yet, the embedder
// not reached yet, or the space of a new embedder still being built.
// Callers show it next to the results, so that an empty or lexical-only
// answer is never mistaken for "nothing similar".
func (s *Searcher) VectorsMissing() string {
	return s.view().missing
}

// vectorView is the vector space a query searches and why it cannot
// (VectorsMissing), read once: the space and the embedder's state change
// while a query runs (a daemon that just started finishes loading, a
// remote embedder is reached), and a query's vector side and the reason
// its answer gives must be of the same moment.
type vectorView struct {
	space   *vectors.Space
	missing string // "" when the space is searchable
}

func (s *Searcher) view() vectorView {
	if s.emb == nil || s.space == nil {
		return vectorView{missing: "no embedder is configured: lexical (BM25) ranking only"}
	}
	v := s.space()
	return vectorView{space: v, missing: vectorsMissing(s.emb, v)}
}

func vectorsMissing(e embed.Embedder, v *vectors.Space) string {
	switch {
	// Dimension 0: a remote embedder that has not reached its server yet
	// (its space cannot load before it has); asking for its identity
	// would probe the server on every search.
	case e.Dimension() == 0:
		return "the embedder's server has not been reached yet (is it running? 'continuity doctor' checks it): lexical (BM25) ranking only for now"
	case v == nil:
		return "the vector space is still loading (the daemon just started): lexical (BM25) ranking only for now"
	case v.Identity() != vectors.SpaceIdentity(e):
		return "the vectors of " + vectors.SpaceIdentity(e) + " are still being built: lexical (BM25) ranking only for now ('continuity status' shows the progress)"
	case v.Len() == 0:
		return "no exchange has a vector yet: lexical (BM25) ranking only for now ('continuity status' shows the progress)"
	}
	return ""
}

// queryEmbedError is the embedder's failure to embed a query.
type queryEmbedError struct{ err error }

func (e *queryEmbedError) Error() string { return "search: embed query: " + e.err.Error() }
func (e *queryEmbedError) Unwrap() error { return e.err }

// embedQuery starts embedding text in its own goroutine, when view is a
// vector space of the embedder's identity to search (none yet, or still
// being built for a new embedder: then nothing is embedded), and returns
// the function that waits for the vector (nil without a space).
func (s *Searcher) embedQuery(ctx context.Context, text string, view vectorView) func() ([]float32, error) {
	if view.missing != "" {
		return func() ([]float32, error) { return nil, nil }
	}
	type answer struct {
		qv  []float32
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		qv, err := embed.EmbedQueries(ctx, s.emb, []string{text}) // with the model's query prefix, if any
		if err != nil {
			ch <- answer{err: &queryEmbedError{err}}
			return
		}
		ch <- answer{qv: qv[0]}
	}()
	return func() ([]float32, error) {
		a := <-ch
		ch <- a // later calls get the same answer
		return a.qv, a.err
	}
}

// vectorCandidates returns the nearest neighbours of the query's vector
// (embedding, see embedQuery) under each filter, in order, and the
// query's vector; nothing when there is no vector space of the embedder's
// identity.
func (s *Searcher) vectorCandidates(ctx context.Context, embedding func() ([]float32, error), view vectorView, depth int, filters ...index.Filter) ([][]vectors.Hit, []float32, error) {
	out := make([][]vectors.Hit, len(filters))
	if view.missing != "" {
		return out, nil, nil
	}
	q, err := embedding()
	if err != nil {
		return nil, nil, err
	}
	v := view.space
	if q == nil {
		return out, nil, nil
	}
	qv := [][]float32{q}
	for i, f := range filters {
		vf := vectors.Filter{Sessions: f.Sessions}
		if !f.Since.IsZero() {
			vf.Since = f.Since.UnixNano()
		}
		if !f.Until.IsZero() {
			vf.Until = f.Until.UnixNano()
		}
		if out[i], err = v.Query(ctx, qv[0], depth, vf); err != nil {
			return nil, nil, err
		}
		if len(s.more) == 0 {
			continue
		}
		best := map[int64]float64{}
		for _, h := range out[i] {
			best[h.Row] = h.Score
		}
		for _, m := range s.more {
			mv := m()
			if mv == nil {
				continue
			}
			hs, err := mv.Query(ctx, qv[0], depth, vf)
			if err != nil {
				return nil, nil, err
			}
			for _, h := range hs {
				if c, ok := best[h.Row]; !ok || h.Score > c {
					best[h.Row] = h.Score
				}
			}
		}
		merged := make([]vectors.Hit, 0, len(best))
		for r, c := range best {
			merged = append(merged, vectors.Hit{Row: r, Score: c})
		}
		sort.Slice(merged, func(a, b int) bool {
			if merged[a].Score != merged[b].Score {
				return merged[a].Score > merged[b].Score
			}
			return merged[a].Row > merged[b].Row
		})
		out[i] = merged[:min(depth, len(merged))]
	}
	return out, qv[0], nil
}

// fuse combines the candidate lists into one ranking, best first. With a
// single non-empty list, its own scores rank it.
func (s *Searcher) fuse(lists ...ranked) []*candidate {
	byRow := map[int64]*candidate{}
	var out []*candidate
	var used []ranked
	for _, l := range lists {
		if len(l.rows) > 0 {
			used = append(used, l)
		}
	}
	for _, l := range used {
		lo, hi := span(l.scores)
		for i, row := range l.rows {
			c := byRow[row]
			if c == nil {
				c = &candidate{row: row}
				byRow[row] = c
				out = append(out, c)
			}
			switch {
			case l.vector:
				c.cos, c.hasVec = l.scores[i], true
			case l.ident:
				c.inIdent = true
			case l.context:
				c.inContext = true
			default:
				c.lex, c.hasLex = l.scores[i], true
			}
			switch {
			case len(used) == 1:
				c.score = l.scores[i]
			case s.opts.Fusion == FusionScore:
				c.score += l.weight * norm(l.scores[i], lo, hi)
			default:
				c.score += l.weight / (s.opts.RRFK + float64(i+1))
			}
		}
	}
	// Ties (equal scores) go to the more recent exchange.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].row > out[j].row
	})
	return out
}

// span returns the smallest and largest of xs.
func span(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// norm maps x from [lo, hi] to [0, 1]; when all scores are equal, to 1.
func norm(x, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return (x - lo) / (hi - lo)
}
