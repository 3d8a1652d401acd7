package edge

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// mayHoldTerm only spares work: wherever termScore finds a query term in a
// text, it says the text may hold one. Checked with every word of the
// shop's files and of texts written to catch the ways Tokenize reshapes
// words (joiners, camelCase, acronyms, digits, non-ASCII case), both as
// found and as a longer word sharing its stem.
func TestMayHoldTermMissesNoMatch(t *testing.T) {
	texts := []string{
		"call read_context first", "readContext and HTTPServer", "NewValue4 x-ray", "ÜBER straße Ärger",
		"parseJSONBody with io.Reader", "snake_case_name kebab-case-name", "résumé Résumé",
	}
	err := filepath.WalkDir(filepath.Join("testdata", "shop"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		texts = append(texts, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, text := range texts {
		for _, w := range search.Tokenize(text) {
			words = append(words, w, w+"ing", w+"s")
		}
	}
	for _, text := range texts {
		for _, w := range words {
			q := []string{w}
			if termScore(search.Tokenize(text), q) > 0 && !mayHoldTerm(text, q) {
				t.Errorf("term %q matches a word of %.40q, but mayHoldTerm says it cannot", w, text)
			}
		}
	}
	if mayHoldTerm("nothing to see here", []string{"zanzibar"}) {
		t.Error("mayHoldTerm found a term the text does not hold")
	}
}
