//go:build !race

package main

const raceEnabled = false

// waitScale multiplies the limits of the tests' waits for a condition
// (eventually, waitExchanges, caughtUp, poll): a binary built with -race
// runs several times slower, and CI's race run is the one on a loaded
// machine (TestRetention once hit its limit there). A limit only ends a
// hung run, so a longer one never lets a wrong answer pass.
const waitScale = 1
