package llm

import (
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	for _, spec := range []string{"", "none"} {
		if x, err := Open(spec, OpenConfig{}); x != nil || err != nil {
			t.Fatalf("Open(%q) = %v, %v; want no extractor", spec, x, err)
		}
	}
	x, err := Open("ollama:qwen2.5:7b-instruct", OpenConfig{OllamaHost: "gpu.local:11434"})
	if err != nil || x.Provider() != "ollama" || x.Model() != "qwen2.5:7b-instruct" {
		t.Fatalf("Open(ollama) = %v, %v", x, err)
	}
	for _, spec := range []string{"ollama:", "openai:gpt", "rules"} {
		if _, err := Open(spec, OpenConfig{}); err == nil || !strings.Contains(err.Error(), "ollama:<model>") {
			t.Errorf("Open(%q) error %v, want one naming the accepted forms", spec, err)
		}
	}
}
