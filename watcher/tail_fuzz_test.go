package watcher

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzTailLines: the lines a tail reads from a file, in batches of any
// size, are its complete lines split at '\n', without a '\r' before it,
// blank ones left out, and a UTF-8 byte order mark skipped at offset 0
// only; the committed offset is the end of the last complete line.
func FuzzTailLines(f *testing.F) {
	f.Add([]byte("\xef\xbb\xbf{\"a\":1}\r\n{\"b\":2}\n\xef\xbb\xbfx\npartial"), 3)
	f.Add([]byte("\xef\xbb\xbf\n\nline\n"), 1)
	f.Add([]byte("a\r\n\r\n  \nb"), 7)
	f.Fuzz(func(t *testing.T, content []byte, batch int) {
		if batch <= 0 || batch > 50 || len(content) > 1<<16 {
			return
		}
		path := filepath.Join(t.TempDir(), "x.jsonl")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		tl := &tail{f: plainFile{fh}, name: "x.jsonl"}
		var got []Line
		var end int64
		for {
			b, more, err := tl.readBatch(make([]byte, 7), 1<<20, batch, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, b.Lines...)
			end = b.Gen.Offset
			if !more {
				break
			}
		}
		var want [][]byte
		off := 0
		for i, raw := range bytes.SplitAfter(content, []byte("\n")) {
			if len(raw) == 0 || raw[len(raw)-1] != '\n' {
				break
			}
			data := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
			if i == 0 {
				data = bytes.TrimPrefix(data, []byte(ByteOrderMark))
			}
			off += len(raw)
			if len(bytes.TrimSpace(data)) > 0 {
				want = append(want, data)
			}
		}
		if end != int64(off) {
			t.Fatalf("committed offset %d, want %d", end, off)
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Data, want[i]) || got[i].BOM != (got[i].Start == 0 && bytes.HasPrefix(content, []byte(ByteOrderMark))) {
				t.Fatalf("line %d: %q (BOM %v), want %q", i, got[i].Data, got[i].BOM, want[i])
			}
		}
	})
}
