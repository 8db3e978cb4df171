package main

import (
	"fmt"
	"io"

	"github.com/praxis-os/continuity/index"
)

// producerCounts are the lines of `status` about lines read otherwise than
// written (protocol.md, "Producer mistakes") or not stored because their
// session was forgotten: each is a trace of something that would
// otherwise go unnoticed.
type producerCounts struct {
	TimestampsNoOffset int64 `json:"timestamps_without_offset"` // read in the daemon's local time zone
	AIFromAlias        int64 `json:"ai_from_alias"`             // "assistant" read as "ai"
	ForgottenSkipped   int64 `json:"forgotten_skipped"`         // lines of forgotten sessions not indexed again
	Forgotten          int64 `json:"forgotten_sessions"`        // sessions removed by `forget`
}

func producerCountsOf(st index.Status) producerCounts {
	return producerCounts{
		TimestampsNoOffset: st.TimestampsNoOffset, AIFromAlias: st.AIFromAlias,
		ForgottenSkipped: st.ForgottenSkipped, Forgotten: st.Forgotten,
	}
}

// print writes the counts that are not zero, as tab-separated lines.
func (c producerCounts) print(w io.Writer) {
	if c.TimestampsNoOffset > 0 {
		fmt.Fprintf(w, "timestamps without offset\t%d\t(read as local time; write Z or +hh:mm)\n", c.TimestampsNoOffset)
	}
	if c.AIFromAlias > 0 {
		fmt.Fprintf(w, "answers given as \"assistant\"\t%d\t(read as \"ai\")\n", c.AIFromAlias)
	}
	if c.Forgotten > 0 {
		fmt.Fprintf(w, "forgotten sessions\t%d\n", c.Forgotten)
		fmt.Fprintf(w, "lines of forgotten sessions not indexed\t%d\t(listed by 'continuity rejects')\n", c.ForgottenSkipped)
	}
}
