// Package vectors holds what continuity keeps of the exchanges' meaning:
// the in-memory vector space of one embedder (Space: int8 codes, sign
// codes for a first pass, rows, sessions and times), its snapshot files
// beside the index (a restart reads them in one pass), Load (the space
// from the index's vectors table, or a snapshot and what came after), and
// the embedding Worker, which embeds the exchanges that have no vector
// yet and stores them in the index and the space.
//
// The space and the worker are derived from the index: deleting them
// costs a rebuild, never data. Package search queries a Space at query
// time; the daemon runs the Worker as one of the views that follow the
// events table (package follow).
package vectors
