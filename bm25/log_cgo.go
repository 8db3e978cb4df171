//go:build cgo

package bm25

// #cgo LDFLAGS: -lm
// #include <math.h>
import "C"

// logC is the C library's log(), the one SQLite's bm25() calls. Go's
// math.Log is within an ulp of it but not always equal (measured: about
// one query in a hundred then scored an ulp away from FTS5), and the
// engine promises FTS5's scores bit for bit. It runs once per distinct
// query term, so the cgo call costs nothing that shows.
func logC(x float64) float64 { return float64(C.log(C.double(x))) }

// exactLog reports whether logC is the C library's.
const exactLog = true
