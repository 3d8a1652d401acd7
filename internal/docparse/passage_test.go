package docparse

import (
	"slices"
	"strings"
	"testing"
)

// words counts space-separated words, a tokenizer simple enough to check
// budgets by eye.
func words(s string) int { return len(strings.Fields(s)) }

func TestPassagesAreOverlappingWindowsOfSentences(t *testing.T) {
	text := "One two three. Four five six. Seven eight. Nine ten.\n\nEleven twelve."
	got := Passages(text, 6, words)
	// Each window starts half way through the one before; a paragraph
	// that fits is one passage.
	want := []string{"One two three. Four five six.", "Four five six. Seven eight.", "Seven eight. Nine ten.", "Eleven twelve."}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPassagesKeepAbbreviationsInTheirSentence(t *testing.T) {
	got := Passages("Drugs, e.g. aspirin, help. 2 of 3 agree.", 5, words)
	want := []string{"Drugs, e.g. aspirin, help.", "2 of 3 agree."}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPassagesSplitALongSentenceAtWords(t *testing.T) {
	got := Passages("a b c d e f g", 4, words)
	want := []string{"a b c d", "c d e f", "e f g"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, p := range Passages(strings.Repeat("word ", 50)+"end. Next one.", 7, words) {
		if words(p) > 7 {
			t.Errorf("passage %q is over the budget", p)
		}
	}
}

func TestPassagesOfNothing(t *testing.T) {
	if got := Passages(" \n\n\t", 10, words); len(got) != 0 {
		t.Fatalf("blank text has no passages: %q", got)
	}
}

func TestTitledPassagesPrefixEveryPassage(t *testing.T) {
	got := TitledPassages("The  title", "A b c. D e f.", 6, words)
	want := []string{"The title\nA b c.", "The title\nD e f."} // windows of one sentence step by one
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := TitledPassages("Only a title", "", 6, words); !slices.Equal(got, []string{"Only a title"}) {
		t.Fatalf("empty text: %q", got)
	}
	// A title over half the window would crowd out the text.
	if got := TitledPassages("one two three four", "A b.", 6, words); !slices.Equal(got, []string{"A b."}) {
		t.Fatalf("long title: %q", got)
	}
}
