package vectors

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blockMem maps the blocks of a vector space outside the Go heap. A space
// of 1M vectors of 512 components is 512 MB of int8 and 64 MB of sign
// codes: on the heap, the garbage collector would let the heap grow to
// twice that before collecting (GOGC=100), and a daemon that holds 600 MB
// of vectors would sit at 1.2 GB resident. Mapped anonymously, the blocks
// cost their size and nothing more, and the collector neither scans nor
// counts them. They are unmapped when the space is garbage
// (runtime.AddCleanup in NewVectors). Codes and signs are mapped apart: a
// large space has sign blocks for all its vectors and code blocks for
// those whose codes it keeps in memory (disk.go).
type blockMem struct {
	mu    sync.Mutex
	codes [][]byte // the regions of code blocks
	signs [][]byte // the regions of sign blocks
}

// mapZeroed maps size bytes, zeroed.
func mapZeroed(size int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map a block of %d bytes: %w", size, err)
	}
	return b, nil
}

// codeBlock maps a block of codes int8, zeroed.
func (m *blockMem) codeBlock(codes int) ([]int8, error) {
	b, err := mapZeroed(codes)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.codes = append(m.codes, b)
	m.mu.Unlock()
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), codes), nil
}

// signBlock maps a block of signs uint64, zeroed (mmap returns
// page-aligned memory: the uint64 are aligned).
func (m *blockMem) signBlock(signs int) ([]uint64, error) {
	b, err := mapZeroed(8 * signs)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.signs = append(m.signs, b)
	m.mu.Unlock()
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), signs), nil
}

// free unmaps every block.
func (m *blockMem) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range append(m.codes, m.signs...) {
		unix.Munmap(b)
	}
	m.codes, m.signs = nil, nil
}
