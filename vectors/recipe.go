package vectors

// Text recipes: what of an exchange is embedded, and the space identity
// that names the embedder and the recipe. The embedding worker
// (follow/embedding) embeds by them; the space, Load and search read them.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
)

// Text recipes: what of an exchange is embedded. The recipe is part of the
// space identity ("<embedder identity>#<recipe>"), so that a change of
// recipe re-embeds everything rather than compare vectors of two recipes.
const (
	// TextUser embeds the user's text, or the assistant's when the user's
	// is empty (an orphan reply). The default.
	TextUser = "user"
	// TextUserAI embeds the user's and the assistant's text, joined by a
	// blank line (index.EmbedText).
	TextUserAI = "user+ai"
	// TextUserDate embeds the user's text after its date ("Saturday 20
	// May 2023: ..."), for questions that name a time (evaluated, issue
	// 14 item 4; see embedText).
	TextUserDate = "user+date"
	// TextUserPrev embeds the user's text after the user's text of the
	// previous exchange of the session (document expansion with the
	// neighbouring exchange; evaluated, see embedText).
	TextUserPrev = "user+prev"
	// TextAI embeds the assistant's text alone (nothing when it is
	// empty): the answer side of an exchange, for evaluation.
	TextAI = "ai"
	// TextPromptAnswer embeds two vectors per exchange: the prompt's
	// (TextUser's text) and the answer's (the assistant's text, when the
	// user's is not empty: otherwise the first vector is the answer's
	// already). A query ranks the exchange by the more similar of the
	// two. The default: agents' decisions, fixes and root causes are in
	// their answers, often to a prompt that says little ("go on", "status
	// update please"), while a long answer embedded with the prompt would
	// drown the prompt's words (see EmbedTexts).
	TextPromptAnswer = "user|ai"
	// DefaultText is the recipe of an embedder that does not choose one.
	DefaultText = TextPromptAnswer
)

// textRecipes are the recipes WithTextRecipe accepts.
var textRecipes = []string{TextUser, TextUserAI, TextUserDate, TextUserPrev, TextAI, TextPromptAnswer}

// VectorsPer is how many vectors recipe gives an exchange (some may be
// zero: an exchange without an answer).
func VectorsPer(recipe string) int {
	if recipe == TextPromptAnswer {
		return 2
	}
	return 1
}

// RecipeOfIdentity is the text recipe of a space identity
// (SpaceIdentity): what follows its last "#", DefaultText when it has
// none.
func RecipeOfIdentity(identity string) string {
	if i := strings.LastIndex(identity, "#"); i >= 0 {
		return identity[i+1:]
	}
	return DefaultText
}

// TextRecipe is implemented by embedders that choose their text recipe
// (see WithTextRecipe); others get DefaultText.
type TextRecipe interface {
	TextRecipe() string
}

// WithTextRecipe returns e with the text recipe r (TextUser or
// TextUserAI). Give the same wrapped embedder to the Worker and the
// search.Searcher.
func WithTextRecipe(e embed.Embedder, r string) (embed.Embedder, error) {
	if slices.Contains(textRecipes, r) {
		return recipeEmbedder{e, r}, nil
	}
	return nil, fmt.Errorf("vectors: unknown text recipe %q (want one of %s)", r, strings.Join(textRecipes, ", "))
}

type recipeEmbedder struct {
	embed.Embedder
	recipe string
}

func (r recipeEmbedder) TextRecipe() string { return r.recipe }

// Unwrap is the embedder given a recipe (embed.Describe looks through it).
func (r recipeEmbedder) Unwrap() embed.Embedder { return r.Embedder }

// RecipeOf is e's text recipe (TextRecipe), DefaultText when it does not
// choose one. Exported for the embedding worker (follow/embedding), which
// embeds each exchange by its embedder's recipe.
func RecipeOf(e embed.Embedder) string {
	if r, ok := e.(TextRecipe); ok {
		return r.TextRecipe()
	}
	return DefaultText
}

// SpaceIdentity is the identity under which the vectors of e are stored
// and searched: e's identity (provider, model, dimension) and the text
// recipe, e.g. "uselite:use-lite-en-0.2.0-f16:512#user".
func SpaceIdentity(e embed.Embedder) string { return e.Identity() + "#" + RecipeOf(e) }

