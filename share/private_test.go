package share

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPrivateMarks(t *testing.T) {
	dir := t.TempDir()
	p, err := ReadPrivate(dir)
	if err != nil || p.Has("s1") || len(p.List()) != 0 {
		t.Fatalf("no file: %v %v", p, err)
	}
	for _, s := range []string{"s1", "s1", "s2"} {
		if _, err := MarkPrivate(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := MarkPrivate(dir, "a\nb"); err == nil {
		t.Error("a session id with a newline was accepted")
	}
	p, _ = ReadPrivate(dir)
	if !p.Has("s1") || !p.Has("s2") || p.Has("s3") || len(p.List()) != 2 {
		t.Fatalf("marks: %v", p.List())
	}
	fi, err := os.Stat(filepath.Join(dir, PrivateFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the marks file: %v %v", fi.Mode(), err)
	}
	if _, err := MarkPrivate(dir, "*"); err != nil {
		t.Fatal(err)
	}
	if p, _ = ReadPrivate(dir); !p.Has("anything") || p.List()[0] != "*" {
		t.Errorf("the whole workspace is not private: %v", p.List())
	}
}
