//go:build continuity_testhooks

// A hook for the tests that hold the snapshot writer
// (snapshot_hooks_test.go), compiled in with the tag continuity_testhooks
// only; the shipped binary has none (testhooks_off.go).

package vectors

// testHookSnapshot, when set by a test, runs in the snapshot writer before
// it writes.
var testHookSnapshot func()

// snapshotStarting runs in the snapshot writer before it writes.
func snapshotStarting() {
	if testHookSnapshot != nil {
		testHookSnapshot()
	}
}
