package hf

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The model cache: one folder per installed model, named by its short
// name (bge-small-en-v1.5) or, for another hub model, owner--name. Each
// holds the model's files as the hub lays them out and a manifest,
// continuity-model.json, written last by `model pull` (so a folder
// without one is not installed). Folders are 0700, files 0600.

// EnvModels overrides the model cache folder.
const EnvModels = "CONTINUITY_MODELS"

// manifestFile is the manifest's name in an installed model's folder.
const manifestFile = "continuity-model.json"

// ErrNotInstalled marks a model name that is not in the cache.
var ErrNotInstalled = errors.New("model not installed")

// CacheDir is the model cache: $CONTINUITY_MODELS, else
// $XDG_CACHE_HOME/continuity/models, else ~/.cache/continuity/models.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvModels); d != "" {
		return filepath.Abs(d)
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("model cache: %w (set %s)", err, EnvModels)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "continuity", "models"), nil
}

// modelFolder creates the model cache (0700) if need be and returns it
// with the folder of the model cname in it.
func modelFolder(cname string) (cache, dir string, err error) {
	cache, err = CacheDir()
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", "", fmt.Errorf("model cache: %w", err)
	}
	return cache, filepath.Join(cache, cname), nil
}

// Manifest records what an installed model is and how it got there.
type Manifest struct {
	// Name is the model's name, as --embed-model takes it: a known
	// model's short name, a hub id, or a name given to --from (the
	// folder's name derives from it).
	Name string `json:"name"`
	// Repo and Revision say which hub repository and commit the files
	// are (Revision empty for a folder copied with --from).
	Repo     string `json:"repo,omitempty"`
	Revision string `json:"revision,omitempty"`
	// Source is "hub" (downloaded from Endpoint) or "folder" (copied
	// from From).
	Source   string `json:"source"`
	Endpoint string `json:"endpoint,omitempty"`
	From     string `json:"from,omitempty"`
	// Files are the model's files with their sizes and sha256, checked
	// when the model is loaded.
	Files     []ManifestFile `json:"files"`
	Installed time.Time      `json:"installed"`
}

// ManifestFile is one file of an installed model.
type ManifestFile struct {
	Path   string `json:"path"` // slash-separated, relative to the folder
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Size is the total size of the model's files.
func (m *Manifest) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

func readManifest(dir string) (*Manifest, error) {
	var m Manifest
	if err := readJSON(filepath.Join(dir, manifestFile), &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// writeManifest writes dir's manifest, 0600.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestFile), append(b, '\n'), 0o600)
}

// cacheName is the cache folder's name for a model name: a known model's
// short name, owner--name for another hub id, else the name itself.
func cacheName(name string) (string, error) {
	if k, ok := LookupKnown(name); ok {
		return k.Name, nil
	}
	if strings.Contains(name, "/") {
		if err := validRepo(name); err != nil {
			return "", err
		}
		return strings.ReplaceAll(name, "/", "--"), nil
	}
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") || strings.ContainsAny(name, `\:`) || len(name) > 128 {
		return "", fmt.Errorf("%q is not a model name", name)
	}
	return name, nil
}

// Located is a model folder found for a --embed-model value.
type Located struct {
	// Name is how the model was named: the known short name, the hub
	// id, the cache name, or the folder's base name.
	Name string
	// Dir is the model's folder.
	Dir string
	// Known is set for a known model (by name, or by the repository its
	// manifest names).
	Known *Known
	// Manifest is set for an installed model.
	Manifest *Manifest
}

// Locate finds the folder of model, a model name (known short name, hub
// id, or a name given to `model pull --from`) in the cache, or a folder.
// "" is DefaultModel. A name that is not installed is an error wrapping
// ErrNotInstalled that says how to install it; nothing is downloaded.
func Locate(model string) (*Located, error) {
	if model == "" {
		model = DefaultModel
	}
	path := expandHome(model)
	explicit := strings.HasPrefix(model, "/") || strings.HasPrefix(model, ".") || strings.HasPrefix(model, "~") ||
		strings.ContainsRune(model, os.PathSeparator) && validRepo(model) != nil
	isDir := false
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		isDir = true
	}
	switch {
	case isDir && (explicit || strings.Contains(model, "/")):
		return locateDir(path)
	case explicit:
		return nil, fmt.Errorf("model folder %s: %w", model, fs.ErrNotExist)
	}
	cname, err := cacheName(model)
	if err != nil {
		return nil, err
	}
	cache, err := CacheDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cache, cname)
	man, err := readManifest(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("model %s: %w", model, err)
		}
		if isDir {
			return locateDir(path) // a folder of the current directory
		}
		return nil, fmt.Errorf("%w: %s is not in %s; %s", ErrNotInstalled, model, cache, installHint(model))
	}
	loc := &Located{Name: model, Dir: dir, Manifest: man}
	if k, ok := LookupKnown(model); ok {
		loc.Known, loc.Name = k, k.Name
	} else if k, ok := LookupKnown(man.Repo); ok {
		loc.Known = k
	}
	return loc, nil
}

