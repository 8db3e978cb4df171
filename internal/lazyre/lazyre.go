// Package lazyre compiles a package-level regular expression the first
// time it is used instead of when the program starts.
//
// Every command of the one continuity binary pays for the package-level
// state of every package linked in, before main runs: a `continuity
// search` answered by the daemon never runs the importers' or the time
// parser's expressions, yet compiled them all (about a millisecond of CPU
// and a hundred fresh heap pages; a page fault costs 13-25 µs on the
// paravirtualized VMs this runs on). See docs/performance.md, "CLI start
// and round trip".
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call (panicking,
// as regexp.MustCompile does, when expr is not valid) and returns the same
// *regexp.Regexp on every call; safe for concurrent use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Func is New for an expression that has to be computed (joined from a
// list, say): build runs once, on first use.
func Func(build func() string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(build()) })
}
