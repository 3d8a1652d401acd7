// Package provider turns the embedding model a user configures ("builtin",
// "ollama:<model>", "static:<file>", a prose model and a code model
// joined by "+code=", or "none") into an embed.Embedder. The daemon, the
// indexer and embed worker binaries and the edges (for query embedding)
// all read the setting through it, so they agree on the model id.
package provider

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/ollama/ollama/envconfig"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/ollama"
	"github.com/cuedeck/cuedeck/internal/embed/split"
	"github.com/cuedeck/cuedeck/internal/embed/static"
)

// Specs Open accepts besides "ollama:<model>".
const (
	// Builtin is the default: USE Lite in the binary, no setup.
	Builtin = "builtin"
	// None turns embeddings off: keyword search only.
	None = "none"
	// OllamaPrefix + model names an Ollama embedding model.
	OllamaPrefix = "ollama:"
	// StaticPrefix + path names a static token model file (`cue eval
	// train`).
	StaticPrefix = "static:"
)

// ErrUnknownSpec is returned for a spec Open does not accept; the error
// says which ones it does.
var ErrUnknownSpec = errors.New("unknown embedding model")

// Config holds what a spec leaves open.
type Config struct {
	// OllamaHost is the Ollama server's URL ("http://host:11434" or
	// "host:port"). Empty: OLLAMA_HOST, else ollama.DefaultHost.
	OllamaHost string
	// Ollama is a template for the Ollama adapter (timeouts, breaker,
	// batch size); its Model and Host are set from the spec and
	// OllamaHost.
	Ollama ollama.Config
	// Logger receives the adapter's retries and breaker transitions.
	Logger *slog.Logger
}

// Open returns the embedder spec names. The empty spec means Builtin. For
// None it returns nil, nil: callers then index and search by keyword only.
// A spec that is none of these returns an error wrapping ErrUnknownSpec.
func Open(spec string, cfg Config) (embed.Embedder, error) {
	spec = strings.TrimSpace(spec)
	if prose, code, ok := split.Parts(spec); ok {
		pe, ce, err := openParts(prose, code, cfg)
		if err != nil {
			return nil, err
		}
		return split.New(pe, ce)
	}
	switch {
	case spec == "" || spec == Builtin || spec == builtin.ModelID:
		return builtin.New(), nil
	case spec == None:
		return nil, nil
	case strings.HasPrefix(spec, StaticPrefix):
		path := strings.TrimSpace(strings.TrimPrefix(spec, StaticPrefix))
		if path == "" {
			return nil, fmt.Errorf("%w %q: name the model file, e.g. %q", ErrUnknownSpec, spec, StaticPrefix+"code.static")
		}
		return static.Load(path)
	case strings.HasPrefix(spec, OllamaPrefix):
		model := strings.TrimSpace(strings.TrimPrefix(spec, OllamaPrefix))
		if model == "" {
			return nil, fmt.Errorf("%w %q: name the Ollama model, e.g. %q", ErrUnknownSpec, spec, "ollama:all-minilm")
		}
		host, err := OllamaHost(cfg.OllamaHost)
		if err != nil {
			return nil, err
		}
		oc := cfg.Ollama
		oc.Model, oc.Host = model, host
		if oc.Logger == nil {
			oc.Logger = cfg.Logger
		}
		if oc.HTTPClient == nil {
			oc.HTTPClient = &http.Client{}
		}
		return ollama.New(oc)
	}
	return nil, fmt.Errorf("%w %q: use %q (built in, the default), %q (e.g. %q), %q (a model `cue eval train` wrote), a prose model and a code model joined by %q (e.g. %q) or %q (keyword search only)",
		ErrUnknownSpec, spec, Builtin, OllamaPrefix+"<model>", OllamaPrefix+"all-minilm", StaticPrefix+"<file>", split.CodeSeparator, split.ID(Builtin, StaticPrefix+"<file>"), None)
}

// openParts opens a split spec's prose and code models: neither may be
// None or split again.
func openParts(prose, code string, cfg Config) (pe, ce embed.Embedder, err error) {
	if err := checkParts(prose, code); err != nil {
		return nil, nil, err
	}
	if pe, err = Open(prose, cfg); err != nil {
		return nil, nil, err
	}
	if ce, err = Open(code, cfg); err != nil {
		return nil, nil, err
	}
	return pe, ce, nil
}

// checkParts refuses a split spec whose part is None, empty or split
// again.
func checkParts(prose, code string) error {
	for _, part := range []string{prose, code} {
		part = strings.TrimSpace(part)
		if part == "" || part == None || strings.Contains(part, split.CodeSeparator) {
			return fmt.Errorf("%w %q: give a prose model, %q and a code model, e.g. %q", ErrUnknownSpec, split.ID(prose, code), split.CodeSeparator, split.ID(Builtin, StaticPrefix+"/path/code.static"))
		}
	}
	return nil
}

// ModelID is the model id the embedder of spec reports (and vectors are
// stored under), without opening it; "" for None.
func ModelID(spec string) (string, error) {
	spec = strings.TrimSpace(spec)
	if prose, code, ok := split.Parts(spec); ok {
		if err := checkParts(prose, code); err != nil {
			return "", err
		}
		p, err := ModelID(prose)
		if err != nil {
			return "", err
		}
		c, err := ModelID(code)
		if err != nil {
			return "", err
		}
		return split.ID(p, c), nil
	}
	switch {
	case spec == "" || spec == Builtin || spec == builtin.ModelID:
		return builtin.ModelID, nil
	case spec == None:
		return "", nil
	case strings.HasPrefix(spec, StaticPrefix) && strings.TrimSpace(strings.TrimPrefix(spec, StaticPrefix)) != "":
		// Read from the file's header: configurations are checked at
		// every command, and the vectors are megabytes.
		return static.IDOf(strings.TrimSpace(strings.TrimPrefix(spec, StaticPrefix)))
	}
	e, err := Open(spec, Config{OllamaHost: ollama.DefaultHost})
	if err != nil {
		return "", err
	}
	return e.ModelID(), nil
}

// OllamaHost resolves the server URL: configured, else OLLAMA_HOST (read
// as Ollama reads it), else the default.
func OllamaHost(configured string) (*url.URL, error) {
	configured = strings.TrimSpace(configured)
	if configured == "" {
		if strings.TrimSpace(os.Getenv("OLLAMA_HOST")) != "" {
			return envconfig.Host(), nil
		}
		configured = ollama.DefaultHost
	}
	if !strings.Contains(configured, "://") {
		configured = "http://" + configured
	}
	u, err := url.Parse(configured)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ollama host %q: use a URL such as %s", configured, ollama.DefaultHost)
	}
	return u, nil
}
