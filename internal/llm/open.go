package llm

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/embed/provider"
)

// OpenConfig is what Open needs besides the spec.
type OpenConfig struct {
	// OllamaHost is the server for "ollama:" specs; empty: OLLAMA_HOST,
	// else DefaultOllamaHost.
	OllamaHost  string
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Open returns the extractor a spec names: nil for "none" or "" (rule-based
// extraction only), an Ollama model for "ollama:<model>". It makes no
// request, so a server that is down shows up as ErrUnavailable on the first
// extraction, which then takes the rule path.
func Open(spec string, cfg OpenConfig) (Extractor, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == "none":
		return nil, nil
	case strings.HasPrefix(spec, "ollama:") && len(spec) > len("ollama:"):
		host, err := provider.OllamaHost(cfg.OllamaHost)
		if err != nil {
			return nil, err
		}
		return NewOllama(OllamaConfig{Model: strings.TrimPrefix(spec, "ollama:"), Host: host, CallTimeout: cfg.CallTimeout, Logger: cfg.Logger})
	}
	return nil, fmt.Errorf("%q: use \"none\" (rule-based extraction) or \"ollama:<model>\", e.g. \"ollama:qwen2.5:7b-instruct\"", spec)
}
