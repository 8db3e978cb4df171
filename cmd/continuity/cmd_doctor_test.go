package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/watcher"
)

// doctorWS is a workspace indexed once, as after `continuity ingest`.
func doctorWS(t *testing.T) *workspace {
	t.Helper()
	ws := newWorkspace(t)
	ws.appendRaw("a.jsonl", []byte(exchangeLine("s1", "e1", "hello", "hi")+exchangeLine("s1", "e2", "how are you", "fine")))
	ws.appendRaw("b.jsonl", []byte(exchangeLine("s2", "e3", "build it", "built")))
	doctorIngest(t, ws)
	return ws
}

// doctorIngest indexes every complete line once, in-process, as
// `continuity ingest` does.
func doctorIngest(t *testing.T, ws *workspace) {
	t.Helper()
	db, err := index.Open(doctorCache(ws), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wt, err := watcher.New(watcher.Config{Dir: ws.logs}, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.DrainFullText(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func doctorCache(ws *workspace) string {
	return filepath.Join(ws.root, ".praxis-os", ".cache", "continuity")
}

// runDoctorJSON runs `doctor --json` in-process and returns the report and
// the exit code.
func runDoctorJSON(ctx context.Context, t *testing.T, ws *workspace) (engine.DoctorReport, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"--root", ws.root, "doctor", "--json"}, nil, &out, &errb)
	var r engine.DoctorReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("doctor --json (exit %d): %v\n%s\n%s", code, err, out.String(), errb.String())
	}
	return r, code
}

// doctorBuiltinEmbedder makes the environment choose the builtin embedder.
func doctorBuiltinEmbedder(t *testing.T) {
	t.Setenv(embed.EnvProvider, embed.ProviderBuiltin)
	t.Setenv(embed.EnvURL, "")
	t.Setenv(embed.EnvModel, "")
	t.Setenv(embed.EnvDimension, "")
}

// doctorClosedPort returns a local TCP address nothing listens on.
func doctorClosedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// doctorWant is an expected check: its status and words its message or fix
// must contain.
type doctorWant struct {
	status string
	words  []string
}

func TestDoctor(t *testing.T) {
	healthyChecks := map[string]doctorWant{
		"logs folder":     {engine.StatusOK, []string{"private folder", "0700"}},
		"log files":       {engine.StatusOK, []string{"2 log files"}},
		"skipped files":   {engine.StatusOK, nil},
		"index files":     {engine.StatusOK, []string{"private"}},
		"daemon":          {engine.StatusWarn, []string{"no daemon running", "continuity daemon"}},
		"index":           {engine.StatusOK, []string{"quick_check", "3 events"}},
		"full-text index": {engine.StatusOK, []string{"quick_check", "exchanges waiting"}},
		"lag":             {engine.StatusOK, []string{"every complete line is indexed"}},
		"rejects":         {engine.StatusOK, []string{"no rejected lines"}},
		"embedder":        {engine.StatusOK, []string{"builtin"}},
	}
	cases := []struct {
		name       string
		setup      func(t *testing.T, ws *workspace)
		code       int
		doctorWant map[string]doctorWant // checks that differ from healthyChecks; status "" = absent
	}{
		{name: "healthy", code: 0},
		{
			name:       "world-readable logs folder",
			setup:      func(t *testing.T, ws *workspace) { doctorChmod(t, ws.logs, 0o755) },
			code:       0,
			doctorWant: map[string]doctorWant{"logs folder": {engine.StatusWarn, []string{"other users", "0755", "chmod 700 "}}},
		},
		{
			name: "logs folder is a symlink",
			setup: func(t *testing.T, ws *workspace) {
				real := filepath.Join(ws.root, "elsewhere")
				if err := os.Rename(ws.logs, real); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(real, ws.logs); err != nil {
					t.Fatal(err)
				}
			},
			code: 1,
			doctorWant: map[string]doctorWant{
				"logs folder": {engine.StatusFail, []string{"symbolic link"}},
				"log files":   {engine.StatusOK, nil}, // ReadDir follows the link; the folder check is what matters
			},
		},
		{
			name: "world-readable index",
			setup: func(t *testing.T, ws *workspace) {
				doctorChmod(t, doctorCache(ws), 0o755)
				doctorChmod(t, filepath.Join(doctorCache(ws), index.FileName), 0o644)
			},
			code:       0,
			doctorWant: map[string]doctorWant{"index files": {engine.StatusWarn, []string{"other users can access", "chmod 700", "chmod 600", index.FileName}}},
		},
		{
			name: "index file is garbage",
			setup: func(t *testing.T, ws *workspace) {
				garbage := bytes.Repeat([]byte("not a database. "), 4096)
				doctorRemoveWAL(t, ws)
				if err := os.WriteFile(filepath.Join(doctorCache(ws), index.FileName), garbage, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			code: 1,
			doctorWant: map[string]doctorWant{
				"index":         {engine.StatusFail, []string{"is not a SQLite database", "continuity ingest"}},
				"skipped files": {}, "lag": {}, "rejects": {}, "full-text index": {},
			},
		},
		{
			name: "index pages damaged",
			setup: func(t *testing.T, ws *workspace) {
				doctorRemoveWAL(t, ws)
				path := filepath.Join(doctorCache(ws), index.FileName)
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				fi, _ := f.Stat()
				// Everything after the first page (the header and the
				// schema) becomes garbage.
				garbage := bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x00}, int(fi.Size()-16384)/4)
				if _, err := f.WriteAt(garbage, 16384); err != nil {
					t.Fatal(err)
				}
			},
			code: 1,
			doctorWant: map[string]doctorWant{
				"index":         {engine.StatusFail, []string{"is damaged", "rebuild it from the logs"}},
				"skipped files": {}, "lag": {}, "rejects": {}, "full-text index": {},
			},
		},
		{
			name: "full-text index is garbage",
			setup: func(t *testing.T, ws *workspace) {
				garbage := bytes.Repeat([]byte("not a database. "), 4096)
				for _, s := range []string{"-wal", "-shm"} {
					os.Remove(filepath.Join(doctorCache(ws), index.FullTextFileName+s))
				}
				if err := os.WriteFile(filepath.Join(doctorCache(ws), index.FullTextFileName), garbage, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			code:       1,
			doctorWant: map[string]doctorWant{"full-text index": {engine.StatusFail, []string{"is damaged", "rebuilds"}}},
		},
		{
			name: "full-text index missing",
			setup: func(t *testing.T, ws *workspace) {
				for _, s := range []string{"", "-wal", "-shm"} {
					os.Remove(filepath.Join(doctorCache(ws), index.FullTextFileName+s))
				}
			},
			code:       0,
			doctorWant: map[string]doctorWant{"full-text index": {engine.StatusWarn, []string{"not built yet", "continuity daemon"}}},
		},
		{
			name: "lag without daemon",
			setup: func(t *testing.T, ws *workspace) {
				ws.appendRaw("b.jsonl", []byte(exchangeLine("s2", "e4", "more", "ok")))
				ws.appendRaw("c.jsonl", []byte(exchangeLine("s3", "e5", "new", "file")+`{"type":"exch`))
			},
			code: 0,
			doctorWant: map[string]doctorWant{
				"log files": {engine.StatusOK, []string{"3 log files"}},
				"lag":       {engine.StatusWarn, []string{"in 2 files not indexed yet", "unfinished last lines", "continuity ingest"}},
			},
		},
		{
			name: "rejected lines and skipped files",
			setup: func(t *testing.T, ws *workspace) {
				ws.appendRaw("a.jsonl", []byte("not json\n"))
				if err := os.Symlink("/dev/null", filepath.Join(ws.logs, "z.jsonl")); err != nil {
					t.Fatal(err)
				}
				doctorIngest(t, ws)
			},
			code: 0,
			doctorWant: map[string]doctorWant{
				"rejects":       {engine.StatusWarn, []string{"1 log line was rejected", "continuity rejects"}},
				"skipped files": {engine.StatusWarn, []string{"z.jsonl", "symbolic link"}},
			},
		},
		{
			name: "remote embedder down",
			setup: func(t *testing.T, ws *workspace) {
				t.Setenv(embed.EnvProvider, embed.ProviderOllama)
				t.Setenv(embed.EnvModel, "nomic-embed-text")
				t.Setenv(embed.EnvURL, "http://"+doctorClosedPort(t))
			},
			code:       1,
			doctorWant: map[string]doctorWant{"embedder": {engine.StatusFail, []string{"not reachable at http://127.0.0.1:", "ollama serve", "CONTINUITY_EMBEDDER=uselite"}}},
		},
		{
			name:       "embedder misconfigured",
			setup:      func(t *testing.T, ws *workspace) { t.Setenv(embed.EnvProvider, "word2vec") },
			code:       1,
			doctorWant: map[string]doctorWant{"embedder": {engine.StatusFail, []string{"word2vec", "CONTINUITY_EMBEDDER=uselite"}}},
		},
		{
			name: "lock held, nothing on the socket",
			setup: func(t *testing.T, ws *workspace) {
				lock, err := index.AcquireLock(doctorCache(ws))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { lock.Close() })
			},
			code: 1,
			doctorWant: map[string]doctorWant{
				"daemon":        {engine.StatusOK, []string{"daemon running (pid "}},
				"daemon socket": {engine.StatusFail, []string{"does not listen", "restart it"}},
			},
		},
		{
			name: "stuck daemon",
			setup: func(t *testing.T, ws *workspace) {
				lock, err := index.AcquireLock(doctorCache(ws))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { lock.Close() })
				doctorStuckSocket(t, server.SocketPath(doctorCache(ws)))
			},
			code: 1,
			doctorWant: map[string]doctorWant{
				"daemon":        {engine.StatusOK, []string{"daemon running"}},
				"daemon socket": {engine.StatusFail, []string{"does not answer", "stuck", "kill "}},
			},
		},
		{
			name: "no index yet",
			setup: func(t *testing.T, ws *workspace) {
				if err := os.RemoveAll(filepath.Join(ws.root, ".praxis-os", ".cache")); err != nil {
					t.Fatal(err)
				}
			},
			code: 0,
			doctorWant: map[string]doctorWant{
				"index files":   {engine.StatusWarn, []string{"no index yet", "continuity ingest"}},
				"skipped files": {}, "index": {}, "lag": {}, "rejects": {}, "full-text index": {},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doctorBuiltinEmbedder(t)
			ws := doctorWS(t)
			if tc.setup != nil {
				tc.setup(t, ws)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit(30*time.Second))
			defer cancel()
			r, code := runDoctorJSON(ctx, t, ws)
			if code != tc.code {
				t.Errorf("exit %d, doctorWant %d", code, tc.code)
			}
			for name, base := range healthyChecks {
				w := base
				if o, ok := tc.doctorWant[name]; ok {
					w = o
				}
				c, ok := r.Get(name)
				switch {
				case w.status == "" && ok:
					t.Errorf("check %q present: %+v", name, c)
				case w.status == "":
				case !ok:
					t.Errorf("check %q missing", name)
				case c.Status != w.status:
					t.Errorf("check %q: %s %q (fix %q), doctorWant %s", name, c.Status, c.Message, c.Fix, w.status)
				default:
					for _, word := range w.words {
						if !strings.Contains(c.Message+"; "+c.Fix, word) {
							t.Errorf("check %q: %q (fix %q) does not say %q", name, c.Message, c.Fix, word)
						}
					}
				}
			}
			for name, w := range tc.doctorWant {
				if _, known := healthyChecks[name]; !known {
					c, ok := r.Get(name)
					if !ok || c.Status != w.status {
						t.Errorf("check %q: %+v (present %v), doctorWant %s", name, c, ok, w.status)
						continue
					}
					for _, word := range w.words {
						if !strings.Contains(c.Message+"; "+c.Fix, word) {
							t.Errorf("check %q: %q (fix %q) does not say %q", name, c.Message, c.Fix, word)
						}
					}
				}
			}
			var fails int
			for _, c := range r.Checks {
				if c.Status == engine.StatusFail {
					fails++
				}
			}
			if fails != r.Failures || (fails > 0) != (code == 1) {
				t.Errorf("%d FAIL checks, failures=%d, exit %d", fails, r.Failures, code)
			}
			if t.Failed() {
				t.Logf("report: %+v", r)
			}
		})
	}
}

// TestDoctorDaemon runs a daemon in-process and checks that doctor finds
// it and that it answers on its socket.
func TestDoctorDaemon(t *testing.T) {
	doctorBuiltinEmbedder(t)
	ws := doctorWS(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var derr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--root", ws.root, "daemon", "--no-notify", "--log-level", "error"}, nil, &bytes.Buffer{}, &syncWriter{b: &derr})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitLimit(10 * time.Second)):
			t.Error("daemon did not stop")
		}
	}()
	eventually(t, 10*time.Second, "the daemon answers ping", func() bool {
		var out engine.PingReply
		cctx, ccancel := context.WithTimeout(ctx, waitLimit(time.Second))
		defer ccancel()
		return server.NewClient(server.SocketPath(doctorCache(ws))).Call(cctx, "ping", struct{}{}, &out) == nil
	})
	ws.appendRaw("a.jsonl", []byte(exchangeLine("s1", "e9", "late", "line")))
	r, code := runDoctorJSON(ctx, t, ws)
	if code != 0 {
		t.Errorf("exit %d: %+v", code, r)
	}
	for name, words := range map[string][]string{
		"daemon":        {"daemon running (pid "},
		"daemon socket": {"answers on", "version " + engine.Version},
		"lag":           nil, // indexed or being indexed: OK either way
	} {
		c, ok := r.Get(name)
		if !ok || c.Status != engine.StatusOK {
			t.Errorf("check %q: %+v (present %v), doctorWant OK", name, c, ok)
			continue
		}
		for _, w := range words {
			if !strings.Contains(c.Message, w) {
				t.Errorf("check %q: %q does not say %q", name, c.Message, w)
			}
		}
	}
}

