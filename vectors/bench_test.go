package vectors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	chromem "github.com/philippgille/chromem-go"
)

// BenchmarkVectorScan compares the vector space's query with chromem-go's
// QueryEmbedding on the same random unit vectors (256 dimensions, 500
// sessions), unfiltered and filtered to one session: the measurement
// behind the choice of a flat scan (see Space). 100k vectors with
// CONTINUITY_BENCH_100K=1.
func BenchmarkVectorScan(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv("CONTINUITY_BENCH_100K") != "" {
		sizes = append(sizes, 100_000)
	}
	const dim, sessions, k = 256, 500, 50
	for _, n := range sizes {
		v, docs := randomSpace(b, n, dim, sessions)
		coll, err := chromem.NewDB().CreateCollection("bench", nil, func(context.Context, string) ([]float32, error) {
			return nil, errors.New("no embedding")
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range docs {
			err := coll.AddDocument(ctx, chromem.Document{ID: strconv.FormatInt(d.row, 10), Embedding: d.vec,
				Metadata: map[string]string{"session": d.session}})
			if err != nil {
				b.Fatal(err)
			}
		}
		q := randomUnit(rand.New(rand.NewPCG(9, 9)), dim)
		b.Run(fmt.Sprintf("%dk/flat", n/1000), func(b *testing.B) {
			for range b.N {
				if _, err := v.Query(ctx, q, k, Filter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/chromem", n/1000), func(b *testing.B) {
			for range b.N {
				if _, err := coll.QueryEmbedding(ctx, q, k, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/flat-session", n/1000), func(b *testing.B) {
			for range b.N {
				if _, err := v.Query(ctx, q, k, Filter{Sessions: []string{"s7"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/chromem-session", n/1000), func(b *testing.B) {
			for range b.N {
				if _, err := coll.QueryEmbedding(ctx, q, k, map[string]string{"session": "s7"}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
