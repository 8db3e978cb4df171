package watcher

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// memStore is an in-memory Store for tests. It keeps every committed line
// and fails loudly on a line committed twice.
type memStore struct {
	mu         sync.Mutex
	nextID     int64
	gens       map[int64]Generation
	ended      map[int64]bool
	lines      map[[2]int64]Line // by (generation, start)
	order      [][2]int64
	dups       int
	skipped    map[string]string
	failCommit error
}

func newMemStore() *memStore {
	return &memStore{gens: map[int64]Generation{}, ended: map[int64]bool{}, lines: map[[2]int64]Line{}, skipped: map[string]string{}}
}

func (m *memStore) Generations(ctx context.Context) ([]Generation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Generation
	for id, g := range m.gens {
		if !m.ended[id] {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memStore) CreateGeneration(ctx context.Context, g Generation, replaces int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	g.ID = m.nextID
	m.gens[g.ID] = g
	if replaces != 0 {
		m.ended[replaces] = true
	}
	return g.ID, nil
}

func (m *memStore) UpdateGeneration(ctx context.Context, g Generation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.gens[g.ID]
	if !ok {
		return fmt.Errorf("no generation %d", g.ID)
	}
	old.Path, old.Dev, old.Ino, old.Gone = g.Path, g.Dev, g.Ino, g.Gone
	m.gens[g.ID] = old
	return nil
}

func (m *memStore) Commit(ctx context.Context, b Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failCommit != nil {
		return m.failCommit
	}
	if _, ok := m.gens[b.Gen.ID]; !ok {
		return fmt.Errorf("no generation %d", b.Gen.ID)
	}
	for _, l := range b.Lines {
		k := [2]int64{b.Gen.ID, l.Start}
		if _, ok := m.lines[k]; ok {
			m.dups++
			continue
		}
		m.lines[k] = l
		m.order = append(m.order, k)
	}
	g := b.Gen
	g.Gone = m.gens[b.Gen.ID].Gone
	m.gens[b.Gen.ID] = g
	return nil
}

func (m *memStore) SetSkippedFile(ctx context.Context, name, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reason == "" {
		delete(m.skipped, name)
	} else {
		m.skipped[name] = reason
	}
	return nil
}

// texts returns the data of every committed line, in commit order.
func (m *memStore) texts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.order))
	for _, k := range m.order {
		l := m.lines[k]
		if l.Oversize {
			out = append(out, fmt.Sprintf("OVERSIZE(%d>%d)", l.End-l.Start, l.Limit))
			continue
		}
		out = append(out, string(l.Data))
	}
	return out
}

func (m *memStore) skippedCopy() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.skipped {
		out[k] = v
	}
	return out
}
