package suggest

import "testing"

func TestSuggest(t *testing.T) {
	paths := []string{"README.md", "docs/api.md", "docs/architecture.md", "src/app.go", "docs/cli.md"}
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"api", paths, "docs/api.md"},                          // same base name wins over nearer whole paths
		{"doc/api", paths, "docs/api.md"},                      // directory typo
		{"docs/api", paths, "docs/api.md"},                     // extension omitted
		{"docs/architecure.md", paths, "docs/architecture.md"}, // one letter dropped
		{"readme", paths, "README.md"},                         // case ignored
		{"app", paths, "src/app.go"},
		{"zzz", paths, ""},           // nothing close
		{"xyz", []string{"api"}, ""}, // two edits are too many for three letters
		{"Logn", []string{"Logout", "Login"}, "Login"},
		{"Error Code", []string{"Errors", "Error Codes"}, "Error Codes"},
		{"", paths, ""},
		{"api", nil, ""},
		{"x/api.md", []string{"x/api.txt", "a/api.md"}, "a/api.md"}, // among same stems, the nearest path
	}
	for _, tt := range tests {
		if got := Suggest(tt.name, tt.candidates); got != tt.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", tt.name, tt.candidates, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"héllo", "hello", 1}, // runes, not bytes
		{"same", "same", 0},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.b, tt.a); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestSuggestHugeNameIsBounded(t *testing.T) {
	long := make([]byte, 1<<20)
	for i := range long {
		long[i] = 'a'
	}
	// Must return quickly (the comparison is cut to maxRunes) and not match.
	if got := Suggest(string(long), []string{"docs/api.md"}); got != "" {
		t.Errorf("Suggest(1 MiB name) = %q, want \"\"", got)
	}
}
