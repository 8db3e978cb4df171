package hf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// folderExtras are the small files copied with a model folder besides
// those the embedder reads, when it has them.
var folderExtras = []string{"tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "README.md", "LICENSE"}

// FolderName is the name `model pull --from DIR` gives a model when none
// is given: the folder's name, or, for a snapshot of the Hugging Face
// cache (models--OWNER--NAME/snapshots/COMMIT), the model's (NAME). It
// is an error when that name is no model name (cacheName), e.g. "/".
func FolderName(from string) (string, error) {
	abs, err := filepath.Abs(from)
	if err != nil {
		return "", err
	}
	name := filepath.Base(abs)
	if parent := filepath.Dir(abs); filepath.Base(parent) == "snapshots" {
		if repo := filepath.Base(filepath.Dir(parent)); strings.HasPrefix(repo, "models--") {
			parts := strings.Split(repo, "--")
			name = parts[len(parts)-1]
		}
	}
	if _, err := cacheName(name); err != nil || filepath.Dir(abs) == abs {
		return "", fmt.Errorf("cannot name a model after %s: give a NAME ('model pull NAME --from %s')", abs, from)
	}
	return name, nil
}

// InstallFolder copies the model folder from into the cache under name (a
// known model's name, a hub id, or a name of your choosing), for machines
// that cannot reach the hub: the folder must open and its weights load.
// The copy's files are recorded with their sha256, checked at each load.
// Its identity is the hashes of its files (a pulled model's is its
// repository and commit).
func InstallFolder(ctx context.Context, name, from string, progress io.Writer) (*PullResult, error) {
	cname, err := cacheName(name)
	if err != nil {
		return nil, err
	}
	var known *Known
	if k, ok := LookupKnown(name); ok {
		known = k
	}
	abs, err := filepath.Abs(from)
	if err != nil {
		return nil, err
	}
	m, err := Open(abs, known)
	if err != nil {
		return nil, err
	}
	if err := m.Load(); err != nil {
		return nil, err
	}
	cache, target, err := modelFolder(cname)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(target, abs); err == nil && filepath.IsLocal(rel) || abs == target {
		return nil, fmt.Errorf("%s is the cache's own folder for %s", abs, name)
	}
	stage := filepath.Join(cache, ".copy-"+cname)
	if err := os.RemoveAll(stage); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	man := &Manifest{Name: name, Source: "folder", From: abs}
	if known != nil {
		man.Name, man.Repo = known.Name, known.Repo
	}
	prog := newProgress(progress, false)
	files := m.modelFiles()
	for _, extra := range folderExtras {
		if _, err := os.Stat(filepath.Join(abs, extra)); err == nil {
			files = append(files, extra)
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sum, size, err := copyFile(filepath.Join(abs, filepath.FromSlash(f)), filepath.Join(stage, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		prog.printf("%s: %s copied", f, mb(size))
		man.Files = append(man.Files, ManifestFile{Path: f, Size: size, SHA256: sum})
	}
	man.Installed = time.Now().UTC().Truncate(time.Second)
	if err := writeManifest(stage, man); err != nil {
		return nil, err
	}
	if err := install(stage, target); err != nil {
		return nil, err
	}
	return &PullResult{Dir: target, Manifest: man}, nil
}

// copyFile copies src to dst (0600, its folders 0700) and returns the
// sha256 and size of what was copied, hashed from the copy.
func copyFile(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", 0, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", 0, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", 0, fmt.Errorf("copying %s: %w", src, err)
	}
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		return "", 0, err
	}
	sum, size, err := fileSHA256(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("copying %s: the copy vanished", src)
	}
	return sum, size, err
}