// KnownSpaceIdentity is SpaceIdentity(e) when it is known without asking
// a server: always for the embedders in the binary, for remote ones once
// their dimension is configured or learned. It never blocks.
func KnownSpaceIdentity(e embed.Embedder) (string, bool) {
	if e == nil || e.Dimension() == 0 {
		return "", false
	}
	return SpaceIdentity(e), true
}

// SpacePattern is e's space identity as far as it is known without
// contacting a server: KnownSpaceIdentity when known, else with "?" for
// the dimension of a remote embedder whose server has not answered yet
// ("ollama:nomic-embed-text:?#user|ai"), which SpaceMayBe matches with
// any dimension; "" when nothing is known. It never blocks.
func SpacePattern(e embed.Embedder) string {
	if id, ok := KnownSpaceIdentity(e); ok {
		return id
	}
	if p := embed.ProvisionalIdentity(e); p != "" {
		return p + "#" + RecipeOf(e)
	}
	return ""
}

// SpaceMayBe reports whether the stored vectors of space identity id may
// be those of the space pattern names (SpacePattern): the same identity,
// or, for a pattern whose dimension is not known ("?"), the same
// provider, model and recipe with any dimension. An embedder whose
// server is down is thus never told that its own vectors are another
// embedder's.
func SpaceMayBe(pattern, id string) bool {
	if pattern == "" {
		return false
	}
	if id == pattern {
		return true
	}
	i := strings.LastIndex(pattern, ":?#")
	if i < 0 {
		return false
	}
	head, tail := pattern[:i+1], pattern[i+2:] // "provider:model:", "#recipe"
	dim, ok := strings.CutPrefix(id, head)
	if !ok {
		return false
	}
	dim, ok = strings.CutSuffix(dim, tail)
	if !ok || dim == "" {
		return false
	}
	for _, c := range dim {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// EmbedTexts is what is embedded of an exchange under recipe: one text per
// vector (VectorsPer); "" for a vector that is zero (not embedded), except
// the first, which is embedded whatever it is, as it always was. prev is
// the user's text of the session's previous exchange (TextUserPrev only).
// Exported for the embedding worker (follow/embedding); the recipes stay
// here, beside the space identity that names them.
//
// TextPromptAnswer, the default: the prompt as TextUser, and the answer on
// its own. On the answer-side set (continuity-eval --set answers: the
// evidence in the agent's answer, the prompt generic), vectors alone found
// evidence that the prompt vector alone never ranks (docs/performance.md, "Figures
// behind design choices"), with the coding and dev sets' held-out halves
// unchanged for hybrid search.
func EmbedTexts(recipe string, e index.Event, prev string) []string {
	if recipe != TextPromptAnswer {
		return []string{embedText(recipe, e, prev)}
	}
	prompt := embedText(TextUser, e, prev)
	answer := ""
	if strings.TrimSpace(e.User) != "" {
		answer = embedText(TextAI, e, prev)
	}
	return []string{prompt, answer}
}

// embedText is what is embedded of an exchange under a recipe of one
// vector.
//
// TextUser, the prompt: questions about past conversations are mostly
// about what the user said and did, and long answers drown the user's
// words; it found more than the user's and the assistant's text together,
// with the hash embedder and with uselite. BM25 searches both either way.
//
// TextUserDate and TextUserPrev (issue 14 item 4: dates in the embedded
// text; expansion with the neighbouring exchange) were measured against
// TextUser and lost, on the coding set, the dev set and the paraphrase
// test. They stay for evaluation. The figures are in docs/performance.md,
// "Figures behind design choices".
func embedText(recipe string, e index.Event, prev string) string {
	switch recipe {
	case TextUserAI:
		return index.EmbedText(e.User, e.AI)
	case TextAI:
		return strings.TrimSpace(e.AI)
	}
	u := strings.TrimSpace(e.User)
	if u == "" {
		u = strings.TrimSpace(e.AI)
	}
	switch recipe {
	case TextUserDate:
		if u != "" && !e.Timestamp.IsZero() {
			return e.Timestamp.UTC().Format("Monday 2 January 2006") + ": " + u
		}
	case TextUserPrev:
		if p := strings.TrimSpace(prev); p != "" && u != "" {
			return p + "\n\n" + u
		}
	}
	return u
}

// Probe passes through to the wrapped embedder when it depends on a
// server, so that embed.Resolve still probes it.
func (r recipeEmbedder) Probe(ctx context.Context) error {
	if p, ok := r.Embedder.(embed.Prober); ok {
		return p.Probe(ctx)
	}
	return nil
}
