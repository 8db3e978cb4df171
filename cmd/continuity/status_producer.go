package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

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
	// UnknownFieldNames: per unknown field of events of known types, how
	// many events carry it (an answer written as "response" shows here).
	UnknownFieldNames map[string]int64 `json:"unknown_field_names"`
}

func producerCountsOf(st index.Status) producerCounts {
	return producerCounts{
		TimestampsNoOffset: st.TimestampsNoOffset, AIFromAlias: st.AIFromAlias,
		ForgottenSkipped: st.ForgottenSkipped, Forgotten: st.Forgotten,
		UnknownFieldNames: st.UnknownFieldNames,
	}
}

// print writes the counts that are not zero, as tab-separated lines.
func (c producerCounts) print(w io.Writer) {
	if len(c.UnknownFieldNames) > 0 {
		names := make([]string, 0, len(c.UnknownFieldNames))
		for n := range c.UnknownFieldNames {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := c.UnknownFieldNames[names[i]], c.UnknownFieldNames[names[j]]
			return a > b || a == b && names[i] < names[j]
		})
		var parts []string
		for i, n := range names {
			if i == 10 {
				parts = append(parts, fmt.Sprintf("and %d more", len(names)-10))
				break
			}
			parts = append(parts, fmt.Sprintf("%q %d", n, c.UnknownFieldNames[n]))
		}
		fmt.Fprintf(w, "  unknown fields, kept but not searched\t%s\n", strings.Join(parts, ", "))
	}
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
