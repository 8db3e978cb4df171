package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/x448/float16"
)

// The safetensors format (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON mapping each
// tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (plus an
// optional "__metadata__" object of strings), then the tensors' bytes,
// little-endian, offsets relative to the end of the header. As the
// reference implementation does, the reader insists that the tensors
// cover the data exactly, back to back: a header that does not is
// malformed, and so is a file shorter than what the header describes.

// maxSafetensorsHeader is the reference implementation's bound on the
// header (100 MB).
const maxSafetensorsHeader = 100_000_000

// dtypeSize is the byte size of each element type the format defines.
var dtypeSize = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// tensorInfo is one tensor of a safetensors header.
type tensorInfo struct {
	DType string
	Shape []int
	Begin int64 // offset of its bytes in the file
	Size  int64 // its byte length
}

// safetensors is a parsed safetensors header over the file's bytes.
type safetensors struct {
	name    string // the file, for errors
	r       io.ReaderAt
	tensors map[string]tensorInfo
}

// readSafetensors parses the header of the safetensors file r of size
// bytes; name is used in errors. The tensors' bytes are read later, one
// tensor at a time (float32).
func readSafetensors(name string, r io.ReaderAt, size int64) (*safetensors, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: not a valid safetensors file: %s", name, fmt.Sprintf(format, a...))
	}
	if size < 8 {
		return nil, bad("%d bytes, too short for the 8-byte header length", size)
	}
	var lb [8]byte
	if _, err := r.ReadAt(lb[:], 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(lb[:])
	switch {
	case n < 2:
		return nil, bad("header length %d", n)
	case n > maxSafetensorsHeader:
		return nil, bad("header length %d, more than the format's %d", n, maxSafetensorsHeader)
	case int64(n) > size-8:
		return nil, bad("header length %d but only %d bytes follow (truncated?)", n, size-8)
	}
	hb := make([]byte, n)
	if _, err := r.ReadAt(hb, 8); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if hb[0] != '{' {
		return nil, bad("header does not start with '{'")
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(hb))
	if err := dec.Decode(&raw); err != nil {
		return nil, bad("header: %v", err)
	}
	if rest := bytes.TrimSpace(hb[dec.InputOffset():]); len(rest) > 0 {
		return nil, bad("header: %d bytes after the JSON object", len(rest))
	}
	dataStart := int64(8 + n)
	dataLen := size - dataStart
	st := &safetensors{name: name, r: r, tensors: make(map[string]tensorInfo, len(raw))}
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	for tname, v := range raw {
		if tname == "__metadata__" {
			var meta map[string]string
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, bad("__metadata__: want an object of strings")
			}
			continue
		}
		var t struct {
			DType   string   `json:"dtype"`
			Shape   []int64  `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, bad("tensor %q: %v", tname, err)
		}
		es, ok := dtypeSize[t.DType]
		if !ok {
			return nil, bad("tensor %q: unknown dtype %q", tname, t.DType)
		}
		if t.Shape == nil {
			return nil, bad("tensor %q: no shape", tname)
		}
		if len(t.Offsets) != 2 || t.Offsets[0] > t.Offsets[1] || t.Offsets[1] > uint64(dataLen) {
			return nil, bad("tensor %q: data_offsets %v outside the %d bytes of data", tname, t.Offsets, dataLen)
		}
		elems := int64(1)
		shape := make([]int, len(t.Shape))
		for i, d := range t.Shape {
			if d < 0 || d > math.MaxInt32 || (d > 0 && elems > math.MaxInt64/8/d) {
				return nil, bad("tensor %q: shape %v", tname, t.Shape)
			}
			elems *= d
			shape[i] = int(d)
		}
		begin, end := int64(t.Offsets[0]), int64(t.Offsets[1])
		if end-begin != elems*int64(es) {
			return nil, bad("tensor %q: %s %v takes %d bytes but its data_offsets span %d", tname, t.DType, t.Shape, elems*int64(es), end-begin)
		}
		st.tensors[tname] = tensorInfo{DType: t.DType, Shape: shape, Begin: dataStart + begin, Size: end - begin}
		spans = append(spans, span{tname, begin, end})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	at := int64(0)
	for _, s := range spans {
		if s.begin != at {
			if s.begin < at {
				return nil, bad("tensor %q overlaps the one before it", s.name)
			}
			return nil, bad("%d bytes of data before tensor %q belong to no tensor", s.begin-at, s.name)
		}
		at = s.end
	}
	if at != dataLen {
		return nil, bad("the tensors take %d bytes of data but the file holds %d after the header", at, dataLen)
	}
	return st, nil
}

// errNoTensor marks a tensor the file does not have.
var errNoTensor = errors.New("no such tensor")

// shape returns the shape of tensor name.
func (s *safetensors) shape(name string) ([]int, error) {
	t, ok := s.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q: %w", s.name, name, errNoTensor)
	}
	return t.Shape, nil
}

// check reports whether tensor name exists with the given shape and a
// floating-point dtype the reader converts (F32, F16, BF16).
func (s *safetensors) check(name string, shape ...int) error {
	t, ok := s.tensors[name]
	if !ok {
		return fmt.Errorf("%s: tensor %q: %w", s.name, name, errNoTensor)
	}
	if !slices.Equal(t.Shape, shape) {
		return fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", s.name, name, t.Shape, shape)
	}
	switch t.DType {
	case "F32", "F16", "BF16":
		return nil
	}
	return fmt.Errorf("%s: tensor %q is %s; continuity reads F32, F16 and BF16 weights", s.name, name, t.DType)
}

// float32s reads tensor name (checked with check) as float32s into dst,
// whose length must be its element count.
func (s *safetensors) float32s(name string, dst []float32) error {
	t := s.tensors[name]
	b := make([]byte, t.Size)
	if _, err := s.r.ReadAt(b, t.Begin); err != nil {
		return fmt.Errorf("%s: tensor %q: %w", s.name, name, err)
	}
	le := binary.LittleEndian
	switch t.DType {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case "F16":
		for i := range dst {
			dst[i] = float16.Frombits(le.Uint16(b[2*i:])).Float32()
		}
	case "BF16":
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16)
		}
	default:
		return fmt.Errorf("%s: tensor %q is %s", s.name, name, t.DType)
	}
	return nil
}
