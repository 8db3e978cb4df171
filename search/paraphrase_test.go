package search

import (
	"fmt"
	"os"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/vectors"
)

// paraphrases are exchanges of realistic coding conversations and, for
// each, a question about it in other words, as a user asks weeks later
// (written by hand; they share few or no words with the exchange).
var paraphrases = []struct{ user, ai, query string }{
	{"Stripe keeps resending the same webhook event and we create duplicate orders", "Make the handler idempotent: store the event id with a unique constraint and skip events already seen.",
		"the payment provider delivered a notification twice and we billed people two times"},
	{"The CI job times out after 60 minutes when building the Docker image", "Cache the dependency layer and split the build stage so only the app layer rebuilds.",
		"our pipeline is too slow and hits its time limit while producing the container"},
	{"How do I make the container image smaller? It is 2 GB", "Use a multi-stage build with a distroless base; copy only the compiled binary.",
		"shrinking the size of what we ship to the registry"},
	{"Postgres says deadlock detected when two workers update the same rows", "Lock rows in a consistent order (ORDER BY id FOR UPDATE) or retry the transaction.",
		"two background jobs blocked each other in the database"},
	{"Our React page re-renders on every keystroke and feels sluggish", "Memoise the list with useMemo and move the input state down into its own component.",
		"the frontend UI lags when someone types in the form"},
	{"The Go service leaks goroutines when clients disconnect", "Pass the request context down and select on ctx.Done() in the streaming loop.",
		"concurrent routines pile up after callers hang up"},
	{"JWT tokens expire after 5 minutes and users get logged out mid-session", "Issue a refresh token and renew the access token silently before it expires.",
		"people get kicked out of the app while they are still working"},
	{"Redis memory keeps growing until the instance gets OOM killed", "Set maxmemory with an allkeys-lru eviction policy and put TTLs on the session keys.",
		"the in-memory cache server runs out of RAM and crashes"},
	{"Flaky test: TestUpload fails one run in ten on CI", "It races on a temp file name; use t.TempDir() per test instead of a shared path.",
		"a check in the suite passes sometimes and fails other times"},
	{"Migrate the users table to add a non-null email column without downtime", "Add it nullable, backfill in batches, then add the NOT NULL constraint.",
		"changing the schema of the accounts data while the site stays up"},
	{"The nginx reverse proxy returns 502 Bad Gateway after deploy", "The upstream port changed to 8081; update proxy_pass and reload nginx.",
		"after shipping the new release the web server in front answers with a gateway error"},
	{"Python script is slow reading a 10 GB CSV with pandas", "Read it in chunks with chunksize, or use pyarrow and only the columns you need.",
		"loading a huge spreadsheet export takes forever in our data tooling"},
	{"Kubernetes pods get CrashLoopBackOff because the liveness probe fails at startup", "Add a startupProbe or raise initialDelaySeconds; the app needs 40 s to warm up.",
		"the cluster keeps restarting our app before it has finished booting"},
	{"git rebase left conflicts in package-lock.json", "Take either side, then run npm install to regenerate the lockfile and continue the rebase.",
		"version control merge trouble in the dependency lock file"},
	{"CORS error when the frontend on localhost:3000 calls the API on port 8080", "Allow the origin http://localhost:3000 in the API's CORS middleware, with credentials if you send cookies.",
		"the browser blocks requests from the dev site to our backend because of cross-origin rules"},
	{"Rate limit the public API to 100 requests per minute per key", "Use a token bucket in Redis keyed by API key; return 429 with Retry-After.",
		"throttling how often each client may call our endpoints"},
	{"Set up structured logging with request ids in the HTTP handlers", "Use slog with a middleware that puts a request id into the context and every log line.",
		"tracing each call through the logs with a correlation identifier"},
	{"The SQLite database is locked when the daemon and the CLI write at once", "Enable WAL mode and a busy timeout, and keep one writer connection.",
		"two processes fight over the embedded db file and one of them errors"},
	{"Upgrade from Node 16 to Node 20 broke our build with OpenSSL errors", "Node 17+ uses OpenSSL 3; upgrade webpack or set NODE_OPTIONS=--openssl-legacy-provider temporarily.",
		"moving to a newer JavaScript runtime version made compilation fail with crypto complaints"},
	{"We need to send a welcome email after signup without slowing the request", "Push a job onto the queue and let a worker send it; the request returns at once.",
		"deferring the greeting message for new accounts to the background"},
	{"Terraform plan wants to destroy and recreate the database", "The engine_version change forces replacement; use lifecycle prevent_destroy and upgrade in place.",
		"the infrastructure-as-code tool is about to wipe our production datastore"},
	{"Images uploaded from iPhones show up rotated sideways", "Apply the EXIF orientation when you resize, then strip the metadata.",
		"photos from phones appear turned on their side after upload"},
	{"Search results in Elasticsearch ignore accents: café does not match cafe", "Add the asciifolding filter to the analyzer and reindex.",
		"diacritics make the text lookup miss words"},
	{"The cron job runs twice when we have two replicas", "Use a distributed lock (a lease in the database) so only one replica runs it.",
		"a scheduled task fires on both copies of the service"},
	{"Users report the mobile app drains the battery", "Stop polling every 5 seconds; use push notifications and batch location updates.",
		"our phone application uses too much power"},
	{"Add dark mode to the settings page", "Use CSS variables for colours and toggle a data-theme attribute, persisted in localStorage.",
		"a night theme option in preferences"},
	{"Timezone bug: meetings show one hour off after daylight saving time", "Store UTC and convert with the user's IANA zone, not a fixed offset.",
		"calendar events are shifted by sixty minutes since the clocks changed"},
	{"The build fails because cgo needs gcc on the Alpine image", "Install build-base in the builder stage, or build with CGO_ENABLED=0 if you can drop sqlite.",
		"compiling on the minimal linux base errors out for lack of a C compiler"},
	{"Profile why the endpoint takes 800 ms", "pprof shows JSON encoding of a huge response; paginate and stream it.",
		"finding out what makes one route so slow to answer"},
	{"Secrets ended up committed in the .env file", "Rotate the keys now, remove the file from history with git filter-repo, and add .env to .gitignore.",
		"passwords were accidentally pushed to the repository"},
	{"How should we version the public REST API?", "Put the major version in the path (/v2/) and keep v1 alive for six months with deprecation headers.",
		"naming scheme for breaking changes to our web interface for customers"},
	{"Unicode filenames break the zip export on Windows", "Set the UTF-8 flag (bit 11) on the zip entries, or normalise names to NFC.",
		"archives we generate have garbled names for non-English files on PCs"},
}

