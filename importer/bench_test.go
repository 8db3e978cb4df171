package importer

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkImport imports each agent's shared transcripts into a fresh
// logs folder (parse, render, write); MB/s counts native bytes.
// BenchmarkDecodeBaseline is the floor it compares with, in the same run:
// reading the same JSONL files and decoding every line into a generic
// value, nothing else.
func BenchmarkImport(b *testing.B) {
	dir := sharedDir(b)
	for _, agent := range []string{ClaudeCode, Codex, Gemini, Aider} {
		b.Run(agent, func(b *testing.B) {
			paths := []string{filepath.Join(dir, agent)}
			if agent == Aider {
				paths = []string{filepath.Join(dir, "aider/aider/chat-history.md"), filepath.Join(dir, "aider/zen-mcp-server/.aider.chat.history.md")}
			}
			im0, _ := New(agent, b.TempDir(), Options{})
			files, _ := im0.Files(paths)
			var size int64
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil {
					size += fi.Size()
				}
			}
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				logs := b.TempDir()
				b.StartTimer()
				im, _ := New(agent, logs, Options{})
				if _, err := im.Import(context.Background(), paths); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeBaseline(b *testing.B) {
	dir := sharedDir(b)
	for _, agent := range []string{ClaudeCode, Codex} {
		b.Run(agent, func(b *testing.B) {
			im0, _ := New(agent, b.TempDir(), Options{})
			files, _ := im0.Files([]string{filepath.Join(dir, agent)})
			var size int64
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil {
					size += fi.Size()
				}
			}
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, f := range files {
					fh, err := os.Open(f)
					if err != nil {
						b.Fatal(err)
					}
					r := bufio.NewReaderSize(fh, 1<<16)
					for {
						line, _, err := readLine(r, maxNativeLine)
						if err != nil {
							break
						}
						var v any
						_ = json.Unmarshal(line, &v)
					}
					fh.Close()
				}
			}
		})
	}
}
