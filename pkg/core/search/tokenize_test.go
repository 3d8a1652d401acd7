package search

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"readContext", []string{"read", "context", "readcontext"}},
		{"ReadContext", []string{"read", "context", "readcontext"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"parseJSONRepair", []string{"parse", "json", "repair", "parsejsonrepair"}},
		{"read_context", []string{"read", "context", "readcontext"}},
		{"cue-deck", []string{"cue", "deck", "cuedeck"}},
		{"internal/bus/embedded.go", []string{"internal", "bus", "embedded", "go"}},
		{`C:\work\Notes.MD`, []string{"c", "work", "notes", "md"}},
		{"base64Encode", []string{"base64", "encode", "base64encode"}},
		{"IDs and URLs", []string{"ids", "urls"}},
		{"README", []string{"readme"}},
		{"The Login Flow", []string{"login", "flow"}},
		{"is_empty", []string{"empty", "isempty"}},
		{"Größe Straße", []string{"größe", "straße"}},
		{"ΣΊΣΥΦΟΣ", []string{"σίσυφοσ"}},
		{"日本語のテキスト", []string{"日本語のテキスト"}},
		{"a\xffb\xc3c", []string{"b", "c"}},
		{"__--//", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnalyzeStemsEnglishOnly(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"embedded embedding", []string{"embed", "embed"}},
		{"Authentication authenticate", []string{"authent", "authent"}},
		{"größe", []string{"größe"}},
		{"v2", []string{"v2"}},
	}
	for _, tt := range tests {
		if got := analyze(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("analyze(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"readContext", "HTTPServer", "internal/bus/embedded.go", "snake_case-kebab",
		"Größe", "ǅemal", "İstanbul", "日本語", "\xff\xfe", "a\u0301b", "IDs",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, toks := range [][]string{Tokenize(s), analyze(s)} {
			for _, tok := range toks {
				if tok == "" {
					t.Fatalf("empty token from %q", s)
				}
				if !utf8.ValidString(tok) {
					t.Fatalf("invalid UTF-8 token %q from %q", tok, s)
				}
				if strings.ToLower(tok) != tok {
					t.Fatalf("token %q from %q is not lowercase", tok, s)
				}
			}
		}
	})
}