// TestDoctorText checks the plain output: one line per check, then the
// totals, and exit 1 on a failure.
func TestDoctorText(t *testing.T) {
	doctorBuiltinEmbedder(t)
	ws := doctorWS(t)
	doctorChmod(t, ws.logs, 0o750)
	t.Setenv(embed.EnvProvider, embed.ProviderOllama)
	t.Setenv(embed.EnvModel, "nomic-embed-text")
	t.Setenv(embed.EnvURL, "http://"+doctorClosedPort(t))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--root", ws.root}, nil, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d, doctorWant 1", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var checks int
	for _, l := range lines {
		if strings.HasPrefix(l, "OK ") || strings.HasPrefix(l, "WARN ") || strings.HasPrefix(l, "FAIL ") {
			checks++
		}
	}
	if checks != 13 { // with disk space, event times and retention
		t.Errorf("%d check lines, doctorWant 13:\n%s", checks, out.String())
	}
	for _, s := range []string{"WARN  logs folder", "chmod 700 " + ws.logs, "FAIL  embedder", "ollama serve", "1 failure"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output does not contain %q:\n%s", s, out.String())
		}
	}
	if !strings.Contains(errb.String(), "checks failed") {
		t.Errorf("stderr: %q", errb.String())
	}
	t.Logf("\n%s", out.String())
}

func doctorChmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func doctorRemoveWAL(t *testing.T, ws *workspace) {
	t.Helper()
	for _, s := range []string{"-wal", "-shm"} {
		if err := os.Remove(filepath.Join(doctorCache(ws), index.FileName+s)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// doctorStuckSocket listens on path and accepts connections but never answers,
// like a daemon whose server is stuck.
func doctorStuckSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepted
		for _, c := range conns {
			c.Close()
		}
	})
}
