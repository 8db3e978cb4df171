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
// (runtime.AddCleanup in NewVectors). Codes and signs are carved from
// regions of their own (arenas): a large space has sign blocks for all
// its vectors and code blocks for those whose codes it keeps in memory
// (disk.go).
//
// Why arenas: a query's first stage reads every sign code (127 MB at 2M
// vectors) and its second the candidates' codes, all over the space. In
// 4 KiB pages that is a TLB miss every 64 vectors' signs, each a
// two-level page walk in a virtual machine, and a start faults in one
// page at a time (tens of microseconds a fault there). Arenas grow with
// the space (each as large as the kind's blocks so far, up to
// arenaMax) and those of 2 MiB and more are asked to be backed by huge
// pages (MADV_HUGEPAGE; Linux honours it under its default "madvise"
// policy): at 1M exchanges the first stage takes about half the time and
// a start faults in 2 MiB at a time. A small space keeps small regions
// and never holds a huge page it does not fill.
type blockMem struct {
	mu      sync.Mutex
	regions [][]byte // every mapped region
	codes   arena
	signs   arena
}

// hugePages says whether regions of huge pages' size are advised to be
// backed by them. A variable for benchmarks.
var hugePages = true

// arena is where the next blocks of one kind are carved from.
type arena struct {
	cur   []byte // the current region
	used  int    // bytes of cur given out
	total int    // bytes given out from every region of this kind
}

const (
	hugePage = 2 << 20  // the x86-64 and arm64 huge page
	arenaMax = 64 << 20 // the largest region an arena maps at once
)

// arenaSize is the size of a new region for a block of size bytes, after
// total bytes of the kind were given out: as large as those (a space that
// grew to N bytes likely grows further), at least the block, at most
// arenaMax; a whole number of huge pages from one up, so that the kernel
// aligns it on one.
func arenaSize(size, total int) int {
	n := max(size, min(total, arenaMax))
	if n >= hugePage {
		n = (n + hugePage - 1) / hugePage * hugePage
	}
	return n
}

// mapZeroed maps size bytes, zeroed; a region of huge pages' size is
// advised to be backed by them (an error of the advice is ignored: it is
// only an advice, and 4 KiB pages work).
func mapZeroed(size int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map a block of %d bytes: %w", size, err)
	}
	if size >= hugePage && hugePages {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
	return b, nil
}

// carve gives out size bytes, zeroed, from a's region, mapping a new one
// when it has no room left.
func (m *blockMem) carve(a *arena, size int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(a.cur)-a.used < size {
		b, err := mapZeroed(arenaSize(size, a.total))
		if err != nil {
			return nil, err
		}
		m.regions = append(m.regions, b)
		a.cur, a.used = b, 0
	}
	b := a.cur[a.used : a.used+size : a.used+size]
	a.used += size
	a.total += size
	return b, nil
}

// codeBlock maps a block of codes int8, zeroed.
func (m *blockMem) codeBlock(codes int) ([]int8, error) {
	b, err := m.carve(&m.codes, codes)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), codes), nil
}

// signBlock maps a block of signs uint64, zeroed. Regions are page
// aligned and blocks a whole number of words: the uint64 are aligned.
func (m *blockMem) signBlock(signs int) ([]uint64, error) {
	b, err := m.carve(&m.signs, 8*signs)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), signs), nil
}

// free unmaps every region.
func (m *blockMem) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.regions {
		unix.Munmap(b)
	}
	m.regions = nil
	m.codes, m.signs = arena{}, arena{}
}
