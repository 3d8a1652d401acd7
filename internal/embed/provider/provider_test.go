package provider

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/ollama"
	"github.com/cuedeck/cuedeck/internal/embed/split"
	"github.com/cuedeck/cuedeck/internal/embed/static"
)

func TestOpen(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	for _, spec := range []string{"", "builtin", builtin.ModelID} {
		e, err := Open(spec, Config{})
		if err != nil || e == nil || e.ModelID() != builtin.ModelID {
			t.Fatalf("Open(%q) = %v, %v; want the builtin model", spec, e, err)
		}
	}
	e, err := Open("none", Config{})
	if err != nil || e != nil {
		t.Fatalf("Open(none) = %v, %v; want nil, nil", e, err)
	}
	e, err = Open("ollama:all-minilm", Config{OllamaHost: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if e.ModelID() != "ollama:all-minilm" {
		t.Fatalf("ModelID = %q", e.ModelID())
	}
	if _, ok := e.(*ollama.Embedder); !ok {
		t.Fatalf("Open(ollama:…) = %T", e)
	}
}

func TestOpenRefusesUnknownSpecs(t *testing.T) {
	for _, spec := range []string{"openai:text-embedding-3", "ollama:", "static:", "minilm"} {
		_, err := Open(spec, Config{})
		if !errors.Is(err, ErrUnknownSpec) {
			t.Fatalf("Open(%q) err = %v, want ErrUnknownSpec", spec, err)
		}
	}
	_, err := Open("bert", Config{})
	for _, want := range []string{`"builtin"`, `"ollama:<model>"`, `"static:<file>"`, `"none"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestOpenStatic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "code.static")
	m := &static.Model{Name: "code", Dims: 2, Vocab: map[string]int32{"parse": 0}, Weight: []float32{1}, Vec: []float32{0, 1}}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	e, err := Open(StaticPrefix+path, Config{})
	if err != nil || e.ModelID() != "static:code" || e.Dimensions() != 2 {
		t.Fatalf("Open(static:…) = %v, %v", e, err)
	}
	if id, err := ModelID(StaticPrefix + path); err != nil || id != "static:code" {
		t.Fatalf("ModelID(static:…) = %q, %v", id, err)
	}
	if _, err := ModelID(StaticPrefix + filepath.Join(t.TempDir(), "missing.static")); err == nil {
		t.Fatal("ModelID of a missing model file: no error")
	}
	if _, err := Open(StaticPrefix+filepath.Join(t.TempDir(), "missing.static"), Config{}); err == nil || !strings.Contains(err.Error(), "missing.static") {
		t.Fatalf("a missing model file: %v, want an error naming it", err)
	}
}

func TestOllamaHost(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "10.0.0.7:9999")
	u, err := OllamaHost("")
	if err != nil || u.Host != "10.0.0.7:9999" {
		t.Fatalf("from OLLAMA_HOST: %v, %v", u, err)
	}
	u, err = OllamaHost("gpu.lan:11434")
	if err != nil || u.String() != "http://gpu.lan:11434" {
		t.Fatalf("configured host wins: %v, %v", u, err)
	}
	t.Setenv("OLLAMA_HOST", "")
	if u, _ := OllamaHost(""); u.String() != ollama.DefaultHost {
		t.Fatalf("default = %v", u)
	}
}

func TestModelID(t *testing.T) {
	for spec, want := range map[string]string{"": builtin.ModelID, "builtin": builtin.ModelID, "none": "", "ollama:all-minilm": "ollama:all-minilm"} {
		got, err := ModelID(spec)
		if err != nil || got != want {
			t.Errorf("ModelID(%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	if _, err := ModelID("x"); !errors.Is(err, ErrUnknownSpec) {
		t.Fatalf("ModelID(x) err = %v", err)
	}
}

func TestOpenSplit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "code.static")
	m := &static.Model{Name: "code", Dims: 2, Vocab: map[string]int32{"parse": 0}, Weight: []float32{1}, Vec: []float32{0, 1}}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	spec := "builtin+code=" + StaticPrefix + path
	e, err := Open(spec, Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := builtin.ModelID + "+code=static:code"
	if e.ModelID() != want || e.Dimensions() != builtin.Dimensions+2 {
		t.Fatalf("Open(%q): %q, %d dimensions", spec, e.ModelID(), e.Dimensions())
	}
	if _, ok := e.(*split.Embedder); !ok {
		t.Fatalf("Open(%q) = %T", spec, e)
	}
	if id, err := ModelID(spec); err != nil || id != want {
		t.Fatalf("ModelID(%q) = %q, %v; want %q", spec, id, err, want)
	}
	for _, bad := range []string{"none+code=" + StaticPrefix + path, "builtin+code=none", "builtin+code=", "+code=builtin", "builtin+code=builtin+code=builtin", "builtin+code=bert"} {
		if _, err := Open(bad, Config{}); !errors.Is(err, ErrUnknownSpec) {
			t.Errorf("Open(%q) err = %v, want ErrUnknownSpec", bad, err)
		}
		if _, err := ModelID(bad); !errors.Is(err, ErrUnknownSpec) {
			t.Errorf("ModelID(%q) err = %v, want ErrUnknownSpec", bad, err)
		}
	}
}
