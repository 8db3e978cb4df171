package main

import (
	"context"
	"errors"
)

// errNoImporter: this build has no transcript importer.
var errNoImporter = errors.New("no importer in this build: the coding set needs the importer package (continuity import)")

// importTranscript converts one transcript with the importer package.
// Until the importer (branch capture) is merged there is none.
func importTranscript(ctx context.Context, agent, path, logsDir string) error {
	return errNoImporter
}
