package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// functionWords are the words a question is phrased with rather than what
// it asks about: question words, auxiliaries, pronouns, prepositions and
// the fillers agents write ("please", "tell me"). QueryTerms leaves them
// out of keyword queries, so "how do I configure the tail sampling
// processor" ranks as "configure tail sampling processor" instead of
// lifting every FAQ heading and blog post that says "how do I". They are
// dropped from queries only: the index keeps them, so an identifier
// written as code (`Do`, client.Do, Where()) and a query made of nothing
// else still match. Words already in stopwords are left out of this list.
var functionWords = setOf(
	// question words
	"how", "what", "where", "when", "which", "who", "whom", "whose", "why", "whether",
	// auxiliaries and modals
	"do", "does", "did", "can", "could", "would", "should",
	// pronouns
	"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours",
	// the preposition of "what should I know about", "tell me about"
	"about",
	"someone", "something", "anyone", "anything",
	// fillers of a request
	"please", "tell", "explain", "know", "need", "want", "wanna", "let", "lets",
	"hi", "hello", "hey", "thanks", "thank", "okay",
	// contractions written without the apostrophe
	"dont", "doesnt", "didnt", "cant", "couldnt", "wouldnt", "shouldnt", "isnt", "arent",
	"wasnt", "werent", "wont", "havent", "hasnt", "im", "ive", "youre", "whats", "wheres",
	"hows", "whos", "thats",
)

// contractionBases are the words before an apostrophe in a contraction of
// function words ("don't", "what's", "I'm"), besides functionWords.
var contractionBases = setOf("don", "doesn", "didn", "isn", "aren", "wasn", "weren", "haven",
	"hasn", "hadn", "won", "wouldn", "shouldn", "couldn", "mustn", "needn", "ca", "it", "that",
	"there", "they", "let")

// contractionEnds are the endings after the apostrophe.
var contractionEnds = setOf("s", "t", "re", "ve", "ll", "d", "m")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// QueryTerms returns the tokens of query that keyword search scores: those
// of Tokenize, less the function words (see functionWords) written as
// plain words. A word written as code is kept whatever it is: one with
// code punctuation in it or around it ("client.Do", "Do()", "`do`",
// "do_this"). When every word is a function word, all of them are kept, so
// a query like "how do I" still finds what says it.
func QueryTerms(query string) []string {
	var kept, all []string
	for _, chunk := range strings.Fields(query) {
		toks := Tokenize(chunk)
		all = append(all, toks...)
		if !isFunctionWord(chunk) {
			kept = append(kept, toks...)
		}
	}
	if len(kept) == 0 {
		return all
	}
	return kept
}

// isFunctionWord reports whether chunk, a whitespace-separated piece of a
// query, is a function word written as prose: letters only (an apostrophe
// inside a contraction allowed) once sentence punctuation and quotes
// around it are trimmed.
func isFunctionWord(chunk string) bool {
	w := strings.TrimLeft(chunk, "\"'“‘(")
	w = strings.TrimRight(w, "\"'”’)?!,.;:")
	if w == "" {
		return false
	}
	if strings.Contains(w, "(") && !strings.Contains(w, ")") {
		return false // "Do(" was "Do()" before the trim
	}
	apostrophe := -1
	for i, r := range w {
		switch {
		case r == '\'' || r == '’':
			if apostrophe >= 0 {
				return false
			}
			apostrophe = i
		case !unicode.IsLetter(r):
			return false
		}
	}
	w = strings.ToLower(w)
	if apostrophe < 0 {
		return functionWords[w] || stopwords[w]
	}
	base := w[:apostrophe]
	_, size := utf8.DecodeRuneInString(w[apostrophe:])
	end := w[apostrophe+size:]
	return (functionWords[base] || stopwords[base] || contractionBases[base]) && contractionEnds[end]
}
