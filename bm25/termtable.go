package bm25

// termTable maps the tail's terms to their ids: open addressing, linear
// probing, each slot the id of a term (or -1), the term's hash kept by id.
// It replaced a map[string]int32, which was Add's largest cost (hashing,
// probing, comparing: one look-up per token of every document);
// this does one FNV-1a pass over the token and usually one comparison.
type termTable struct {
	slots  []int32
	hashes []uint32 // by id
	keys   []string // by id
	shift  uint
}

const termTableMinBits = 12

func newTermTable() *termTable {
	t := &termTable{}
	t.resize(termTableMinBits)
	return t
}

func (t *termTable) resize(bits uint) {
	t.slots = make([]int32, 1<<bits)
	for i := range t.slots {
		t.slots[i] = -1
	}
	t.shift = 32 - bits
	mask := uint32(len(t.slots) - 1)
	for id, h := range t.hashes {
		i := t.slot(h)
		for t.slots[i] >= 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id)
	}
}

// slot is the home slot of hash h (Fibonacci hashing of FNV's bits).
func (t *termTable) slot(h uint32) uint32 { return (h * 0x9E3779B1) >> t.shift }

func fnv1a(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// find returns the id of tok, or -1.
func (t *termTable) find(tok []byte) int32 {
	h := fnv1a(tok)
	mask := uint32(len(t.slots) - 1)
	for i := t.slot(h); ; i = (i + 1) & mask {
		id := t.slots[i]
		if id < 0 {
			return -1
		}
		if t.hashes[id] == h && t.keys[id] == string(tok) {
			return id
		}
	}
}

// intern returns the id of tok, adding it (with the next id) when new;
// added says which.
func (t *termTable) intern(tok []byte) (id int32, added bool) {
	h := fnv1a(tok)
	mask := uint32(len(t.slots) - 1)
	i := t.slot(h)
	for ; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id < 0 {
			break
		}
		if t.hashes[id] == h && t.keys[id] == string(tok) {
			return id, false
		}
	}
	id = int32(len(t.keys))
	t.keys = append(t.keys, string(tok))
	t.hashes = append(t.hashes, h)
	t.slots[i] = id
	if 2*len(t.keys) > len(t.slots) {
		t.resize(uint(32-t.shift) + 1)
	}
	return id, true
}

func (t *termTable) len() int { return len(t.keys) }
