//go:build !cgo

package bm25

import "math"

// logC falls back on math.Log without cgo: scores may then differ from
// FTS5's in the last bit (and SQLite itself needs cgo in this project).
func logC(x float64) float64 { return math.Log(x) }

const exactLog = false
