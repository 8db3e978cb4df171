package vectors

import (
	"testing"
	"unsafe"
)

// TestArenaSize: a region is at least its block, grows with what the
// kind holds, stops at arenaMax, and is a whole number of huge pages
// from one up.
func TestArenaSize(t *testing.T) {
	for _, c := range []struct{ size, total, want int }{
		{size: 4096, total: 0, want: 4096},                   // a small space's first block: no huge page
		{size: 256 << 10, total: 256 << 10, want: 256 << 10}, // grows with the space...
		{size: 256 << 10, total: 1 << 20, want: 1 << 20},
		{size: 256 << 10, total: 3 << 20, want: 4 << 20},   // ...in huge pages once it is that large
		{size: 2 << 20, total: 0, want: 2 << 20},           // a block of a huge page
		{size: 2 << 20, total: 1 << 30, want: arenaMax},    // at most arenaMax
		{size: 100 << 20, total: 1 << 30, want: 100 << 20}, // a block larger than arenaMax
		{size: 3<<20 + 1, total: 0, want: 4 << 20},
	} {
		if got := arenaSize(c.size, c.total); got != c.want {
			t.Errorf("arenaSize(%d, %d) = %d, want %d", c.size, c.total, got, c.want)
		}
	}
}

// TestBlockMemCarve: blocks carved from the arenas are zeroed, aligned,
// apart from each other (writing one leaves the others as they were),
// codes and signs in regions of their own; free unmaps every region.
func TestBlockMemCarve(t *testing.T) {
	m := &blockMem{}
	var codes [][]int8
	var signs [][]uint64
	for k := range 40 {
		c, err := m.codeBlock(64 << 10)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.signBlock(8 << 10)
		if err != nil {
			t.Fatal(err)
		}
		if uintptr(unsafe.Pointer(&s[0]))%8 != 0 {
			t.Fatalf("sign block %d not aligned", k)
		}
		for _, x := range c {
			if x != 0 {
				t.Fatalf("code block %d not zeroed", k)
			}
		}
		for _, x := range s {
			if x != 0 {
				t.Fatalf("sign block %d not zeroed", k)
			}
		}
		for i := range c {
			c[i] = int8(k + 1)
		}
		for i := range s {
			s[i] = uint64(k + 1)
		}
		codes, signs = append(codes, c), append(signs, s)
	}
	for k := range codes {
		if codes[k][0] != int8(k+1) || codes[k][len(codes[k])-1] != int8(k+1) {
			t.Errorf("code block %d was overwritten", k)
		}
		if signs[k][0] != uint64(k+1) || signs[k][len(signs[k])-1] != uint64(k+1) {
			t.Errorf("sign block %d was overwritten", k)
		}
	}
	// 40 blocks of 64 KiB in regions that grow: far fewer regions than blocks.
	if n := len(m.regions); n >= 40 || n < 4 {
		t.Errorf("%d regions for 80 blocks", n)
	}
	if m.codes.total != 40*64<<10 || m.signs.total != 40*8*8<<10 {
		t.Errorf("totals %d and %d", m.codes.total, m.signs.total)
	}
	m.free()
	if len(m.regions) != 0 || m.codes.cur != nil {
		t.Errorf("free left %d regions", len(m.regions))
	}
}
