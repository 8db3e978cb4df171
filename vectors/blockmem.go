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
// (runtime.AddCleanup in NewVectors).
type blockMem struct {
	mu      sync.Mutex
	regions [][]byte
}

// block maps a block of codes int8 and signs uint64, zeroed.
func (m *blockMem) block(codes, signs int) ([]int8, []uint64, error) {
	size := codes + 8*signs
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("map a block of %d bytes: %w", size, err)
	}
	m.mu.Lock()
	m.regions = append(m.regions, b)
	m.mu.Unlock()
	// The signs first: mmap returns page-aligned memory, so the uint64
	// are aligned.
	s := unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), signs)
	c := unsafe.Slice((*int8)(unsafe.Pointer(&b[8*signs])), codes)
	return c, s, nil
}

// free unmaps every block.
func (m *blockMem) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.regions {
		unix.Munmap(b)
	}
	m.regions = nil
}
