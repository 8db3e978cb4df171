package embed

import (
	"strings"

	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/embed/uselite"
)

// Description says what an embedder is, as a user configures it, without
// asking a server anything (see Describe).
type Description struct {
	// Provider is the embedder's kind: uselite, hash, hf, ollama or
	// openai; "" for an embedder of another kind (tests, tools).
	Provider string `json:"provider"`
	// Model is its model: the uselite or hash version, the hf model's
	// name, the remote server's model.
	Model string `json:"model,omitempty"`
	// Remote: the vectors come from a server (ollama, openai), at URL.
	Remote bool   `json:"remote"`
	URL    string `json:"url,omitempty"`
	// Dimension is the vectors' length; 0 while a remote embedder has
	// not learned it yet.
	Dimension int `json:"dimension"`
}

// Unwrapper is implemented by embedders that wrap another one (a text
// recipe, a cache): Describe looks through them.
type Unwrapper interface {
	Unwrap() Embedder
}

// Describe says what e is: its provider, model and, for a remote one, the
// server's URL. It never contacts a server (a remote embedder's dimension
// is 0 until learned).
func Describe(e Embedder) Description {
	for {
		u, ok := e.(Unwrapper)
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	switch e := e.(type) {
	case *builtin:
		return Description{Provider: ProviderHash, Model: builtinVersion, Dimension: e.dim}
	case *uselite.Encoder:
		return Description{Provider: ProviderUSELite, Model: uselite.Version, Dimension: e.Dimension()}
	case *hf.Embedder:
		d := Description{Provider: ProviderHF, Dimension: e.Dimension()}
		if loc := e.Located(); loc != nil {
			// a model of the cache by its name, else its folder: what
			// --embed-model takes
			d.Model = loc.Name
			if loc.Manifest == nil {
				d.Model = loc.Dir
			}
		}
		return d
	case *remote:
		return Description{Provider: e.provider, Model: e.model, Remote: true, URL: e.base, Dimension: e.Dimension()}
	case nil:
		return Description{}
	}
	d := Description{Dimension: e.Dimension()}
	_, d.Remote = e.(Prober)
	if d.Dimension > 0 { // the identity is known without a probe
		d.Provider, _, _ = strings.Cut(e.Identity(), ":")
	}
	return d
}

// Where says where the embedder runs, for messages: "in the binary"
// (uselite, hash), "in process" (hf, its model read from disk) or "at
// URL".
func (d Description) Where() string {
	switch {
	case d.Remote:
		return "at " + d.URL
	case d.Provider == ProviderHF:
		return "in process"
	}
	return "in the binary"
}

// ProvisionalIdentity is e's identity as far as it is known without
// contacting a server: Identity once the dimension is known, else a
// remote embedder's "<provider>:<model>:?" (the dimension its server
// has not told yet); "" for an embedder of unknown dimension that cannot
// say. Status and 'continuity vectors' use it to recognise the stored
// vectors of an embedder whose server is down.
func ProvisionalIdentity(e Embedder) string {
	if e == nil {
		return ""
	}
	if e.Dimension() > 0 {
		return e.Identity()
	}
	for {
		if p, ok := e.(interface{ ProvisionalIdentity() string }); ok {
			return p.ProvisionalIdentity()
		}
		u, ok := e.(Unwrapper)
		if !ok {
			return ""
		}
		e = u.Unwrap()
	}
}
