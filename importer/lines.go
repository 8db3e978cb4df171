package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// records walks the lines of a native JSONL transcript (Claude Code, Codex):
// one record a line, blank lines skipped. A line over maxNativeLine bytes
// and a read error are reported as problems of the file, with the line
// number, and never stop the walk of the lines before them; the parsers
// only see whole, trimmed records.
type records struct {
	br       *bufio.Reader
	name     string
	problems *[]Problem
	lineNo   int
	rec      []byte
}

func newRecords(r io.Reader, name string, problems *[]Problem) *records {
	return &records{br: bufio.NewReaderSize(r, 1<<16), name: name, problems: problems}
}

// Next moves to the next non-blank record; false at the end of the file or
// after a read error (reported).
func (rs *records) Next() bool {
	for {
		rs.lineNo++
		line, tooLong, err := readLine(rs.br, maxNativeLine)
		if len(line) == 0 && err != nil {
			if err != io.EOF {
				*rs.problems = append(*rs.problems, Problem{File: rs.name, Line: rs.lineNo, Reason: "read: " + err.Error()})
			}
			return false
		}
		if tooLong {
			*rs.problems = append(*rs.problems, Problem{File: rs.name, Line: rs.lineNo, Reason: fmt.Sprintf("record over %d bytes, skipped", maxNativeLine)})
			continue
		}
		if rs.rec = bytes.TrimSpace(line); len(rs.rec) > 0 {
			return true
		}
	}
}

// Line is the current record's line number (1-based).
func (rs *records) Line() int { return rs.lineNo }

// Bytes is the current record, trimmed; valid until the next call to Next.
func (rs *records) Bytes() []byte { return rs.rec }
