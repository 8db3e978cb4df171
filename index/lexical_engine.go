package index

import (
	"context"

	"github.com/praxis-os/continuity/analyze"
)

// A Lexical ranks the exchanges by BM25 exactly as FTS5 does (the same
// rows, in the same order, with the same scores). Two implement it: FTS5
// itself (DB.Lexical and DB.TermDocs; search wraps them with its cache of
// counts) and the daemon's bm25 engine (follow/lexicon), which answers
// from memory when it holds exactly what FTS5 holds. A search asks its
// engines in turn, the bm25 engine first: the first that can answer
// exactly does, so that which engine answers never changes an answer.
type Lexical interface {
	// Rank is DB.Lexical(ctx, q.Match, q.Weights, q.Filter, q.Limit).
	// ok is false when this engine cannot answer q exactly (it is not
	// current, a term is not a plain word, the filter is one it cannot
	// express): the next engine must.
	Rank(ctx context.Context, q LexicalQuery) (hits []LexicalHit, ok bool, err error)
	// TermDocs is DB.TermDocs(ctx, stems); ok is false when this engine
	// cannot count them.
	TermDocs(ctx context.Context, stems []string) (docs map[string]int64, total int64, ok bool, err error)
}

// LexicalQuery is one BM25 query: Match, the FTS5 MATCH expression of
// Terms (analyze.MatchAny); nil Terms when Match was made otherwise (an
// expanded query): only FTS5 answers it then.
type LexicalQuery struct {
	Terms   []analyze.Term
	Match   string
	Weights [2]float64
	Filter  Filter
	Limit   int
}
