package search

import (
	"slices"
	"testing"
)

func TestQueryTermsLeaveOutHowAQuestionIsPhrased(t *testing.T) {
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"how do I configure the tail sampling processor", []string{"configure", "tail", "sampling", "processor"}},
		{"How do I configure the tail sampling processor?", []string{"configure", "tail", "sampling", "processor"}},
		{"What's the retention period, and where can you set it?", []string{"retention", "period", "set"}},
		{"I don't know what does decision_wait do", []string{"decision", "wait", "decisionwait"}},
		{"Can you tell me about “spike limits”, please?", []string{"spike", "limits"}},
		// Written as code, a function word is an identifier.
		{"what does client.Do return", []string{"client", "do", "return"}},
		{"when is Do() called", []string{"do", "called"}},
		{"what does `do` mean", []string{"do", "mean"}},
		{"where does doSomething live", []string{"do", "something", "dosomething", "live"}},
		// A query of nothing but function words keeps them all.
		{"how do I", []string{"how", "do", "i"}},
		{"Where?", []string{"where"}},
		{"the", nil},
	} {
		if got := QueryTerms(c.query); !slices.Equal(got, c.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

// A question ranks as its keywords do, instead of lifting the pages that
// are phrased as questions; a question of function words alone still
// finds the page that says it.
func TestSearchRanksAQuestionAsItsKeywords(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("docs/tail-sampling.md", Fields{Path: "docs/tail-sampling.md", Title: "Tail sampling processor",
		Headings: []string{"Configure the tail sampling processor"},
		Body:     "Add tail_sampling to the processors of a traces pipeline and list its policies."})
	ix.Upsert("docs/faq.md", Fields{Path: "docs/faq.md", Title: "FAQ",
		Headings: []string{"How do I do that?", "Where do I find what I need?"},
		Body:     "What do I do when I don't know where it is? How does it work? Ask in the chat."})
	ix.Upsert("blog/sampling.md", Fields{Path: "blog/sampling.md", Title: "How do I sample traces?",
		Body: "How do I keep the traces I need, people asked. What does the processor do? This post tells."})

	question := ix.Search("how do I configure the tail sampling processor", 10)
	keywords := ix.Search("configure tail sampling processor", 10)
	if !slices.Equal(question, keywords) {
		t.Fatalf("question ranked\n%v\nkeywords ranked\n%v", question, keywords)
	}
	if len(question) == 0 || question[0].ID != "docs/tail-sampling.md" {
		t.Fatalf("question: %v", question)
	}
	if got := ix.Search("how do I", 10); len(got) == 0 || got[0].ID != "docs/faq.md" {
		t.Fatalf("how do I: %v, want the FAQ that says it first", got)
	}
}
