package engine

import (
	"runtime"
	"runtime/debug"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/vectors"
)

// Version is continuity's release. The daemon tells it in its ping,
// doctor compares it with the running daemon's, MCP clients see it.
const Version = "0.1.0"

// Build describes this binary: `continuity version`.
type Build struct {
	Version string `json:"version"` // the release (Version)
	// Module is the main module's version in the build info: a tag for
	// `go install ...@vX`, "(devel)" for a build from a checkout.
	Module string `json:"module"`
	// Revision, Time and Modified come from the version control system
	// the binary was built in (absent when it was built outside one, in a
	// linked git worktree, whose .git is a file go build does not read,
	// or with -buildvcs=false).
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	Go       string `json:"go"`       // the Go release that built it
	Platform string `json:"platform"` // GOOS/GOARCH
	// Embedder is the default embedder (used when none is configured)
	// and Model its model's identity; Space is the identity its vectors
	// are stored under (model and text recipe).
	Embedder string `json:"embedder"`
	Model    string `json:"model"`
	Space    string `json:"space"`
}

// ReadBuild describes this binary from its build information.
func ReadBuild() Build {
	b := Build{Version: Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Embedder: embed.DefaultProvider}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.Module = bi.Main.Version
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	// The default embedder is in the binary: building it reads nothing
	// (its model is loaded on the first embedding).
	if e, err := embed.New(embed.Config{Provider: embed.DefaultProvider}); err == nil {
		b.Model, b.Space = e.Identity(), vectors.SpaceIdentity(e)
	}
	return b
}
