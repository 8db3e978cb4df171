package hf

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Downloading from the Hugging Face hub (or a mirror speaking its
// protocol): the file list and hashes of a revision come from
// {endpoint}/api/models/{repo}/revision/{revision}?blobs=true ("sha" is
// the commit; each of "siblings" has "rfilename", "size", "blobId" (the
// git blob sha1) and, for a file stored with LFS, "lfs": {"sha256",
// "size"}); each file from {endpoint}/{repo}/resolve/{commit}/{path}
// (LFS files redirect to a CDN, which serves byte ranges). Only the files
// the embedder reads (and the small ones that make the folder a usable
// model for other tools) are downloaded, into a staging folder of the
// cache, each to a .part file that a later attempt resumes with a Range
// request, checked against its size and hash before it takes its name;
// the folder takes the model's name once every file is checked and the
// model opens.

// EnvEndpoint overrides the hub's address (a mirror, or a test server).
const EnvEndpoint = "HF_ENDPOINT"

// EnvToken is a Hugging Face access token, sent to the endpoint (not to
// the CDN it redirects to) for gated or private repositories.
const EnvToken = "HF_TOKEN"

// DefaultEndpoint is the Hugging Face hub.
const DefaultEndpoint = "https://huggingface.co"

// hubFiles are the files `model pull` downloads when the revision has
// them: those the embedder reads, then small ones other tools expect
// beside them (the model card carries the license).
var hubFiles = []struct {
	path     string
	required bool
}{
	{fileConfig, true},
	{fileTokenizer, true},
	{fileModules, false},
	{filePooling, false},
	{fileSBert, false},
	{fileSTConfig, false},
	{"tokenizer_config.json", false},
	{"special_tokens_map.json", false},
	{"vocab.txt", false},
	{"README.md", false},
	{"LICENSE", false},
	{fileWeights, true}, // last: the folder is checked before the big download
}

// PullOptions configures Pull.
type PullOptions struct {
	// Model is a known model's name or hub id, or another hub id.
	Model string
	// Revision is the commit (or tag, or branch) to download: the pinned
	// one of a known model by default, required for another.
	Revision string
	// Endpoint is the hub's address: $HF_ENDPOINT, else DefaultEndpoint.
	Endpoint string
	// Token is sent as a bearer token to the endpoint: $HF_TOKEN.
	Token string
	// Client does the requests (default: one with connection and
	// header timeouts; a transfer that stalls for IdleTimeout is cut).
	Client *http.Client
	// Progress, when not nil, gets the progress: a bar redrawn in place
	// when Terminal, plain lines otherwise.
	Progress io.Writer
	Terminal bool
	// Retries is how many times a cut or failed transfer is tried again,
	// resuming where it stopped (0: the default, 5; negative: none);
	// Backoff the first wait (default 1s), doubled each time.
	Retries int
	Backoff time.Duration
	// IdleTimeout cuts a transfer that receives nothing for that long
	// (default 60s); it is then retried.
	IdleTimeout time.Duration
	// Force downloads again a model already installed at that revision.
	Force bool
}

// hubFile is a file of a revision as the hub describes it.
type hubFile struct {
	path    string
	size    int64
	sha256  string // LFS files
	blobID  string // git blob sha1, non-LFS files
	pinned  string // sha256 continuity pins for it, "" none
	isLarge bool
}

// PullResult says what Pull did.
type PullResult struct {
	Dir      string
	Manifest *Manifest
	// Already is set when the model was installed at that revision and
	// nothing was downloaded.
	Already bool
}

// httpStatusError is an HTTP error answer.
type httpStatusError struct {
	url    string
	status int
	text   string
}

func (e *httpStatusError) Error() string { return fmt.Sprintf("HTTP %s from %s", e.text, e.url) }

// retryable marks an error worth another attempt (a cut connection, a
// server error, a stall).
type retryable struct{ err error }

func (e retryable) Error() string { return e.err.Error() }
func (e retryable) Unwrap() error { return e.err }

// ErrCorrupt marks a downloaded file whose size or hash is not what the
// hub reports.
var ErrCorrupt = errors.New("download corrupt")

// Pull downloads a model from the hub into the cache at a pinned
// revision: resumable (a .part file per file, continued with a Range
// request, by later attempts and by a later Pull), each file checked
// against the size and hash the hub reports (and the hashes continuity
// pins) before it is used; the model is installed (renamed into place)
// only when every file is there and it opens.
func Pull(ctx context.Context, opts PullOptions) (*PullResult, error) {
	known, knownOK := LookupKnown(opts.Model)
	repo, rev := opts.Model, opts.Revision
	if knownOK {
		repo = known.Repo
		if rev == "" {
			rev = known.Revision
		}
	} else {
		if err := validRepo(repo); err != nil {
			return nil, fmt.Errorf("%s is neither a model continuity knows (%s) nor a hub id (owner/name)", opts.Model, KnownNames())
		}
		if rev == "" {
			return nil, fmt.Errorf("%s is not a model continuity knows: give the revision to pin with --revision COMMIT (continuity knows %s)", repo, KnownNames())
		}
	}
	cname, err := cacheName(opts.Model)
	if err != nil {
		return nil, err
	}
	endpoint := strings.TrimRight(opts.Endpoint, "/")
	if endpoint == "" {
		endpoint = strings.TrimRight(os.Getenv(EnvEndpoint), "/")
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hub endpoint %q: want http(s)://host", endpoint)
	}
	cache, target, err := modelFolder(cname)
	if err != nil {
		return nil, err
	}
	p := &puller{opts: opts, endpoint: endpoint, repo: repo, prog: newProgress(opts.Progress, opts.Terminal)}
	p.defaults()

	installed := func(commit string) *Manifest {
		man, err := readManifest(target)
		if err != nil || opts.Force || man.Repo != repo || man.Revision != commit || verifyManifest(target, man) != nil {
			return nil
		}
		return man
	}
	if man := installed(rev); man != nil { // a commit already installed: no need to ask the hub
		return &PullResult{Dir: target, Manifest: man, Already: true}, nil
	}
	info, err := p.revisionInfo(ctx, rev)
	if err != nil {
		return nil, err
	}
	commit := info.SHA
	if commit == "" {
		commit = rev
	}
	if man := installed(commit); man != nil {
		return &PullResult{Dir: target, Manifest: man, Already: true}, nil
	}
	files, err := p.choose(info, commit, known, knownOK && rev == known.Revision)
	if err != nil {
		return nil, err
	}
	stage := filepath.Join(cache, ".pull-"+cname)
	if err := prepareStage(stage, repo, commit); err != nil {
		return nil, err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	p.prog.printf("pulling %s at %s from %s: %d files, %s", repo, commit, endpoint, len(files), mb(total))
	display := opts.Model
	if knownOK {
		display = known.Name
	}
	man := &Manifest{Name: display, Repo: repo, Revision: commit, Source: "hub", Endpoint: endpoint}
	for _, f := range files {
		if f.isLarge {
			// Before the big download: is this a model continuity reads?
			if err := checkSmallFiles(stage, known); err != nil {
				return nil, fmt.Errorf("%s at %s: %w", repo, commit, err)
			}
		}
		sum, err := p.fetch(ctx, stage, commit, f)
		if err != nil {
			return nil, err
		}
		man.Files = append(man.Files, ManifestFile{Path: f.path, Size: f.size, SHA256: sum})
	}
	m, err := Open(stage, known)
	if err != nil {
		return nil, fmt.Errorf("%s at %s was downloaded but does not open: %w", repo, commit, err)
	}
	if knownOK && m.Dimension() != known.Dimension {
		return nil, fmt.Errorf("%s at %s gives %d-dimensional vectors, %s's are %d: not the model continuity knows by that name", repo, commit, m.Dimension(), known.Name, known.Dimension)
	}
	man.Installed = time.Now().UTC().Truncate(time.Second)
	if err := writeManifest(stage, man); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(stage, stageState))
	if err := install(stage, target); err != nil {
		return nil, err
	}
	return &PullResult{Dir: target, Manifest: man}, nil
}

// puller holds a Pull's settings.
type puller struct {
	opts     PullOptions
	endpoint string
	repo     string
	client   *http.Client
	prog     *progress
}

func (p *puller) defaults() {
	switch {
	case p.opts.Retries == 0:
		p.opts.Retries = 5
	case p.opts.Retries < 0:
		p.opts.Retries = 0
	}
	if p.opts.Backoff == 0 {
		p.opts.Backoff = time.Second
	}
	if p.opts.IdleTimeout == 0 {
		p.opts.IdleTimeout = 60 * time.Second
	}
	if p.opts.Token == "" {
		p.opts.Token = os.Getenv(EnvToken)
	}
	p.client = p.opts.Client
	if p.client == nil {
		p.client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
		}}
	}
}

