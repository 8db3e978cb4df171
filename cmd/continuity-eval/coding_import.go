package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/praxis-os/continuity/importer"
)

// errNoImporter: this build has no transcript importer for an agent.
var errNoImporter = errors.New("no importer in this build")

// importConverter converts transcripts with the importer package, the code
// behind `continuity import --from AGENT`: one importer per agent and logs
// folder, so that each agent's store is read once and a session continued
// in a later file (a resume, a grown capture) is appended to, not copied.
func importConverter() transcriptConverter {
	ims := map[string]*importer.Importer{}
	return func(ctx context.Context, agent, path, logs string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := agent + "\x00" + logs
		im, ok := ims[key]
		if !ok {
			var err error
			if im, err = importer.New(agent, logs, importer.Options{}); err != nil {
				return fmt.Errorf("%w: %v", errNoImporter, err)
			}
			ims[key] = im
		}
		res, err := im.ImportFile(path, im.Options)
		if err != nil {
			return err
		}
		if res.Sessions == 0 {
			why := append(res.Skips, res.Problems...)
			if len(why) == 0 {
				why = []string{"no session in it"}
			}
			return fmt.Errorf("%w: %s", errNotTranscript, strings.Join(why, "; "))
		}
		return nil
	}
}
