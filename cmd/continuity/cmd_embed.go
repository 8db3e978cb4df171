package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/praxis-os/continuity/embed"
)

// embedOutput is one text in `embed --json`.
type embedOutput struct {
	Text string `json:"text"`
	// InputIDs and Tokens are the window the model read (--ids), when it
	// read the text in one; Chunks and ChunkTokens each window's, when
	// it needed several.
	InputIDs    []int32    `json:"input_ids,omitempty"`
	Tokens      []string   `json:"tokens,omitempty"`
	Chunks      [][]int32  `json:"chunks,omitempty"`
	ChunkTokens [][]string `json:"chunk_tokens,omitempty"`
	Vector      []float32  `json:"vector"`
}

func runEmbed(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "embed [--embedder E] [--embed-model M] [--query] [--chunks N] [--ids] [--json] TEXT...", `
Embed each TEXT with the configured embedder and print its vector: what a
model makes of a text, without a daemon or a workspace index (none is
created). Texts are embedded as the index embeds exchanges (passages);
--query embeds them as search queries (with the model's query prefix, for
models that have one: bge's retrieval instruction, e5's "query: ").

--ids adds the token ids the model read, special tokens included
([CLS] ... [SEP] for hf models) and their tokens. A text longer than the
model's window is read in several windows (at most --chunks, default
CONTINUITY_EMBED_CHUNKS or 8) and its vector is their normalised mean;
--chunks 1 reads only what fits the window, as sentence-transformers
truncates. For an hf model a blank text is embedded as [CLS] [SEP] (what
sentence-transformers gives); the index gives blank texts a zero vector.

Examples:
  continuity embed --embedder hf --embed-model bge-small-en-v1.5 "why does the build fail?"
  continuity embed --embedder hf --embed-model ./my-model --ids --json "hello" "world"`)
	var ef embedFlags
	ef.register(fs)
	asJSON := fs.Bool("json", false, `print one JSON object per line and text: {"text", "input_ids" and "tokens" (--ids; "chunks" and "chunk_tokens" for a text read in several windows), "vector"}`)
	ids := fs.Bool("ids", false, "also print the token ids (and tokens) the model read")
	query := fs.Bool("query", false, "embed the texts as search queries (the model's query prefix) instead of as the texts searched")
	chunks := fs.Int("chunks", 0, "uselite and hf: the most windows of the model read per text (default "+embed.EnvChunks+" or 8; 1 = what fits one window)")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("nothing to embed: give one or more texts (see --help)")
	}
	if *chunks < 0 {
		return usageError("--chunks %d: want a positive number", *chunks)
	}
	if *chunks > 0 {
		ef.cfg.Chunks = *chunks
	}
	emb, err := ef.embedder()
	if err != nil {
		return err
	}
	if _, err := embed.Resolve(ctx, emb); err != nil {
		return err
	}
	out, err := embed.Explain(ctx, emb, pos, *query)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		for _, x := range out {
			o := embedOutput{Text: x.Text, Vector: x.Vector}
			if *ids {
				if len(x.Chunks) == 1 {
					o.InputIDs = x.Chunks[0]
					if len(x.Tokens) == 1 {
						o.Tokens = x.Tokens[0]
					}
				} else {
					o.Chunks, o.ChunkTokens = x.Chunks, x.Tokens
				}
			}
			if o.Vector == nil {
				o.Vector = []float32{}
			}
			if err := enc.Encode(o); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(e.stdout, "embedder %s\n", emb.Identity())
	for _, x := range out {
		fmt.Fprintf(e.stdout, "\ntext %s\n", strconv.Quote(x.Text))
		if *ids {
			if len(x.Chunks) == 0 {
				fmt.Fprintln(e.stdout, "  (the embedder does not show its tokens)")
			}
			for c, ch := range x.Chunks {
				label := "ids"
				if len(x.Chunks) > 1 {
					label = fmt.Sprintf("window %d ids", c+1)
				}
				fmt.Fprintf(e.stdout, "  %s (%d): %s\n", label, len(ch), joinInts(ch))
				if c < len(x.Tokens) {
					fmt.Fprintf(e.stdout, "  tokens: %s\n", strings.Join(x.Tokens[c], " "))
				}
			}
		}
		fmt.Fprintf(e.stdout, "  vector (%d, norm %.4f): %s\n", len(x.Vector), norm(x.Vector), vectorPreview(x.Vector))
	}
	return nil
}

func joinInts(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
}

// vectorPreview shows the first and last components of v.
func vectorPreview(v []float32) string {
	f := func(vs []float32) string {
		parts := make([]string, len(vs))
		for i, a := range vs {
			parts[i] = strconv.FormatFloat(float64(a), 'f', 5, 32)
		}
		return strings.Join(parts, ", ")
	}
	if len(v) <= 8 {
		return "[" + f(v) + "]"
	}
	return "[" + f(v[:4]) + ", …, " + f(v[len(v)-3:]) + "]"
}

func norm(v []float32) float64 {
	var s float64
	for _, a := range v {
		s += float64(a) * float64(a)
	}
	return math.Sqrt(s)
}
