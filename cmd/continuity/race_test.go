//go:build race

package main

// raceEnabled: the tests run under the race detector (go test -race), and
// so does the binary they build.
const raceEnabled = true

// waitScale multiplies the limits of the tests' waits for a condition
// (eventually, waitExchanges, caughtUp, poll): a binary built with -race
// runs several times slower, and CI's race run is the one on a loaded
// machine (TestRetention once hit its limit there). A limit only ends a
// hung run, so a longer one never lets a wrong answer pass.
const waitScale = 3
