package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The benchmarks' data does not change unnoticed: figures measured on it
// in different sessions are compared. The digests are those of the logs
// continuity-bench wrote before the generator moved here.
func TestWriteLogsIsStable(t *testing.T) {
	for _, c := range []struct {
		name   string
		n      int
		long   bool
		size   int64
		digest string
	}{
		{"short", 1000, false, 388517, "fd329c33259c80a5c1882b9feecdc739bb82018bae17c37cbe822e4011c9f8f0"},
		{"long", 300, true, 442995, "edb205eb2ad22d6a0d7a7c127949847d5528fc12f65161b84338a3d6c487f159"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gen := New(rand.New(rand.NewPCG(1, 1)))
			next := gen.ShortExchange
			if c.long {
				next = gen.LongExchange
			}
			size, err := WriteLogs(dir, c.n, func(int) (string, string) { return next() })
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			var lines, onDisk int
			for i := range Files {
				path := filepath.Join(dir, fmt.Sprintf("session-bench%d.jsonl", i))
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("%s mode %#o", path, fi.Mode().Perm())
				}
				h.Write(b)
				lines += strings.Count(string(b), "\n")
				onDisk += len(b)
			}
			if got := hex.EncodeToString(h.Sum(nil)); size != c.size || int64(onDisk) != size || got != c.digest || lines != c.n {
				t.Errorf("%d lines, %d bytes (%d on disk), digest %s; want %d, %d, %s", lines, size, onDisk, got, c.n, c.size, c.digest)
			}
		})
	}
}

// Text is exactly n bytes of the vocabulary's words; the exchanges'
// sizes stay in their ranges.
func TestSizes(t *testing.T) {
	gen := New(rand.New(rand.NewPCG(3, 4)))
	for _, n := range []int{0, 1, 7, 100, 5000} {
		if s := gen.Text(n); len(s) != n {
			t.Errorf("Text(%d) is %d bytes", n, len(s))
		}
	}
	for range 1000 {
		u, a := gen.ShortExchange()
		if len(u) < 20 || len(u) >= 120 || len(a) < 60 || len(a) >= 360 {
			t.Fatalf("short exchange of %d + %d bytes", len(u), len(a))
		}
		u, a = gen.LongExchange()
		if n := len(u) + len(a); n < 200 || n >= 32000 {
			t.Fatalf("long exchange of %d bytes", n)
		}
	}
}