// paraphraseFloor guards against regressions. Measured with uselite
// (use-lite-en-0.2.0-f16): 20 of 32 (62%) embedding the user side (the
// default), 22 of 32 (69%) with PARAPHRASE_TEXT=user+ai. Issue 14 asks for
// 70%: not reached yet.
const paraphraseFloor = 0.60

// paraphraseSearch indexes the paraphrase exchanges, embedded with the
// default embedder (PARAPHRASE_TEXT: another text recipe), and returns a
// searcher with opts.
func paraphraseSearch(t *testing.T, opts Options) (*Searcher, embed.Embedder) {
	t.Helper()
	e, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if r := os.Getenv("PARAPHRASE_TEXT"); r != "" { // measure another recipe
		if e, err = vectors.WithTextRecipe(e, r); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t)
	var lines []string
	for i, p := range paraphrases {
		lines = append(lines, exchange(fmt.Sprintf("p%d", i), fmt.Sprintf("s%d", i%5), at(i), p.user, p.ai))
	}
	f.commit(lines...)
	if a := os.Getenv("PARAPHRASE_ANSWER_WEIGHT"); a != "" { // measure vectors.AnswerWeight
		old := vectors.AnswerWeight
		if _, err := fmt.Sscan(a, &vectors.AnswerWeight); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { vectors.AnswerWeight = old })
	}
	w := drain(t, f.db, e)
	if c := os.Getenv("PARAPHRASE_COHORT"); c != "" { // measure Options.CohortMargin
		if _, err := fmt.Sscan(c, &opts.CohortMargin); err != nil {
			t.Fatal(err)
		}
	}
	if c := os.Getenv("PARAPHRASE_VFLOOR"); c != "" { // measure Options.VectorFloor
		if _, err := fmt.Sscan(c, &opts.VectorFloor); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: opts}
	// PARAPHRASE_MORE: a further space of another recipe, max similarity
	// (two vectors per exchange; see Config.More).
	if r := os.Getenv("PARAPHRASE_MORE"); r != "" {
		base, err := embed.New(embed.Config{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := vectors.WithTextRecipe(base, r)
		if err != nil {
			t.Fatal(err)
		}
		cfg.More = append(cfg.More, drain(t, f.db, m).Space)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, e
}

// rankOf is the 0-based rank of id in rs, -1 when absent.
func rankOf(rs []Result, id string) int {
	for i, r := range rs {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// TestParaphraseVectors: with the default embedder, vector search alone
// finds a coding exchange from a question in other words: the target in
// the top 3 for at least paraphraseFloor of the pairs.
func TestParaphraseVectors(t *testing.T) {
	s, e := paraphraseSearch(t, noFloor)
	hits := 0
	for i, p := range paraphrases {
		res, err := s.Search(ctx, Query{Text: p.query, Mode: ModeVector, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if rankOf(res, fmt.Sprintf("p%d", i)) >= 0 {
			hits++
		} else {
			t.Logf("missed: %q -> %v (want p%d: %q)", p.query, ids(res), i, p.user)
		}
	}
	share := float64(hits) / float64(len(paraphrases))
	t.Logf("%d of %d paraphrases (%.0f%%) in the top 3 by vectors alone (%s)", hits, len(paraphrases), 100*share, vectors.SpaceIdentity(e))
	if len(paraphrases) < 30 || share < paraphraseFloor {
		t.Errorf("%d of %d in the top 3, want at least %.0f%% of at least 30", hits, len(paraphrases), 100*paraphraseFloor)
	}
}

// paraphraseShownFloor guards what a user running plain `continuity
// search "<paraphrase>"` (hybrid, default floor, limit 10) sees: measured
// 19 of 32 targets shown (13 in the top 3) with the floor as a gate
// (Floor) and the results in the fusion's order; 14 (11) when the floor
// cut every result; 17 (12) with the results ordered by their scores, in
// which the semantic strength counts as V²/2 (DefaultVectorPower,
// DefaultVectorShare: with V whole, prompts merely on the question's topic
// outranked the answers holding its words, on the coding set).
const paraphraseShownFloor = 0.5

// TestParaphraseSearchDefaults: plain hybrid search with the defaults, as
// a user runs it, shows the target of a paraphrased question, and still
// nothing for queries about nothing in the history.
func TestParaphraseSearchDefaults(t *testing.T) {
	s, e := paraphraseSearch(t, Options{})
	shown, top3 := 0, 0
	for i, p := range paraphrases {
		res, err := s.Search(ctx, Query{Text: p.query, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		switch r := rankOf(res, fmt.Sprintf("p%d", i)); {
		case r < 0:
			t.Logf("not shown: %q -> %d results (want p%d: %q)", p.query, len(res), i, p.user)
		case r < 3:
			top3++
			fallthrough
		default:
			shown++
		}
	}
	t.Logf("%d of %d targets shown by plain hybrid search, %d in the top 3 (%s)", shown, len(paraphrases), top3, vectors.SpaceIdentity(e))
	if float64(shown) < paraphraseShownFloor*float64(len(paraphrases)) {
		t.Errorf("%d of %d targets shown, want at least %.0f%%", shown, len(paraphrases), 100*paraphraseShownFloor)
	}
	for _, q := range []string{"quantum entanglement photosynthesis", "zygomorphic flowers of the xerophytic bromeliad",
		"byzantine iconoclasm liturgical chant", "tardigrade cryptobiosis desiccation", "pangolin scale keratin smuggling", "medieval falconry jesses and hoods"} {
		res, err := s.Search(ctx, Query{Text: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.Weak {
				t.Errorf("%q: %v; want nothing but weak matches", q, ids(res))
				break
			}
		}
	}
}
