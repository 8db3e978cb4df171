package embed

import (
	"context"
	"fmt"

	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/embed/uselite"
)

// Explained is what an embedder makes of one text (`continuity embed`).
type Explained struct {
	Text string
	// Chunks are the token ids of each window the model read, when the
	// embedder runs in process: hf's include the special tokens and the
	// prefix ([CLS] ... [SEP]); uselite's are its SentencePiece ids.
	Chunks [][]int32
	// Tokens are the tokens of Chunks, when the embedder can name them
	// (hf).
	Tokens [][]string
	// Vector is the text's vector.
	Vector []float32
}

// Explain embeds texts with e, as the texts searched (passages) or, when
// query is set, as search queries, and says what the model read where the
// embedder can tell. It differs from Embed in one respect: an hf model
// embeds a blank text too ([CLS] [SEP], what sentence-transformers gives),
// where Embed gives it a zero vector.
func Explain(ctx context.Context, e Embedder, texts []string, query bool) ([]Explained, error) {
	out := make([]Explained, len(texts))
	for i, t := range texts {
		out[i].Text = t
	}
	switch m := e.(type) {
	case *hf.Embedder:
		ins, err := m.Inspect(ctx, texts, query)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		tok := m.Model().Tokenizer()
		for i, in := range ins {
			out[i].Chunks, out[i].Vector = in.Chunks, in.Vector
			for _, c := range in.Chunks {
				names := make([]string, len(c))
				for j, id := range c {
					names[j] = tok.Token(id)
				}
				out[i].Tokens = append(out[i].Tokens, names)
			}
		}
		return out, nil
	case *uselite.Encoder:
		for i, t := range texts {
			out[i].Chunks = m.Chunks(t)
		}
	}
	embedFn := e.Embed
	if query {
		embedFn = func(ctx context.Context, texts []string) ([][]float32, error) { return EmbedQueries(ctx, e, texts) }
	}
	vecs, err := embedFn(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		out[i].Vector = v
	}
	return out, nil
}
