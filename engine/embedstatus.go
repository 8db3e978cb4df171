package engine

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/embed/uselite"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/vectors"
)

// Sources of the embedder `status` and `doctor` describe
// (EmbedderStatus.Source).
const (
	// EmbedderOfDaemon: the running daemon's, which embeds the exchanges
	// and every query asked through it.
	EmbedderOfDaemon = "daemon"
	// EmbedderOfEnvironment: the one this command's settings choose
	// (CONTINUITY_EMBEDDER and the others, or the flags), when no daemon
	// answers: what answers in-process would use.
	EmbedderOfEnvironment = "environment"
)

// EmbedderStatus is the embedder `status` describes: the running daemon's
// when one answers, else the one this command's settings choose.
type EmbedderStatus struct {
	Source string `json:"source"` // EmbedderOfDaemon or EmbedderOfEnvironment
	// Space is the identity its vectors are stored under
	// (vectors.SpaceIdentity); "" while a remote embedder has not
	// learned its dimension.
	Space string `json:"space,omitempty"`
	// SpacePattern is Space, or while a remote embedder has not learned
	// its dimension, its identity with "?" for it: the stored vectors it
	// matches (vectors.SpaceMayBe) may be this embedder's.
	SpacePattern string `json:"space_pattern,omitempty"`
	embed.Description
	// Ready: the daemon's vector space is loaded. Stored: the vectors it
	// stored since it started. LastError: its last embedding failure
	// ("" after a success). Daemon only.
	Ready     bool   `json:"ready,omitempty"`
	Stored    int64  `json:"stored,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// Reachable, for the daemon's remote embedder: false when its last
	// call failed, true once it embedded since the daemon started;
	// absent while unknown.
	Reachable *bool `json:"reachable,omitempty"`
	// Environment is the embedder this command's settings choose when a
	// daemon answers and runs another one (Note says what it means);
	// "" when they agree.
	Environment string `json:"environment,omitempty"`
	Note        string `json:"note,omitempty"`
}

// daemonEmbedder asks the running daemon which embedder it embeds with
// and how far it is; false when no daemon answers quickly, or it has no
// embedder (or is too old to say).
func (c *Client) daemonEmbedder(ctx context.Context) (embedding.Progress, bool) {
	var p embedding.Progress
	if c.viewReport(ctx, "embed", &p) != nil {
		return p, false
	}
	if p.Embedder == nil && p.Space == "" {
		// A daemon older than Progress.Embedder: its loaded space is
		// all it says.
		if p.Identity == "" {
			return p, false
		}
		p.Space = p.Identity
		prov, _, _ := strings.Cut(p.Identity, ":")
		p.Embedder = &embed.Description{Provider: prov}
	}
	if p.Space == "" {
		p.Space = p.Identity
	}
	if p.Embedder == nil {
		p.Embedder = &embed.Description{}
	}
	return p, true
}

// ofDaemon is the EmbedderStatus of the daemon's embedder as p reports
// it (daemonEmbedder).
func ofDaemon(p embedding.Progress) EmbedderStatus {
	s := EmbedderStatus{Source: EmbedderOfDaemon, Space: p.Space, SpacePattern: cmp.Or(p.SpacePattern, p.Space), Description: *p.Embedder, Ready: p.Ready, Stored: p.Stored, LastError: p.LastError}
	if s.Remote {
		switch {
		case p.LastError != "":
			s.Reachable = new(bool)
		case p.Stored > 0:
			ok := true
			s.Reachable = &ok
		}
	}
	return s
}

// ofEnvironment is the EmbedderStatus of the embedder this command's
// settings choose.
func ofEnvironment(emb embed.Embedder) EmbedderStatus {
	s := EmbedderStatus{Source: EmbedderOfEnvironment, Description: embed.Describe(emb)}
	s.Space, _ = vectors.KnownSpaceIdentity(emb)
	s.SpacePattern = vectors.SpacePattern(emb)
	return s
}

// compareEnvironment notes in s (the daemon's) whether the embedder this
// command's settings choose (env, or envErr when they are invalid) is
// another one: answers given without the daemon, and MCP servers started
// with these settings, would use it, and its vectors are not built. It
// returns that other embedder's status, nil when they agree or the
// settings are invalid.
func compareEnvironment(s *EmbedderStatus, env embed.Embedder, envErr error) *EmbedderStatus {
	if envErr != nil {
		s.Note = fmt.Sprintf("this command's embedder settings are invalid (%v); the daemon embeds with %s", envErr, s.Name())
		return nil
	}
	e := ofEnvironment(env)
	if sameEmbedder(*s, e) {
		return nil
	}
	s.Environment = e.Name()
	s.Note = fmt.Sprintf("this command's settings (%s, or the default) choose %s: searches through the daemon use the daemon's embedder, "+
		"but without the daemon (and in an MCP server started with these settings) %s would answer, with no vectors of its own yet. "+
		"To align them, restart the daemon with these settings (%s), or set %s in this environment",
		embed.EnvProvider, e.Name(), cmp.Or(e.Provider, "it"), DaemonCommand(e.Description), EnvSettings(s.Description))
	return &e
}

// sameEmbedder reports whether a and b embed into the same space: by
// their space identities when both are known, else (a remote embedder
// that has not learned its dimension) by provider, model and URL.
func sameEmbedder(a, b EmbedderStatus) bool {
	if a.Space != "" && b.Space != "" {
		return a.Space == b.Space
	}
	return a.Provider == b.Provider && a.Model == b.Model && strings.TrimRight(a.URL, "/") == strings.TrimRight(b.URL, "/")
}

// Name is how messages name the embedder: its space identity, else (a
// remote embedder that has not learned its dimension) its provider and
// model.
func (s EmbedderStatus) Name() string {
	if s.Space != "" {
		return s.Space
	}
	return strings.TrimSpace(s.Provider + " " + s.Model)
}

// DaemonCommand is the command line that starts a daemon with the
// embedder d describes (the API key, never a flag, stays in the
// environment).
func DaemonCommand(d embed.Description) string {
	cmd := "continuity daemon --embedder " + cmp.Or(d.Provider, embed.DefaultProvider)
	if m := modelSetting(d); m != "" {
		cmd += " --embed-model " + m
	}
	if d.Remote && d.URL != "" {
		cmd += " --embed-url " + d.URL
	}
	if hashDim(d) {
		cmd += fmt.Sprintf(" --embed-dim %d", d.Dimension)
	}
	return cmd
}

// EnvSettings is the environment that chooses the embedder d describes,
// as a user writes it.
func EnvSettings(d embed.Description) string {
	s := embed.EnvProvider + "=" + cmp.Or(d.Provider, embed.DefaultProvider)
	if m := modelSetting(d); m != "" {
		s += " " + embed.EnvModel + "=" + m
	}
	if d.Remote && d.URL != "" {
		s += " " + embed.EnvURL + "=" + d.URL
	}
	if hashDim(d) {
		s += fmt.Sprintf(" %s=%d", embed.EnvDimension, d.Dimension)
	}
	return s
}

// modelSetting is the model a user sets to choose d: none for the
// embedders whose model is the binary's.
func modelSetting(d embed.Description) string {
	switch {
	case d.Provider == embed.ProviderHash, d.Provider == embed.ProviderUSELite && d.Model == uselite.Version:
		return ""
	}
	return d.Model
}

// hashDim: d is the hash embedder with other than its default buckets.
func hashDim(d embed.Description) bool {
	return d.Provider == embed.ProviderHash && d.Dimension != 0 && d.Dimension != embed.DefaultBuiltinDimension
}
