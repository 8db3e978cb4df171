package logformat

import "testing"

func TestParseLogName(t *testing.T) {
	tests := []struct {
		name string
		want LogName
		ok   bool
	}{
		{"x.jsonl", LogName{Base: "x.jsonl"}, true},
		{"x.jsonl.1", LogName{Base: "x.jsonl", Rotation: 1}, true},
		{"x.jsonl.12.gz", LogName{Base: "x.jsonl", Rotation: 12, Compressed: true}, true},
		{"x.jsonl.gz", LogName{Base: "x.jsonl", Compressed: true}, true},
		{"session-a.b.jsonl.3", LogName{Base: "session-a.b.jsonl", Rotation: 3}, true},
		{"x.jsonl.0", LogName{}, false},
		{"x.jsonl.01", LogName{}, false},
		{"x.jsonl.12345", LogName{}, false}, // a pid or a time, not a rotation
		{"x.jsonl.tmp", LogName{}, false},
		{"x.jsonl.1.tmp", LogName{}, false},
		{"x.jsonl~", LogName{}, false},
		{".jsonl", LogName{}, false},
		{".jsonl.1", LogName{}, false},
		{"x.json", LogName{}, false},
		{"x.jsonl.gz.1", LogName{}, false},
		{"x.txt.1", LogName{}, false},
		{"x.gz", LogName{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseLogName(tt.name)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseLogName(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseLogName: a name read as a log gives back a base name ending in
// .jsonl that is a prefix of it.
func FuzzParseLogName(f *testing.F) {
	for _, s := range []string{"x.jsonl", "x.jsonl.1.gz", "x.jsonl.gz", "a.jsonl.99", ".jsonl.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := ParseLogName(name)
		if !ok {
			return
		}
		if len(n.Base) <= len(".jsonl") || n.Base[len(n.Base)-6:] != ".jsonl" || name[:len(n.Base)] != n.Base || n.Rotation < 0 {
			t.Fatalf("ParseLogName(%q) = %+v", name, n)
		}
		if n.Live() != (name == n.Base) {
			t.Fatalf("ParseLogName(%q) = %+v: live %v", name, n, n.Live())
		}
	})
}
