package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/workspace"

	"github.com/praxis-os/continuity/internal/synth"
)

// Texts of the query workspace's exchanges (--text).
const (
	textLongMemEval = "longmemeval"
	textCoding      = "coding"
)

// queryText is the --text of the query command.
var queryText = textLongMemEval

// codingExchange is a coding agent's exchange of about 0.9 KB as a line: a
// question of 60-240 bytes naming a file, an answer of 300-1,100 bytes of
// prose with a code block (tabs, newlines, quotes, "<", "&": the characters
// producers escape differently).
func codingExchange(gen *synth.Text, i int) (user, ai string) {
	r := gen.Rand()
	file := fmt.Sprintf("internal/pkg%d/file%d.go", i%23, i%41)
	user = fmt.Sprintf("In %s, %s", file, gen.Text(60+r.IntN(180)))
	var b strings.Builder
	b.WriteString(gen.Text(120 + r.IntN(400)))
	b.WriteString("\n\n```go\nfunc (s *Server) handle")
	fmt.Fprintf(&b, "%d(ctx context.Context, req *Request) (*Response, error) {\n", i%97)
	fmt.Fprintf(&b, "\tif req.N < %d && req.Name != \"\" {\n\t\treturn nil, fmt.Errorf(\"%%s: bad & short\", req.Name)\n\t}\n", i%13)
	b.WriteString("\treturn &Response{OK: true}, nil\n}\n```\n\n")
	b.WriteString(gen.Text(60 + r.IntN(300)))
	return user, b.String()
}

// vectorsHashed is --vectors hashed: vectors of the daemon's space
// identity and size, made from a hash of each text instead of the model
// (thousands a second): for what the model's vectors do not change, such
// as the disk the index takes. Never search quality.
const vectorsHashed = "hashed"

// seedHashed is set by --vectors hashed (seedVectors).
var seedHashed bool

// hashedAs is the embedder e's identity with vectors from hashes.
type hashedAs struct{ embed.Embedder }

func (h hashedAs) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	dim := h.Dimension()
	for i, t := range texts {
		f := fnv.New64a()
		f.Write([]byte(t))
		r := rand.New(rand.NewPCG(f.Sum64(), 7))
		v := make([]float32, dim)
		var norm float64
		for k := range v {
			v[k] = float32(r.NormFloat64())
			norm += float64(v[k]) * float64(v[k])
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(norm))
		}
		out[i] = v
	}
	return out, nil
}

// seedHashedVectors is seedVectors with hashedAs(e), without the
// embedding cache (which must only hold the model's vectors).
func seedHashedVectors(ctx context.Context, ws string, e embed.Embedder) (seedReport, error) {
	var rep seedReport
	emb, err := vectors.WithTextRecipe(hashedAs{e}, vectors.DefaultText)
	if err != nil {
		return rep, err
	}
	rep.Identity, rep.Cache = vectors.SpaceIdentity(emb), "(none: hashed vectors)"
	if want := vectors.SpaceIdentity(e); want != rep.Identity {
		return rep, fmt.Errorf("seeded space %s is not the daemon's %s", rep.Identity, want)
	}
	eng, err := engine.Open(workspace.At(ws), engine.Options{Embedder: emb, EmbedBatch: 1024})
	if err != nil {
		return rep, err
	}
	defer eng.Close()
	start := time.Now()
	if _, err := eng.Embed(ctx, nil); err != nil {
		return rep, fmt.Errorf("seed hashed vectors: %w", err)
	}
	rep.Exchanges, rep.Took = eng.Worker().Status().Stored, time.Since(start)
	if n, err := eng.DB().CountPending(ctx, rep.Identity); err != nil || n != 0 {
		return rep, fmt.Errorf("seed hashed vectors: %d exchanges still pending (%v)", n, err)
	}
	return rep, nil
}
