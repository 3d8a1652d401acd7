package extractor

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/llm"
)

// LLM specs OpenLLM accepts besides "ollama:<model>".
const (
	// LLMNone extracts by rules only.
	LLMNone = "none"
	// LLMOllamaPrefix + model names an Ollama chat model.
	LLMOllamaPrefix = "ollama:"
)

// ErrUnknownLLM is returned by OpenLLM for a spec it does not accept.
var ErrUnknownLLM = errors.New("unknown LLM")

// OpenLLM turns an --llm setting into the extractor's LLM: nil for "none"
// (or ""), an Ollama client for "ollama:<model>". host is the Ollama
// server ("host:port" or a URL; "" is llm.DefaultOllamaHost); callTimeout
// bounds one attempt (0: the adapter's default).
func OpenLLM(spec, host string, callTimeout time.Duration, logger *slog.Logger) (llm.Extractor, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == LLMNone:
		return nil, nil
	case strings.HasPrefix(spec, LLMOllamaPrefix):
		model := strings.TrimSpace(strings.TrimPrefix(spec, LLMOllamaPrefix))
		if model == "" {
			return nil, fmt.Errorf("%w %q: name the model, e.g. %q", ErrUnknownLLM, spec, "ollama:qwen2.5:7b-instruct")
		}
		u, err := ollamaURL(host)
		if err != nil {
			return nil, err
		}
		return llm.NewOllama(llm.OllamaConfig{Model: model, Host: u, CallTimeout: callTimeout, Logger: logger})
	}
	return nil, fmt.Errorf("%w %q: use %q or %q", ErrUnknownLLM, spec, "ollama:<model>", LLMNone)
}

func ollamaURL(host string) (*url.URL, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		host = llm.DefaultOllamaHost
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ollama host %q: use a URL such as %s", host, llm.DefaultOllamaHost)
	}
	return u, nil
}
