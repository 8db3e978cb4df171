package embedbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/praxis-os/continuity/embed/uselite"
)

// JSDir is the folder of uselite's JS reference runtime in the source
// tree (embed/uselite/testdata/jsref), where `npm install
// --ignore-scripts` installs it.
func JSDir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "uselite", "testdata", "jsref")
}

// JSMissing says why the JS runtime cannot run from dir ("" when it can):
// node not on the PATH, or its packages not installed.
func JSMissing(dir string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on the PATH"
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.js")); err != nil {
		return fmt.Sprintf("%s is not there (run from a checkout of the repository)", filepath.Join(dir, "bench.js"))
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@energetic-ai", "embeddings")); err != nil {
		return fmt.Sprintf("its npm packages are not installed: (cd %s && npm install --ignore-scripts)", dir)
	}
	return ""
}

// JSRates are the JS runtime's rates, texts a second, on one core.
type JSRates struct {
	Backend     string
	Short, Long float64
	// Others is how many cores the rest of the machine used meanwhile
	// (NaN where unknown), as Measure.Others.
	Others float64
}

// RunJS runs the JS runtime of uselite's model (TF.js, WASM backend, one
// thread) from dir on the short and the long texts, batches of 64, each
// set for about seconds after a warm-up batch (dir's bench.js).
func RunJS(ctx context.Context, dir string, short, long []string, seconds float64) (JSRates, error) {
	if why := JSMissing(dir); why != "" {
		return JSRates{}, errors.New("embedbench: the JS runtime cannot run: " + why)
	}
	f, err := os.CreateTemp("", "uselite-bench-*.json")
	if err != nil {
		return JSRates{}, fmt.Errorf("embedbench: %w", err)
	}
	defer os.Remove(f.Name())
	err = json.NewEncoder(f).Encode(map[string][]string{"short": short, "long": long})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return JSRates{}, fmt.Errorf("embedbench: %s: %w", f.Name(), err)
	}
	cmd := exec.CommandContext(ctx, "node", "bench.js", f.Name(), fmt.Sprint(seconds))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	mc0, t0 := MachineCPU(), time.Now()
	out, err := cmd.Output()
	if err != nil {
		return JSRates{}, fmt.Errorf("embedbench: node bench.js in %s: %w", dir, err)
	}
	wall, mc1 := time.Since(t0), MachineCPU()
	var js JSRates
	if err := json.Unmarshal(out, &js); err != nil {
		return JSRates{}, fmt.Errorf("embedbench: node bench.js printed %q: %w", out, err)
	}
	js.Others = math.NaN()
	if mc0 >= 0 && mc1 >= 0 {
		node := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		js.Others = max(0, (mc1-mc0-node).Seconds()/wall.Seconds())
	}
	return js, nil
}

// CompareJS prints the throughput of uselite's Go encoder and of its JS
// runtime on one core each, on the same texts (about 20 tokens and at
// least 128; the Go encoder set to one chunk so that both do the same
// work), batches of 64, each measured for about seconds.
func CompareJS(ctx context.Context, seconds float64) error {
	short, long := Texts(512, 16, 1), Texts(256, 150, 2)
	js, err := RunJS(ctx, JSDir(), short, long, seconds)
	if err != nil {
		return err
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	e, err := uselite.New(uselite.Options{MaxChunks: 1, Threads: 1})
	if err != nil {
		return err
	}
	goRate := func(ts []string) (float64, error) {
		if _, err := e.Embed(ctx, ts[:64]); err != nil {
			return 0, err
		}
		n, start := 0, time.Now()
		for i := 0; ; i = (i + 64) % len(ts) {
			b := ts[i:min(i+64, len(ts))]
			if _, err := e.Embed(ctx, b); err != nil {
				return 0, err
			}
			n += len(b)
			if el := time.Since(start).Seconds(); el >= seconds {
				return float64(n) / el, nil
			}
		}
	}
	gs, err := goRate(short)
	if err != nil {
		return err
	}
	gl, err := goRate(long)
	if err != nil {
		return err
	}
	fmt.Printf("one core each, batches of 64; JS: @energetic-ai/embeddings 0.2.0, TF.js %s\n", js.Backend)
	fmt.Printf("%-28s %10s %10s %8s\n", "texts", "JS t/s", "Go t/s", "Go/JS")
	fmt.Printf("%-28s %10.1f %10.1f %7.2fx\n", "short (~20 tokens)", js.Short, gs, gs/js.Short)
	fmt.Printf("%-28s %10.1f %10.1f %7.2fx\n", "long (>=128 tokens, 1 chunk)", js.Long, gl, gl/js.Long)
	return nil
}
