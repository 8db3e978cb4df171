package vectors

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/praxis-os/continuity/index"
)

// Vector snapshots were files beside the index holding the space as it is
// in memory (int8 codes, scales, sign codes), so that a start did not
// decode and quantise a float32 blob per exchange. Since schema version 10
// the index stores the vectors in that form itself (index/vectorcodec.go)
// and a start copies them in: the snapshot was a second copy of every
// vector on disk, and is no longer written. Files earlier versions left
// are removed: at a load by a writing process (Load), on forget and edits
// (Worker.Remove), when an embedder's vectors are dropped (SnapshotPath),
// and their temporary files at a start (RemoveSnapshotTemps).

// SnapshotPath is the (former) snapshot file of identity's space for db:
// in the index folder, named by a hash of the identity.
func SnapshotPath(db *index.DB, identity string) string {
	h := sha256.Sum256([]byte(identity))
	return filepath.Join(filepath.Dir(db.Path()), "vectors-"+hex.EncodeToString(h[:8])+".snap")
}

// snapshotTempPattern names the temporary files a snapshot was written
// into before it was renamed into place.
const snapshotTempPattern = ".vectors-*.tmp"

// RemoveSnapshotTemps removes the temporary snapshot files in the cache
// folder dir: a killed process's leftovers.
func RemoveSnapshotTemps(dir string) error {
	return removeFiles(dir, snapshotTempPattern, "an unfinished vector snapshot")
}

// RemoveSnapshots deletes every snapshot file of db's vector spaces.
func RemoveSnapshots(db *index.DB) error {
	return removeFiles(filepath.Dir(db.Path()), "vectors-*.snap", "vector snapshot")
}

// removeFiles removes the files of dir whose names match pattern; what
// names them in an error.
func removeFiles(dir, pattern, what string) error {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", what, err)
		}
	}
	return nil
}