// installHint says how to install model.
func installHint(model string) string {
	from := fmt.Sprintf("`continuity model pull %s --from DIR` installs a copy of a model folder you have", model)
	if k, ok := LookupKnown(model); ok {
		return fmt.Sprintf("run `continuity model pull %s` (downloads it from the Hugging Face hub, about %d MB); %s", model, k.DownloadMB, from)
	}
	if validRepo(model) == nil {
		return fmt.Sprintf("run `continuity model pull %s --revision COMMIT` (downloads that commit from the Hugging Face hub); %s", model, from)
	}
	return from
}

// locateDir is Locate for a folder: its manifest, when it has one (a
// folder of the cache), says which model it is.
func locateDir(dir string) (*Located, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	loc := &Located{Name: filepath.Base(abs), Dir: abs}
	if man, err := readManifest(abs); err == nil {
		loc.Manifest = man
		if k, ok := LookupKnown(man.Repo); ok {
			loc.Known = k
		}
	}
	return loc, nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// modelFiles are the files of dir the embedder reads (slash-separated,
// relative to dir): those that identify its vectors.
func (m *Model) modelFiles() []string {
	rel := func(p string) string {
		r, err := filepath.Rel(m.dir, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	t := m.pipe.transformerDir
	files := []string{rel(filepath.Join(t, fileConfig)), rel(filepath.Join(t, fileTokenizer)), rel(m.weightsPath())}
	for _, f := range []string{fileModules, fileSBert, fileSTConfig, m.pipe.poolingFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(m.dir, filepath.FromSlash(f))); err == nil {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}

// fileSHA256 is the hex sha256 of a file and its size.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// contentID identifies a model by the hashes of its files: the first 12
// hex digits of the sha256 of "path\x00sha256\n" for each, sorted.
func contentID(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\n", p, files[p])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// fileHashes are the sha256 of the model files of m: from man, the
// manifest of an installed model, when it lists them all (they are
// checked against it when the weights are read), else hashed now.
func (m *Model) fileHashes(man *Manifest) (map[string]string, error) {
	recorded := map[string]string{}
	if man != nil {
		for _, f := range man.Files {
			recorded[f.Path] = f.SHA256
		}
	}
	out := map[string]string{}
	for _, f := range m.modelFiles() {
		if sum, ok := recorded[f]; ok {
			out[f] = sum
			continue
		}
		sum, _, err := fileSHA256(filepath.Join(m.dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		out[f] = sum
	}
	return out, nil
}

// verifyManifest checks the files of dir against its manifest.
func verifyManifest(dir string, man *Manifest) error {
	for _, f := range man.Files {
		sum, size, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return fmt.Errorf("model %s: %w (pull it again)", man.Name, err)
		}
		if size != f.Size || sum != f.SHA256 {
			return fmt.Errorf("model %s: %s changed since it was installed (sha256 %s, %d bytes; installed %s, %d bytes): pull it again", man.Name, filepath.Join(dir, f.Path), sum, size, f.SHA256, f.Size)
		}
	}
	return nil
}

// Installed is a model of the cache, as `model list` shows it.
type Installed struct {
	Name     string
	Dir      string
	Manifest *Manifest // nil when unreadable
	// Err says why the model does not load (nil when it does).
	Err error
	// Model describes the architecture when it loads.
	Model string
}

// List returns the models installed in the cache, by name. Each is
// opened (configuration, tokenizer and weight shapes checked, weights not
// read) to say whether it loads.
func List() ([]Installed, error) {
	cache, err := CacheDir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(cache)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(cache, e.Name())
		in := Installed{Name: e.Name(), Dir: dir}
		man, err := readManifest(dir)
		if err != nil {
			in.Err = fmt.Errorf("no readable %s (an unfinished install?): %w", manifestFile, err)
			out = append(out, in)
			continue
		}
		in.Manifest = man
		if man.Name != "" {
			in.Name = man.Name
		}
		var def *Known
		if k, ok := LookupKnown(man.Repo); ok {
			def = k
		}
		m, err := Open(dir, def)
		if err != nil {
			in.Err = err
		} else {
			in.Model = m.Describe()
		}
		out = append(out, in)
	}
	return out, nil
}

// Remove deletes the installed model name from the cache and returns its
// folder.
func Remove(name string) (string, error) {
	cname, err := cacheName(name)
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, cname)
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("%w: %s is not in %s", ErrNotInstalled, name, cache)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	os.RemoveAll(filepath.Join(cache, ".pull-"+cname)) // an unfinished pull's files
	return dir, nil
}