// request sends a GET, with the token when the URL is the endpoint's.
func (p *puller) request(ctx context.Context, u string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "continuity (model pull)")
	if p.opts.Token != "" && strings.HasPrefix(u, p.endpoint+"/") {
		req.Header.Set("Authorization", "Bearer "+p.opts.Token)
	}
	return p.client.Do(req)
}

// revisionInfo is the hub's answer about a revision.
type revisionInfo struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		Size      *int64 `json:"size"`
		BlobID    string `json:"blobId"`
		LFS       *struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

// revisionInfo asks the hub for the files of a revision, with retries.
func (p *puller) revisionInfo(ctx context.Context, rev string) (*revisionInfo, error) {
	u := fmt.Sprintf("%s/api/models/%s/revision/%s?blobs=true", p.endpoint, p.repo, url.PathEscape(rev))
	var info revisionInfo
	err := p.retry(ctx, func() error {
		resp, err := p.request(ctx, u, nil)
		if err != nil {
			return retryable{err}
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return statusError(u, resp)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return retryable{err}
		}
		if err := json.Unmarshal(b, &info); err != nil {
			return fmt.Errorf("%s: not the hub's answer: %w", u, err)
		}
		return nil
	})
	if err != nil {
		var se *httpStatusError
		if errors.As(err, &se) {
			switch se.status {
			case http.StatusNotFound:
				return nil, fmt.Errorf("%s has no revision %s on %s (HTTP 404): check the name and the revision", p.repo, rev, p.endpoint)
			case http.StatusUnauthorized, http.StatusForbidden:
				return nil, fmt.Errorf("%s at %s on %s: HTTP %d: the repository is gated or private (set %s to a token that may read it)", p.repo, rev, p.endpoint, se.status, EnvToken)
			}
		}
		return nil, fmt.Errorf("%s at %s: %w", p.repo, rev, err)
	}
	if info.SHA != "" && !isHex(info.SHA) {
		return nil, fmt.Errorf("%s at %s: the hub reports commit %q", p.repo, rev, info.SHA)
	}
	return &info, nil
}

