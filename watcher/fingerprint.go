package watcher

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"sync"
)

// crcTable is built on first use (32 KiB of tables), not at the start of
// every command of the binary.
var crcTable = sync.OnceValue(func() *crc64.Table { return crc64.MakeTable(crc64.ECMA) })

// fingerprintAt hashes the n bytes of f that start at off.
func fingerprintAt(f io.ReaderAt, off int64, n int) (Fingerprint, error) {
	if n <= 0 {
		return Fingerprint{}, nil
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return Fingerprint{}, fmt.Errorf("fingerprint %d bytes at %d: file shorter than expected", n, off)
		}
		return Fingerprint{}, fmt.Errorf("fingerprint %d bytes at %d: %w", n, off, err)
	}
	return Fingerprint{Len: n, Sum: crc64.Checksum(buf, crcTable())}, nil
}
