package hf

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub serves model folders in the Hugging Face hub's layout: the
// revision API (/api/models/{repo}/revision/{rev}, with blobs: sizes, git
// blob ids, LFS sha256) and the files (/{repo}/resolve/{rev}/{path}; LFS
// files redirect to /cdn/{sha256}, which serves byte ranges, as the hub's
// CDN does). Faults can be injected per file.
type fakeHub struct {
	t     *testing.T
	repos map[string]*fakeRepo

	mu       sync.Mutex
	requests []hubRequest
	corrupt  map[string]bool  // serve these files with a byte changed
	gone     map[string]bool  // answer 404 for these files
	cutAfter map[string]int64 // cut the connection after that many bytes, once
	noRange  bool             // ignore Range headers (answer 200)
}

type hubRequest struct {
	path, rangeHeader string
}

type fakeRepo struct {
	commit string
	files  map[string][]byte
}

// lfsFile says which files the fake hub stores with LFS (as the hub
// does for weights).
func lfsFile(path string) bool { return strings.HasSuffix(path, ".safetensors") }

// newFakeHub serves the golden model folders as "test/<name>" at a
// commit, plus any extra repositories.
func newFakeHub(t *testing.T) (*fakeHub, *httptest.Server) {
	t.Helper()
	h := &fakeHub{t: t, repos: map[string]*fakeRepo{}, corrupt: map[string]bool{}, gone: map[string]bool{}, cutAfter: map[string]int64{}}
	for i, name := range goldenModels {
		h.addFolder("test/"+name, fmt.Sprintf("%040x", 0xabc0+i), goldenDir(t, name))
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// addFolder serves the files of dir (not golden.jsonl) as repo at commit.
func (h *fakeHub) addFolder(repo, commit, dir string) *fakeRepo {
	h.t.Helper()
	r := &fakeRepo{commit: commit, files: map[string][]byte{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "golden.jsonl" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		r.files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.repos[repo] = r
	return r
}

func (h *fakeHub) log(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests = append(h.requests, hubRequest{r.URL.Path, r.Header.Get("Range")})
}

// fileRequests returns the requests for a file (resolve and CDN).
func (h *fakeHub) fileRequests(suffix string) []hubRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hubRequest
	for _, r := range h.requests {
		if strings.HasSuffix(r.path, suffix) || (suffix == fileWeights && strings.HasPrefix(r.path, "/cdn/")) {
			out = append(out, r)
		}
	}
	return out
}

func (h *fakeHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.requests)
}

func gitBlobSHA1(b []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(b))
	s.Write(b)
	return hex.EncodeToString(s.Sum(nil))
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.log(r)
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/models/"):
		rest := strings.TrimPrefix(p, "/api/models/")
		repo, rev, ok := strings.Cut(rest, "/revision/")
		repoData := h.repos[repo]
		if !ok || repoData == nil || (rev != repoData.commit && rev != "main") || r.URL.Query().Get("blobs") != "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Revision Not Found"}`)
			return
		}
		type lfs struct {
			SHA256      string `json:"sha256"`
			Size        int    `json:"size"`
			PointerSize int    `json:"pointerSize"`
		}
		type sibling struct {
			RFilename string `json:"rfilename"`
			Size      int    `json:"size"`
			BlobID    string `json:"blobId"`
			LFS       *lfs   `json:"lfs,omitempty"`
		}
		var sib []sibling
		for path, b := range repoData.files {
			s := sibling{RFilename: path, Size: len(b), BlobID: gitBlobSHA1(b)}
			if lfsFile(path) {
				pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha256Hex(b), len(b))
				s.BlobID = gitBlobSHA1([]byte(pointer))
				s.LFS = &lfs{SHA256: sha256Hex(b), Size: len(b), PointerSize: len(pointer)}
			}
			sib = append(sib, s)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": repo, "modelId": repo, "sha": repoData.commit, "siblings": sib})
	case strings.Contains(p, "/resolve/"):
		rest := strings.TrimPrefix(p, "/")
		repo, tail, _ := strings.Cut(rest, "/resolve/")
		rev, path, _ := strings.Cut(tail, "/")
		repoData := h.repos[repo]
		if repoData == nil || rev != repoData.commit || repoData.files[path] == nil || h.gone[path] {
			http.Error(w, "Entry not found", http.StatusNotFound)
			return
		}
		if lfsFile(path) {
			http.Redirect(w, r, "/cdn/"+sha256Hex(repoData.files[path])+"?file="+path, http.StatusFound)
			return
		}
		h.serve(w, r, path, repoData.files[path])
	case strings.HasPrefix(p, "/cdn/"):
		sum := strings.TrimPrefix(p, "/cdn/")
		for _, repoData := range h.repos {
			for path, b := range repoData.files {
				if sha256Hex(b) == sum && path == r.URL.Query().Get("file") {
					h.serve(w, r, path, b)
					return
				}
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serve answers a file, with Range support, faults applied.
func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request, path string, b []byte) {
	h.mu.Lock()
	corrupt, cut, noRange := h.corrupt[path], h.cutAfter[path], h.noRange
	delete(h.cutAfter, path) // once
	h.mu.Unlock()
	if corrupt {
		b = bytes.Clone(b)
		b[len(b)/2] ^= 0x55
	}
	if noRange {
		r.Header.Del("Range")
	}
	if cut > 0 && r.Header.Get("Range") == "" {
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection is cut mid-file
	}
	http.ServeContent(w, r, path, time.Time{}, bytes.NewReader(b))
}

// pullOpts are PullOptions for the fake hub: quick retries, no progress
// unless asked.
func pullOpts(srv *httptest.Server, model, rev string) PullOptions {
	return PullOptions{Model: model, Revision: rev, Endpoint: srv.URL, Backoff: time.Millisecond, Retries: 3}
}

func useCache(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models")
	t.Setenv(EnvModels, dir)
	t.Setenv(EnvEndpoint, "")
	t.Setenv(EnvToken, "")
	return dir
}

// TestPull: a pull from the hub's layout installs the model's files
// (byte for byte, 0600 in 0700 folders) with a manifest; the model opens
// and embeds like the folder it came from, under the repository's
// identity; a second pull downloads nothing.
func TestPull(t *testing.T) {
	cache := useCache(t)
	h, srv := newFakeHub(t)
	var progress bytes.Buffer
	opts := pullOpts(srv, "test/tiny-bert-mean", h.repos["test/tiny-bert-mean"].commit)
	opts.Progress = &progress
	res, err := Pull(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "test--tiny-bert-mean")
	if res.Dir != want || res.Already {
		t.Fatalf("installed in %s (already %v), want %s", res.Dir, res.Already, want)
	}
	src := goldenDir(t, "tiny-bert-mean")
	for _, f := range []string{fileConfig, fileWeights, fileTokenizer, fileModules, filePooling, fileSBert, "vocab.txt", "tokenizer_config.json"} {
		got, err := os.ReadFile(filepath.Join(want, f))
		if err != nil {
			t.Fatal(err)
		}
		exp, _ := os.ReadFile(filepath.Join(src, f))
		if !bytes.Equal(got, exp) {
			t.Errorf("%s differs from the served file", f)
		}
		st, _ := os.Stat(filepath.Join(want, f))
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	for _, d := range []string{cache, want, filepath.Join(want, "1_Pooling")} {
		if st, _ := os.Stat(d); st.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, st.Mode().Perm())
		}
	}
	if _, err := os.Stat(filepath.Join(cache, ".pull-test--tiny-bert-mean")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staging folder is left: %v", err)
	}
	if !strings.Contains(progress.String(), "sha256 verified") || !strings.Contains(progress.String(), "git blob sha1 verified") {
		t.Errorf("progress does not say the files were verified:\n%s", progress.String())
	}
	e, err := New("test/tiny-bert-mean", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if id := e.Identity(); id != "hf:test/tiny-bert-mean@"+h.repos["test/tiny-bert-mean"].commit[:12]+":64" {
		t.Errorf("identity %q", id)
	}
	folder, err := New(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"hello world", "café résumé"}
	a, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := folder.Embed(context.Background(), texts)
	for i := range a {
		if d := maxAbsDiff(a[i], b[i]); d != 0 {
			t.Errorf("pulled model's vector differs from the folder's by %g", d)
		}
	}
	n := h.count()
	res, err = Pull(context.Background(), pullOpts(srv, "test/tiny-bert-mean", h.repos["test/tiny-bert-mean"].commit))
	if err != nil || !res.Already {
		t.Fatalf("second pull: %v, already %v", err, res != nil && res.Already)
	}
	if got := h.count() - n; got != 0 {
		t.Errorf("a second pull of the installed commit made %d requests, want none", got)
	}
	res, err = Pull(context.Background(), pullOpts(srv, "test/tiny-bert-mean", "main"))
	if err != nil || !res.Already {
		t.Fatalf("pull of the branch at the installed commit: %v, already %v", err, res != nil && res.Already)
	}
	if got := h.count() - n; got != 1 {
		t.Errorf("a pull of a branch made %d requests, want 1 (the revision's file list)", got)
	}
	list, err := List()
	if err != nil || len(list) != 1 || list[0].Err != nil || list[0].Manifest.Revision != h.repos["test/tiny-bert-mean"].commit {
		t.Errorf("List: %+v, %v", list, err)
	}
}

// TestPullCorrupt: a file whose bytes do not match the hash the hub
// reports is deleted and the pull refused; nothing is installed.
func TestPullCorrupt(t *testing.T) {
	for _, file := range []string{fileWeights, fileTokenizer} { // an LFS file (sha256), a git one (blob sha1)
		t.Run(file, func(t *testing.T) {
			cache := useCache(t)
			h, srv := newFakeHub(t)
			h.corrupt[file] = true
			_, err := Pull(context.Background(), pullOpts(srv, "test/tiny-bert-cls", h.repos["test/tiny-bert-cls"].commit))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "nothing was installed") {
				t.Fatalf("err = %v, want a corrupt %s", err, file)
			}
			if _, err := os.Stat(filepath.Join(cache, "test--tiny-bert-cls")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the model was installed: %v", err)
			}
			if _, err := os.Stat(filepath.Join(cache, ".pull-test--tiny-bert-cls", filepath.FromSlash(file)+".part")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the corrupt download was kept: %v", err)
			}
			if _, err := New("test/tiny-bert-cls", Options{}); !errors.Is(err, ErrNotInstalled) {
				t.Errorf("New after a refused pull: %v", err)
			}
		})
	}
}

// TestPull404: a revision the hub does not have, and a file it lists but
// does not serve, are errors that name the revision (and the file).
func TestPull404(t *testing.T) {
	cache := useCache(t)
	h, srv := newFakeHub(t)
	_, err := Pull(context.Background(), pullOpts(srv, "test/tiny-bert-mean", "0123456789abcdef0123456789abcdef01234567"))
	if err == nil || !strings.Contains(err.Error(), "no revision 0123456789abcdef0123456789abcdef01234567") || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown revision: %v", err)
	}
	_, err = Pull(context.Background(), pullOpts(srv, "test/no-such-model", "main"))
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown repository: %v", err)
	}
	h.gone[fileTokenizer] = true
	commit := h.repos["test/tiny-bert-mean"].commit
	_, err = Pull(context.Background(), pullOpts(srv, "test/tiny-bert-mean", commit))
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json: not found at revision "+commit) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "test--tiny-bert-mean")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the model was installed: %v", err)
	}
}

// TestPullResume: a connection cut in the middle of the weights is
// retried from where it stopped (a Range request from the .part's end),
// within the pull and, when the pull gave up, by the next pull.
func TestPullResume(t *testing.T) {
	for _, within := range []bool{true, false} {
		t.Run(fmt.Sprintf("within=%v", within), func(t *testing.T) {
			cache := useCache(t)
			h, srv := newFakeHub(t)
			const cut = 300_000
			h.cutAfter[fileWeights] = cut
			commit := h.repos["test/tiny-bert-cls"].commit
			opts := pullOpts(srv, "test/tiny-bert-cls", commit)
			var progress bytes.Buffer
			opts.Progress = &progress
			if !within {
				// No retry: the pull fails and leaves the .part.
				opts.Retries = -1
				_, err := Pull(context.Background(), opts)
				if err == nil || !strings.Contains(err.Error(), "run the pull again to resume") {
					t.Fatalf("a cut pull without retries: %v", err)
				}
				part := filepath.Join(cache, ".pull-test--tiny-bert-cls", fileWeights+".part")
				if n := fileSize(part); n != cut {
					t.Fatalf(".part holds %d bytes, want %d", n, cut)
				}
				opts.Retries = 3
			}
			res, err := Pull(context.Background(), opts)
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			var ranged bool
			for _, r := range h.fileRequests(fileWeights) {
				if r.rangeHeader == fmt.Sprintf("bytes=%d-", cut) {
					ranged = true
				}
			}
			if !ranged {
				t.Errorf("no request resumed from byte %d: %+v", cut, h.fileRequests(fileWeights))
			}
			got, _ := os.ReadFile(filepath.Join(res.Dir, fileWeights))
			if !bytes.Equal(got, h.repos["test/tiny-bert-cls"].files[fileWeights]) {
				t.Error("the resumed file differs from the served one")
			}
			t.Logf("progress:\n%s", progress.String())
			if !strings.Contains(progress.String(), "resuming at") && !strings.Contains(progress.String(), "trying again") {
				t.Errorf("progress does not mention the resumption:\n%s", progress.String())
			}
		})
	}
}

// TestPullServerWithoutRange: a server that ignores Range (200 and the
// whole file) makes the resumed download start over, and it completes.
func TestPullServerWithoutRange(t *testing.T) {
	useCache(t)
	h, srv := newFakeHub(t)
	h.noRange = true
	h.cutAfter[fileWeights] = 100_000
	res, err := Pull(context.Background(), pullOpts(srv, "test/tiny-bert-mean", h.repos["test/tiny-bert-mean"].commit))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(res.Dir, fileWeights))
	if !bytes.Equal(got, h.repos["test/tiny-bert-mean"].files[fileWeights]) {
		t.Error("the file differs from the served one")
	}
}

// TestPullRefusals: what is refused before anything is downloaded.
func TestPullRefusals(t *testing.T) {
	useCache(t)
	h, srv := newFakeHub(t)
	ctx := context.Background()
	// A hub id continuity does not know needs a revision.
	if _, err := Pull(ctx, pullOpts(srv, "test/tiny-bert-mean", "")); err == nil || !strings.Contains(err.Error(), "--revision") {
		t.Errorf("no revision: %v", err)
	}
	if _, err := Pull(ctx, pullOpts(srv, "not a model", "")); err == nil || !strings.Contains(err.Error(), "neither a model continuity knows") {
		t.Errorf("bad name: %v", err)
	}
	// A known model whose weights the hub reports with another sha256
	// than continuity pins: refused before the download.
	bge, _ := LookupKnown("bge-small-en-v1.5")
	h.addFolder(bge.Repo, bge.Revision, goldenDir(t, "tiny-bert-cls"))
	if _, err := Pull(ctx, pullOpts(srv, "bge-small-en-v1.5", "")); err == nil || !strings.Contains(err.Error(), "continuity pins "+bge.SHA256[fileWeights]) {
		t.Errorf("pinned hash: %v", err)
	}
	if r := h.fileRequests(fileWeights); len(r) != 0 {
		t.Errorf("the weights were downloaded: %+v", r)
	}
	// Another architecture: refused after its config, before its weights.
	other := h.addFolder("test/roberta", fmt.Sprintf("%040x", 0xdef), goldenDir(t, "tiny-bert-mean"))
	other.files[fileConfig] = bytes.Replace(other.files[fileConfig], []byte(`"model_type": "bert"`), []byte(`"model_type": "roberta"`), 1)
	if _, err := Pull(ctx, pullOpts(srv, "test/roberta", other.commit)); err == nil || !strings.Contains(err.Error(), `model_type "roberta"`) {
		t.Errorf("another architecture: %v", err)
	}
	if r := h.fileRequests(fileWeights); len(r) != 0 {
		t.Errorf("the weights were downloaded: %+v", r)
	}
	// A revision without safetensors weights.
	noST := h.addFolder("test/bin-only", fmt.Sprintf("%040x", 0xbeef), goldenDir(t, "tiny-bert-mean"))
	noST.files["pytorch_model.bin"] = noST.files[fileWeights]
	delete(noST.files, fileWeights)
	if _, err := Pull(ctx, pullOpts(srv, "test/bin-only", noST.commit)); err == nil || !strings.Contains(err.Error(), "no model.safetensors") {
		t.Errorf("no safetensors: %v", err)
	}
}

// TestNoImplicitDownload: opening a model that is not installed never
// contacts the hub; the error says how to pull it.
func TestNoImplicitDownload(t *testing.T) {
	useCache(t)
	h, srv := newFakeHub(t)
	t.Setenv(EnvEndpoint, srv.URL)
	for _, name := range []string{"", "bge-small-en-v1.5", "BAAI/bge-small-en-v1.5", "test/tiny-bert-mean"} {
		_, err := New(name, Options{})
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "continuity model pull") {
			t.Errorf("New(%q): %v", name, err)
		}
	}
	if n := h.count(); n != 0 {
		t.Errorf("%d requests to the hub", n)
	}
}

// TestInstallFolder: --from copies a folder into the cache (identity by
// the files' hashes, the same as the folder's); a file changed after the
// install is caught when the model loads.
func TestInstallFolder(t *testing.T) {
	useCache(t)
	src := goldenDir(t, "tiny-bert-cls")
	res, err := InstallFolder(context.Background(), "my-tiny", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New("my-tiny", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Identity(), "hf:my-tiny@sha256-") {
		t.Errorf("identity %q", e.Identity())
	}
	folder, _ := New(src, Options{})
	if strings.TrimPrefix(e.Identity(), "hf:my-tiny") != strings.TrimPrefix(folder.Identity(), "hf:tiny-bert-cls") {
		t.Errorf("identities %q and %q name different files", e.Identity(), folder.Identity())
	}
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(res.Dir, fileTokenizer)
	b, _ := os.ReadFile(tok)
	os.WriteFile(tok, bytes.Replace(b, []byte(`"hel"`), []byte(`"heL"`), 1), 0o600)
	e2, err := New("my-tiny", Options{})
	if err == nil {
		_, err = e2.Embed(context.Background(), []string{"hello"})
	}
	if err == nil || !strings.Contains(err.Error(), "changed since it was installed") {
		t.Errorf("a changed file: %v", err)
	}
	if _, err := InstallFolder(context.Background(), "broken", t.TempDir(), nil); err == nil {
		t.Error("an empty folder was installed")
	}
	if dir, err := Remove("my-tiny"); err != nil || dir != res.Dir {
		t.Errorf("Remove: %s %v", dir, err)
	}
	if _, err := New("my-tiny", Options{}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("after Remove: %v", err)
	}
}

// TestFolderName: `model pull --from DIR` without a NAME takes the
// folder's name (a Hugging Face cache snapshot: the model's); a folder
// that gives no model name is refused, asking for one.
func TestFolderName(t *testing.T) {
	for in, want := range map[string]string{
		"/data/models/bge-small-en-v1.5": "bge-small-en-v1.5",
		"/data/models/my-model/":         "my-model",
		"/root/.cache/huggingface/hub/models--BAAI--bge-small-en-v1.5/snapshots/5c38ec7c405ec4b44b94cc5a9bb96e735b38267a": "bge-small-en-v1.5",
		"/x/snapshots/abc": "abc",
	} {
		if got, err := FolderName(in); err != nil || got != want {
			t.Errorf("FolderName(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/", "/data/.hidden"} {
		if got, err := FolderName(in); err == nil || !strings.Contains(err.Error(), "give a NAME") {
			t.Errorf("FolderName(%s) = %q, %v; want an error", in, got, err)
		}
	}
}
