package uselite

import "testing"

// BenchmarkLoad: reading the embedded model (once per process, on the
// first Embed).
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := loadShared(); err != nil {
			b.Fatal(err)
		}
	}
}
