package extractor

import (
	"errors"
	"testing"
)

func TestOpenLLM(t *testing.T) {
	for _, spec := range []string{"", "none", " none "} {
		if e, err := OpenLLM(spec, "", 0, nil); e != nil || err != nil {
			t.Fatalf("%q: %v %v", spec, e, err)
		}
	}
	e, err := OpenLLM("ollama:qwen2.5:7b-instruct", "10.0.0.5:11434", 0, nil)
	if err != nil || e.Provider() != "ollama" || e.Model() != "qwen2.5:7b-instruct" {
		t.Fatalf("%v %v", e, err)
	}
	for _, spec := range []string{"ollama:", "openai:gpt", "builtin"} {
		if _, err := OpenLLM(spec, "", 0, nil); !errors.Is(err, ErrUnknownLLM) {
			t.Fatalf("%q: %v", spec, err)
		}
	}
}
