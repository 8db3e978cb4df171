//go:build !continuity_testhooks

package vectors

// snapshotStarting runs in the snapshot writer before it writes: nothing in
// the shipped binary (testhooks.go, built with the tag continuity_testhooks
// by the tests that hold the writer, lets them).
func snapshotStarting() {}
