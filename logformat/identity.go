package logformat

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"github.com/google/uuid"
)

// IDNamespace is the UUID namespace of derived event ids (protocol.md,
// "Event ids"): a name-based (version 5) UUID in it names a line.
var IDNamespace = uuid.MustParse("5b0e4a6c-3c2f-5d0e-9a55-c0a71b1e1d00")

// LineContent is the part of a stored line its derived id is made of:
// the line as indexed (redacted), without the white space around it (a
// "\r" a sync tool or a git checkout added does not make another event).
func LineContent(line []byte) []byte {
	return bytes.TrimSpace(line)
}

// LineKey is a 64-bit key of a line without producer id in its session:
// identical lines of a session share it. The index counts them with it to
// give each its place (DeriveID's occurrence).
func LineKey(session string, line []byte) int64 {
	h := sha256.New()
	h.Write([]byte(session))
	h.Write([]byte{0})
	h.Write(LineContent(line))
	var sum [sha256.Size]byte
	return int64(binary.LittleEndian.Uint64(h.Sum(sum[:0])))
}

// DeriveID is the id of an event written without an "id": a version 5
// UUID in IDNamespace of its session, its place among the identical
// lines of that session in its file (occurrence, from 0) and its
// content (LineContent), joined by NUL bytes. The same line has the same
// id on every machine and after every rebuild of the index; a second
// identical line of the file gets another (occurrence 1).
func DeriveID(session string, occurrence int64, line []byte) string {
	content := LineContent(line)
	name := make([]byte, 0, len(session)+len(content)+24)
	name = append(name, session...)
	name = append(name, 0)
	name = strconv.AppendInt(name, occurrence, 10)
	name = append(name, 0)
	name = append(name, content...)
	return uuid.NewSHA1(IDNamespace, name).String()
}
