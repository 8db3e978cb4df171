//go:build race

package main

// raceEnabled: the tests run under the race detector (go test -race), and
// so does the binary they build.
const raceEnabled = true
