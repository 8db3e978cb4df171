package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/redact"
)

// TestSecretsRedactedBeforeStorage: an exchange holding each listed kind of
// secret is ingested by the real binary; the stored texts, the raw line and
// the full-text index hold the redacted text only, and each stored vector is
// the embedding of the redacted text, not of the original.
func TestSecretsRedactedBeforeStorage(t *testing.T) {
	ws := newWorkspace(t)
	ex := redact.Examples()
	names := make([]string, 0, len(ex))
	for n := range ex {
		names = append(names, n)
	}
	sort.Strings(names)
	// Each secret twice: as json.Marshal writes it ("sec-"), and with the
	// JSON escapes other encoders use or a hostile writer may choose
	// ("esc-": every "/" as "\/", every "A" as "\u0041"), which hide it
	// from a pattern run over the raw bytes.
	escape := strings.NewReplacer("/", `\/`, "A", `\u0041`)
	unescape := strings.NewReplacer(`\/`, "/", `\u0041`, "A")
	var sb strings.Builder
	for _, n := range names {
		sb.WriteString(exchangeLine("sec", "sec-"+n, ex[n], "noted: "+ex[n]))
		sb.WriteString(escape.Replace(exchangeLine("sec", "esc-"+n, ex[n], "noted: "+ex[n])))
	}
	ws.appendRaw("sec.jsonl", []byte(sb.String()))
	// The default model, which sees every character (the hashed embedder
	// would too, but the default is what users run).
	if _, errs, code := ws.cliEnv([]string{embed.EnvProvider + "=" + embed.ProviderUSELite}, "ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(ws.root, ".praxis-os", ".cache", "continuity", "index.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	emb, err := embed.New(embed.Config{Provider: embed.ProviderUSELite})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range names {
		for _, prefix := range []string{"sec-", "esc-"} {
			n := id
			want, _ := redact.Redact(ex[n])
			var row int64
			var user, ai, raw string
			var vec, packed []byte
			err := db.QueryRow(`SELECT e.id, e.user, e.ai, e.raw, v.vec FROM events e JOIN vectors v ON v.event = e.id
			WHERE e.producer_id = ?`, prefix+n).Scan(&row, &user, &ai, &packed, &vec)
			if err != nil {
				t.Fatalf("%s%s: %v", prefix, n, err)
			}
			line, err := index.StoredLine(packed, sql.NullString{String: user, Valid: true}, sql.NullString{String: ai, Valid: true})
			if err != nil {
				t.Fatalf("%s%s: %v", prefix, n, err)
			}
			raw = string(line)
			// (An escaped line may be redacted by another rule that matches
			// the same secret: "Bearer x" where "\u0041uthorization" hides the
			// header rule.)
			marker := redact.Replacement(n)
			if prefix == "esc-" {
				marker = "[REDACTED:"
			}
			if user != want || ai != "noted: "+want || !strings.Contains(raw, marker) {
				t.Errorf("%s%s: stored user %q ai %q raw %q, want %q", prefix, n, user, ai, raw, want)
			}
			// The secret's own characters are gone from every stored form,
			// however the raw line spells them.
			secretPart := strings.TrimPrefix(ex[n], strings.Split(want, redact.Replacement(n))[0])
			if len(secretPart) > 12 && strings.Contains(unescape.Replace(raw), secretPart[:12]) {
				t.Errorf("%s%s: raw line still holds %q: %s", prefix, n, secretPart[:12], raw)
			}

			// The worker embeds the user's text trimmed, then the
			// answer's: two vectors one after the other.
			// Each is stored quantised (a float32 scale, then int8
			// components: index/vectorcodec.go).
			red, _ := emb.Embed(context.Background(), []string{strings.TrimSpace(want), "noted: " + strings.TrimSpace(want)})
			orig, _ := emb.Embed(context.Background(), []string{strings.TrimSpace(ex[n]), "noted: " + strings.TrimSpace(ex[n])})
			dim := len(red[0])
			if len(vec) != 2*(4+dim) {
				t.Fatalf("%s: stored %d bytes, want the prompt's and the answer's vectors (2×(4+%d))", n, len(vec), dim)
			}
			for k := range 2 {
				got := vec[k*(4+dim)+4 : (k+1)*(4+dim)]
				if !bytes.Equal(got, quantized(red[k])) {
					t.Errorf("%s: stored vector %d is not the embedding of the redacted text", n, k)
				}
				if bytes.Equal(got, quantized(orig[k])) {
					t.Errorf("%s: stored vector %d equals the embedding of the unredacted text", n, k)
				}
			}
		}
	}
	if st := ws.statusEnv([]string{embed.EnvProvider + "=" + embed.ProviderUSELite}); st.Redactions < int64(2*len(names)) {
		t.Errorf("status counts %d redactions, want at least %d", st.Redactions, 2*len(names))
	}
}

// quantized is v's int8 components as the index stores them.
func quantized(v []float32) []byte {
	codes := make([]int8, len(v))
	index.QuantizeUnit(codes, v)
	b := make([]byte, len(v))
	for i, c := range codes {
		b[i] = byte(c)
	}
	return b
}
