package search

import (
	"context"
	"errors"

	"github.com/praxis-os/continuity/index"
)

// A LexicalEngine is a lexical engine that follows the index beside FTS5
// (the daemon's bm25 engine, follow/lexicon). Each search takes a view of
// it, which holds it as it stands until released, and asks that view
// before FTS5 (see index.Lexical).
type LexicalEngine interface {
	// View returns the engine as one search uses it, and what releases
	// it; a view that cannot answer (the engine is behind) says so
	// query by query.
	View(ctx context.Context) (index.Lexical, func())
}

// ftsLexical is FTS5 as an index.Lexical: it answers every query.
type ftsLexical struct {
	db *index.DB
	df *dfCache
}

// Rank is db.Lexical; ok is always true.
func (f *ftsLexical) Rank(ctx context.Context, q index.LexicalQuery) ([]index.LexicalHit, bool, error) {
	hits, err := f.db.Lexical(ctx, q.Match, q.Weights, q.Filter, q.Limit)
	return hits, true, err
}

// errNoLexical: no engine answered, which cannot be: FTS5 always does.
var errNoLexical = errors.New("search: no lexical engine answered")

// lexicals returns the lexical engines one search asks, in order (the
// bm25 engine's view, when there is one, then FTS5), and what releases
// them.
func (s *Searcher) lexicals(ctx context.Context) ([]index.Lexical, func()) {
	if s.lex != nil {
		if v, release := s.lex.View(ctx); v != nil {
			return []index.Lexical{v, s.fts}, release
		}
	}
	return []index.Lexical{s.fts}, func() {}
}
