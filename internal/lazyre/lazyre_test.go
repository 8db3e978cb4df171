package lazyre

import (
	"sync"
	"testing"
)

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	built := 0
	re := Func(func() string { built++; return `a(b+)c` })
	if built != 0 {
		t.Fatalf("compiled before first use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { re() })
	}
	wg.Wait()
	if built != 1 {
		t.Fatalf("built %d times, want once", built)
	}
	if re() != re() {
		t.Fatal("each call returned a different *regexp.Regexp")
	}
	if m := New(`a(b+)c`)().FindStringSubmatch("xabbbc"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("match %q", m)
	}
}

func TestNewPanicsOnBadExpressionAtFirstUse(t *testing.T) {
	re := New(`a(`) // no panic yet
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic at first use")
		}
	}()
	re()
}
