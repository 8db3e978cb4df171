// Package vectors holds what continuity keeps of the exchanges' meaning:
// the in-memory vector space of one embedder (Space: int8 codes, sign
// codes for a first pass, rows, sessions and times), Load (the space from
// the index's vectors table; the snapshot files of earlier versions are
// removed), and the text recipes: what of an exchange is embedded, and
// the space identity that names the embedder and the recipe.
//
// The space is derived from the index: deleting it costs a rebuild, never
// data. Package search queries a Space at query time; the embedding
// worker (follow/embedding), one of the views that follow the events
// table, embeds the exchanges that have no vector yet and stores them in
// the index and the space.
package vectors
