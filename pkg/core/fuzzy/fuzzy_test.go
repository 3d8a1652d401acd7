package fuzzy

import "testing"

func TestScoreOrdersTighterMatchesFirst(t *testing.T) {
	items := []string{
		"internal/bus/worker.go",
		"docs/architecture.md",
		"docs/auth.md",
		"docs/api.md#authentication",
		"README.md",
	}
	got := Rank("auth", items, 0)
	if len(got) != 2 || items[got[0].Index] != "docs/auth.md" || items[got[1].Index] != "docs/api.md#authentication" {
		t.Fatalf("rank: %+v", got)
	}
	if _, ok := Score("xyz", "docs/auth.md"); ok {
		t.Fatal("xyz matched docs/auth.md")
	}
	if _, ok := Score("DA", "docs/auth.md"); !ok {
		t.Fatal("case-insensitive match failed")
	}
	if s, ok := Score("", "anything"); !ok || s != 0 {
		t.Fatal("empty pattern")
	}
	// Word starts beat a scattered match of the same letters.
	a, _ := Score("rm", "README.md")
	b, _ := Score("rm", "internal/archtest/arch_test.go/form")
	if a <= b {
		t.Fatalf("README.md %d <= scattered %d", a, b)
	}
}

func FuzzScore(f *testing.F) {
	f.Add("auth", "docs/auth.md")
	f.Add("İ", "i̇stanbul")
	f.Fuzz(func(t *testing.T, p, s string) {
		Score(p, s) // must not panic
	})
}
