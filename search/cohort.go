package search

import (
	"context"
	"sync"

	"github.com/praxis-os/continuity/vectors"
)

// cohort is a per-query "unrelated" level, for evaluation
// (Options.CohortMargin): a query's largest cosine with a fixed set of
// everyday texts that no coding history is about. A query close to one of
// them is a generic one whose cosines run high with anything; a query far
// from all of them (a specific coding question) can be credited with
// weaker similarities. Measured, not the default: see continuity-eval
// --variants cohort….
type cohort struct {
	once sync.Once
	vecs [][]float32
	err  error
}

// cohortTexts were written by hand for this: everyday topics, no code.
var cohortTexts = []string{
	"We went hiking in the mountains last weekend and the weather was perfect.",
	"Can you recommend a good recipe for banana bread?",
	"My sister is getting married in June and I need to find a dress.",
	"The museum has a new exhibition about ancient Egypt.",
	"I have been trying to learn Spanish with an app every morning.",
	"What are the best exercises for lower back pain?",
	"Our flight to Lisbon was delayed by three hours.",
	"The kids loved the aquarium, especially the sharks.",
	"I am thinking about adopting a cat from the shelter.",
	"How long should I boil an egg for a soft yolk?",
	"The book club is reading a novel about a lighthouse keeper.",
	"We planted tomatoes and basil in the garden this spring.",
	"My car makes a strange noise when I brake.",
	"I need ideas for a birthday present for my dad.",
	"The concert was amazing, the band played for two hours.",
	"What is the difference between a stock and a bond?",
	"I started running three times a week to prepare for a half marathon.",
	"The hotel room had a beautiful view of the ocean.",
	"How do I get red wine out of a white carpet?",
	"Our neighbours are renovating their kitchen and it is very loud.",
	"I watched a documentary about whales last night.",
	"Which houseplants survive with little sunlight?",
	"My grandmother taught me how to knit scarves.",
	"The train strike means I have to work from home tomorrow.",
	"I am saving money for a trip to Japan next year.",
	"What should I pack for a week of camping?",
	"The dentist said I need a filling.",
	"We adopted a puppy and he chews everything.",
	"The city is building a new bike lane on my street.",
	"Can you explain how vaccines train the immune system?",
	"I baked sourdough for the first time and it came out flat.",
	"The football match went to penalties.",
	"How do I write a cover letter for a teaching job?",
	"My phone screen cracked when I dropped it.",
	"The history of the Roman Empire fascinates me.",
	"I am planning a surprise party for my best friend.",
	"What are some tips for sleeping better at night?",
	"Our team won the office quiz night.",
	"I need to renew my passport before the summer.",
	"The painting class meets every Thursday evening.",
}

// cohortTop returns the largest cosine of the query vector qv with the
// cohort, ok false when the cohort could not be embedded.
func (s *Searcher) cohortTop(ctx context.Context, qv []float32) (float64, bool) {
	c := &s.cohort
	c.once.Do(func() { c.vecs, c.err = s.emb.Embed(ctx, cohortTexts) })
	if c.err != nil || len(c.vecs) == 0 {
		return 0, false
	}
	qq := float64(vectors.Dot(qv, qv))
	if qq <= 0 {
		return 0, false
	}
	best := -1.0
	for _, v := range c.vecs {
		if len(v) != len(qv) {
			return 0, false
		}
		best = max(best, float64(vectors.Dot(qv, v)))
	}
	return best, true
}
