package version

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestPrintTextAndJSON(t *testing.T) {
	var text bytes.Buffer
	if err := Print(&text, "cue", nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cue ", "commit:", "built:", "go:", "embedding model: " + EmbeddingModel, "data format:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := Print(&js, "cue", []string{"--json"}); err != nil {
		t.Fatal(err)
	}
	var got Info
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, js.String())
	}
	if got != Get() || got.Version == "" || got.Commit == "" || got.Date == "" || got.DataFormat != DataFormat {
		t.Errorf("json %+v, want %+v with nothing empty", got, Get())
	}
	if err := Print(&js, "cue", []string{"--yaml"}); err == nil || !strings.Contains(err.Error(), "cue version --json") {
		t.Errorf("an unknown argument: %v", err)
	}
}

func TestLinkTimeValuesWin(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "v1.2.3", "abc123", "2026-01-02T03:04:05Z"
	if i := Get(); i.Version != "v1.2.3" || i.Commit != "abc123" || i.Date != "2026-01-02T03:04:05Z" {
		t.Errorf("Get() = %+v", i)
	}
}

func TestLabelNamesTheCommitOfDevBuilds(t *testing.T) {
	for _, c := range []struct{ version, commit, want string }{
		{"v1.2.3", "0123456789abcdef0123", "v1.2.3"},
		{"dev", "0123456789abcdef0123", "dev+0123456789ab"},
		{"dev", "0123456789abcdef0123-dirty", "dev+0123456789ab-dirty"},
		{"dev", "abc", "dev+abc"},
		{"dev", "unknown", "dev"},
	} {
		if got := (Info{Version: c.version, Commit: c.commit}).Label(); got != c.want {
			t.Errorf("Label of %s at %s = %q, want %q", c.version, c.commit, got, c.want)
		}
	}
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "dev", "fedcba9876543210"
	if got := Label(); got != "dev+fedcba987654" {
		t.Errorf("Label() = %q with a linked commit", got)
	}
}