// choose picks the files to download from the revision's list, with the
// size and hash each must have.
func (p *puller) choose(info *revisionInfo, commit string, known *Known, pinnedRev bool) ([]hubFile, error) {
	byName := map[string]int{}
	for i, s := range info.Siblings {
		byName[s.RFilename] = i
	}
	var files []hubFile
	for _, want := range hubFiles {
		i, ok := byName[want.path]
		if !ok {
			if want.required {
				hint := ""
				if want.path == fileWeights {
					hint = " (continuity reads safetensors weights only)"
				}
				return nil, fmt.Errorf("%s at %s has no %s%s", p.repo, commit, want.path, hint)
			}
			continue
		}
		s := info.Siblings[i]
		f := hubFile{path: want.path, isLarge: want.path == fileWeights}
		switch {
		case s.LFS != nil && isHex(s.LFS.SHA256) && len(s.LFS.SHA256) == 64:
			f.sha256, f.size = strings.ToLower(s.LFS.SHA256), s.LFS.Size
		case s.LFS == nil && len(s.BlobID) == 40 && isHex(s.BlobID) && s.Size != nil:
			f.blobID, f.size = strings.ToLower(s.BlobID), *s.Size
		default:
			return nil, fmt.Errorf("%s at %s: the hub reports no hash for %s, so it could not be checked: refusing it", p.repo, commit, want.path)
		}
		if f.size < 0 || f.size > 1<<40 {
			return nil, fmt.Errorf("%s at %s: the hub reports %d bytes for %s", p.repo, commit, f.size, want.path)
		}
		if pinnedRev {
			if pin := known.SHA256[want.path]; pin != "" {
				if f.sha256 != pin {
					return nil, fmt.Errorf("%s at %s: the hub reports sha256 %s for %s, continuity pins %s: refusing it (a mirror serving other files?)", p.repo, commit, f.sha256, want.path, pin)
				}
				f.pinned = pin
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// stageState names the staging folder's record of what it holds.
const stageState = ".pull-state.json"

// prepareStage creates the staging folder for repo at commit, keeping
// what an earlier, interrupted pull of the same commit left there.
func prepareStage(stage, repo, commit string) error {
	var st struct{ Repo, Commit string }
	if err := readJSON(filepath.Join(stage, stageState), &st); err == nil && st.Repo == repo && st.Commit == commit {
		return nil
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("staging folder: %w", err)
	}
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return fmt.Errorf("staging folder: %w", err)
	}
	st.Repo, st.Commit = repo, commit
	b, _ := json.Marshal(st)
	return os.WriteFile(filepath.Join(stage, stageState), b, 0o600)
}

// checkSmallFiles opens what is there of a model before its weights are
// downloaded: the architecture, the modules and the tokenizer.
func checkSmallFiles(dir string, known *Known) error {
	pipe, err := readPipeline(dir, known)
	if err != nil {
		return err
	}
	if pipe.transformerDir != dir {
		return fmt.Errorf("modules.json puts the transformer in a subfolder, which model pull does not download")
	}
	if _, err := readBertConfig(filepath.Join(dir, fileConfig)); err != nil {
		return err
	}
	_, err = ReadTokenizer(filepath.Join(dir, fileTokenizer))
	return err
}

// fetch downloads one file into stage (resuming its .part), checks it
// and gives it its name; it returns the file's sha256. A file already
// there and correct is not downloaded again.
func (p *puller) fetch(ctx context.Context, stage, commit string, f hubFile) (string, error) {
	dst := filepath.Join(stage, filepath.FromSlash(f.path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	if sum, err := checkFile(dst, f); err == nil {
		return sum, nil // from an earlier pull
	}
	part := dst + ".part"
	u := fmt.Sprintf("%s/%s/resolve/%s/%s", p.endpoint, p.repo, url.PathEscape(commit), escapePath(f.path))
	have := fileSize(part)
	if have > f.size {
		os.Remove(part)
		have = 0
	}
	p.prog.begin(f.path, f.size, have)
	err := p.retry(ctx, func() error { return p.fetchOnce(ctx, u, part, f) })
	if err != nil {
		p.prog.end("failed")
		var se *httpStatusError
		if errors.As(err, &se) && se.status == http.StatusNotFound {
			return "", fmt.Errorf("%s: not found at revision %s of %s (HTTP 404 from %s)", f.path, commit, p.repo, se.url)
		}
		return "", fmt.Errorf("%s of %s at %s: %w (run the pull again to resume)", f.path, p.repo, commit, err)
	}
	sum, err := checkFile(part, f)
	if err != nil {
		os.Remove(part)
		p.prog.end("corrupt, deleted")
		return "", fmt.Errorf("%s of %s at %s: %w: the file was deleted and nothing was installed", f.path, p.repo, commit, err)
	}
	if err := os.Rename(part, dst); err != nil {
		return "", err
	}
	what := "git blob sha1"
	if f.sha256 != "" {
		what = "sha256"
	}
	p.prog.end(what + " verified")
	return sum, nil
}

// fetchOnce makes one attempt at the rest of a file: from the end of its
// .part with a Range request, or from the start when the server ignores
// the range. What arrives is appended to the .part, so a cut connection
// loses nothing.
func (p *puller) fetchOnce(ctx context.Context, u, part string, f hubFile) error {
	have := fileSize(part)
	if have == f.size {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(p.opts.IdleTimeout, func() {
		cancel(fmt.Errorf("nothing received for %s", p.opts.IdleTimeout))
	})
	defer idle.Stop()
	h := http.Header{}
	if have > 0 {
		h.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := p.request(ctx, u, h)
	if err != nil {
		return retryable{cause(ctx, err)}
	}
	defer resp.Body.Close()
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != have {
			os.Remove(part)
			p.prog.restart(0, "the server answered another range")
			return retryable{fmt.Errorf("Content-Range %q for a request from byte %d", resp.Header.Get("Content-Range"), have)}
		}
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			p.prog.restart(0, "the server does not resume")
		}
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		os.Remove(part)
		p.prog.restart(0, "the server refused the range")
		return retryable{statusError(u, resp)}
	default:
		return statusError(u, resp)
	}
	out, err := os.OpenFile(part, flag, 0o600)
	if err != nil {
		return err
	}
	if flag&os.O_TRUNC != 0 {
		have = 0
	}
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		have += int64(n)
		if n > 0 {
			idle.Reset(p.opts.IdleTimeout)
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
			p.prog.add(int64(n))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return retryable{fmt.Errorf("transfer cut at %s of %s: %w", mb(have), mb(f.size), cause(ctx, rerr))}
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if got := fileSize(part); got < f.size {
		return retryable{fmt.Errorf("connection closed at byte %d of %d", got, f.size)}
	}
	return nil
}

// cause is ctx's cancellation cause when it has one (a stall), else err.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c
	}
	return err
}

// retry runs try until it succeeds, fails for good (an error that is not
// retryable), or has failed Retries+1 times, waiting Backoff, then twice
// that, and so on, between attempts.
func (p *puller) retry(ctx context.Context, try func() error) error {
	wait := p.opts.Backoff
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var r retryable
		if !errors.As(err, &r) || attempt >= p.opts.Retries {
			return err
		}
		p.prog.printf("  %v; trying again in %s (%d of %d)", err, wait, attempt+1, p.opts.Retries)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// statusError turns an HTTP error answer into an error, retryable for
// server errors and rate limits.
func statusError(u string, resp *http.Response) error {
	e := &httpStatusError{url: u, status: resp.StatusCode, text: resp.Status}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return retryable{e}
	}
	return e
}

// checkFile checks a file against the size and hash the hub reports and
// returns its sha256.
func checkFile(path string, f hubFile) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return "", err
	}
	if st.Size() != f.size {
		return "", fmt.Errorf("%w: %d bytes, the hub reports %d", ErrCorrupt, st.Size(), f.size)
	}
	s256 := sha256.New()
	w := io.Writer(s256)
	var s1 interface {
		io.Writer
		Sum([]byte) []byte
	}
	if f.blobID != "" {
		s1 = sha1.New()
		fmt.Fprintf(s1, "blob %d\x00", f.size)
		w = io.MultiWriter(s256, s1)
	}
	if _, err := io.Copy(w, file); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(s256.Sum(nil))
	if f.sha256 != "" && sum != f.sha256 {
		return "", fmt.Errorf("%w: sha256 %s, the hub reports %s", ErrCorrupt, sum, f.sha256)
	}
	if s1 != nil {
		if got := hex.EncodeToString(s1.Sum(nil)); got != f.blobID {
			return "", fmt.Errorf("%w: git blob sha1 %s, the hub reports %s", ErrCorrupt, got, f.blobID)
		}
	}
	return sum, nil
}

// rangeStart parses the first byte of a Content-Range "bytes a-b/n".
func rangeStart(cr string) (int64, bool) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, false
	}
	a, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(a, 10, 64)
	return n, err == nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// install moves the complete staging folder into place as target,
// replacing an older install.
func install(stage, target string) error {
	old := ""
	if _, err := os.Stat(target); err == nil {
		old = filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".old-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if err := os.Rename(target, old); err != nil {
			return fmt.Errorf("replacing %s: %w", target, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(stage, target); err != nil {
		if old != "" {
			os.Rename(old, target)
		}
		return fmt.Errorf("installing %s: %w", target, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
