package watcher

import (
	"context"
	"time"
)

// FingerprintSize is how many bytes a Fingerprint covers at most: the head of
// a file, or the bytes just before its committed offset.
const FingerprintSize = 1024

// Fingerprint identifies a byte range of a file by its length and a hash.
// It lets the watcher tell "the same file, grown" from "another file with the
// same inode" or "the same path, rewritten", without trusting the path or the
// inode alone.
type Fingerprint struct {
	Len int    // bytes covered, at most FingerprintSize
	Sum uint64 // CRC-64 (ECMA) of those bytes
}

// Generation is one lifetime of a log file's content. A file seen for the
// first time starts a generation at offset 0; when the file is truncated or
// rewritten, its generation ends and a new one starts from 0. A file renamed
// inside the folder keeps its generation.
type Generation struct {
	ID   int64
	Path string // base name inside the watched folder, as last seen
	Dev  uint64
	Ino  uint64

	// Offset is the committed offset: the end of the last complete line.
	Offset int64
	// Line is the number of complete lines (blank ones included) before Offset.
	Line int64
	// Head fingerprints bytes [0, min(Offset, FingerprintSize)).
	Head Fingerprint
	// Tail fingerprints the min(Offset, FingerprintSize) bytes before Offset.
	Tail Fingerprint

	// Gone is set when no file in the folder holds this generation any more.
	// A gone generation is kept so that a restored identical file (git
	// checkout, backup restore) is recognised and not indexed again.
	Gone bool
}

// Line is one complete, newline-terminated line read from a generation.
type Line struct {
	Number int64 // 1-based line number within the generation
	Start  int64 // offset of its first byte
	End    int64 // offset just past its '\n'
	// Data is the line without its "\n" (and without a "\r" before it).
	// For an Oversize line, Data holds only the first ExcerptSize bytes.
	Data     []byte
	Oversize bool // longer than the configured maximum line size; skipped
	// Limit is, for an Oversize line, the maximum line size it exceeded
	// (Config.MaxLineBytes); 0 when not known.
	Limit int
	// BOM is set on the first line of a file that started with a UTF-8
	// byte order mark (EF BB BF, as Windows PowerShell 5.1 writes): the
	// mark is not part of Data. A mark anywhere else is content.
	BOM bool
}

// ByteOrderMark is the UTF-8 byte order mark, skipped at offset 0 of a file.
const ByteOrderMark = "\xef\xbb\xbf"

// ExcerptSize bounds what is kept of an oversize line.
const ExcerptSize = 256

// Batch is a run of complete lines read from one generation, with the
// generation state to commit together with them. Blank lines advance
// Gen.Offset and Gen.Line but are not in Lines, so a batch may hold no line.
type Batch struct {
	Gen   Generation // Offset, Line, Head and Tail already advanced past Lines
	Lines []Line
	// More is true when the file holds complete lines after the batch's
	// (the batch was cut by its limits); ModTime is the file's
	// modification time when the batch was read (zero when unknown, for
	// a log decompressed in memory). They place a line without a
	// timestamp among its neighbours (index.Commit).
	More    bool
	ModTime time.Time
}

// Store is the durable checkpointer the watcher needs. The index package
// implements it on SQLite; tests may use an in-memory one.
type Store interface {
	// Generations returns every generation that has not ended, gone ones too.
	Generations(ctx context.Context) ([]Generation, error)
	// CreateGeneration records g (its ID is ignored) and returns the new ID.
	// If replaces is not 0, that generation ends in the same transaction.
	CreateGeneration(ctx context.Context, g Generation, replaces int64) (int64, error)
	// UpdateGeneration persists Path, Dev, Ino and Gone; never the offset.
	UpdateGeneration(ctx context.Context, g Generation) error
	// Commit stores the batch's lines and advances the generation to
	// b.Gen in one transaction: after a crash either both happened or
	// neither. A line whose (generation, start offset) is already stored is
	// skipped, so a replayed batch is harmless.
	Commit(ctx context.Context, b Batch) error
	// SetSkippedFile records that the file name in the folder is skipped as
	// a whole (symlink, FIFO, directory, unreadable) with the reason, or
	// clears the record when reason is "".
	SetSkippedFile(ctx context.Context, name, reason string) error
}
