// Package questions measures read_context on the questions an agent asks
// of a documentation directory: it turns the directory's headings into
// questions phrased as agents phrase them ("How do I …?", "Where is …
// configured?"), each answered by the file (and heading) it came from,
// indexes the directory as a workspace through the real daemon
// (internal/localnode: ingest, indexer, edge) and asks every question
// through the query service. `cue eval questions DIR` prints hit@1,
// hit@3, MRR@10 and nDCG@10 per mode.
package questions

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

// Question is one generated question and its answer.
type Question struct {
	// Text is the question as an agent asks it.
	Text string `json:"question"`
	// Keywords is the same need as a few keywords: the heading's words.
	Keywords string `json:"keywords"`
	// Path is the answering file, slash-separated and relative to the
	// directory; Heading the heading the question was written from (the
	// file's title when Line is 0).
	Path    string `json:"path"`
	Heading string `json:"heading"`
	Line    int    `json:"line,omitempty"`
	// Phrasing names the template the question was written with.
	Phrasing string `json:"phrasing"`
}

// Markdown files are the documentation the questions come from.
func isMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// generic headings name a kind of section every page may have, not one
// subject: a question about them has no single answer.
var generic = map[string]bool{
	"overview": true, "introduction": true, "intro": true, "example": true, "examples": true,
	"usage": true, "note": true, "notes": true, "summary": true, "see also": true,
	"arguments": true, "argument": true, "flags": true, "options": true, "parameters": true,
	"configuration": true, "description": true, "details": true, "background": true,
	"conclusion": true, "references": true, "reference": true, "links": true, "faq": true,
	"table of contents": true, "contents": true, "getting started": true, "next steps": true,
	"prerequisites": true, "requirements": true, "setup": true, "installation": true,
	"install": true, "features": true, "limitations": true, "caveats": true, "warning": true,
	"syntax": true, "returns": true, "return value": true, "output": true, "input": true,
	"index": true, "changelog": true, "license": true, "contributing": true, "support": true,
	"what's next": true, "what's new": true, "related": true, "resources": true, "tips": true,
	"troubleshooting": true, "motivation": true, "goals": true, "non-goals": true, "status": true,
	"properties": true, "fields": true, "methods": true, "types": true, "functions": true,
	"commands": true, "subcommands": true, "default": true, "defaults": true, "other": true,
	"misc": true, "miscellaneous": true, "general": true, "basics": true, "basic usage": true,
	"advanced": true, "advanced usage": true, "api": true, "cli": true, "environment variables": true,
}

var questionWords = map[string]bool{"how": true, "what": true, "why": true, "when": true, "where": true, "which": true, "who": true}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// imperatives start headings written as instructions ("Install the
// agent"), which read as "How do I install the agent?".
var imperatives = map[string]bool{
	"add": true, "build": true, "call": true, "change": true, "check": true, "configure": true,
	"connect": true, "create": true, "define": true, "delete": true, "deploy": true, "disable": true,
	"enable": true, "generate": true, "install": true, "migrate": true, "publish": true,
	"reload": true, "remove": true, "rename": true, "run": true, "send": true,
	"set": true, "setup": true, "skip": true, "start": true, "stop": true,
	"update": true, "upgrade": true, "use": true, "validate": true, "write": true,
}

// notGerunds end in "ing" without being verbs.
var notGerunds = map[string]bool{"string": true, "strings": true, "thing": true, "things": true, "nothing": true, "something": true, "spring": true, "during": true}

// Phrasings, by the shape of the heading. {h} is the subject: the heading
// with its first letter lowered unless it looks like a name.
var (
	nounPhrasings = []phrasing{
		{"how-configure", "How do I configure {h}?"},
		{"how-use", "How do I use {h}?"},
		{"how-works", "How does {h} work?"},
		{"what-is", "What is {h}?"},
		{"where-documented", "Where is {h} documented?"},
		{"where-configured", "Where is {h} configured?"},
		{"explain", "Can you explain {h}?"},
		{"lowercase-how", "how do i set up {h}"},
		{"what-should", "What should I know about {h}?"},
		{"which-page", "Which page tells me about {h}?"},
	}
	codePhrasings = []phrasing{
		{"what-does", "What does {h} do?"},
		{"where-configured", "Where is {h} configured?"},
		{"what-for", "What is {h} for?"},
		{"how-use", "How do I use {h}?"},
		{"lowercase-what", "what does {h} do"},
	}
	gerundPhrasings = []phrasing{
		{"how-go-about", "How do I go about {h}?"},
		{"where-explained", "Where is {h} explained?"},
		{"what-should", "What should I know about {h}?"},
		{"is-there", "Is there anything about {h}?"},
	}
	imperativePhrasings = []phrasing{
		{"how-do-i", "How do I {h}?"},
		{"what-way", "What is the way to {h}?"},
		{"lowercase-how", "how can i {h}"},
		{"where-how", "Where does it say how to {h}?"},
	}
)

type phrasing struct{ name, template string }

// Generate writes questions from the headings (and frontmatter titles) of
// the markdown files under fsys, at most max of them (all when max <= 0),
// picked and phrased deterministically from seed. A heading that names a
// kind of section (Overview, Example), that heads sections in more than
// one file, that is itself a question, or that has no word of three
// letters or more gives no question: it has no single answer.
func Generate(fsys fs.FS, seed uint64, max int) ([]Question, error) {
	type subject struct {
		path, heading, text string
		line                int
	}
	var subjects []subject
	files := map[string]map[string]bool{} // normalised subject → files
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isMarkdown(p) {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		doc := markdown.Parse(src)
		add := func(heading string, line int) {
			text := subjectText(heading)
			if text == "" {
				return
			}
			key := strings.ToLower(text)
			if files[key] == nil {
				files[key] = map[string]bool{}
			}
			if !files[key][p] {
				files[key][p] = true
				subjects = append(subjects, subject{p, heading, text, line})
			}
		}
		if t, ok := doc.Frontmatter["title"].(string); ok {
			add(t, 0)
		}
		for _, h := range doc.Headings {
			add(h.Text, h.Line)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	subjects = slices.DeleteFunc(subjects, func(s subject) bool { return len(files[strings.ToLower(s.text)]) > 1 })
	if len(subjects) == 0 {
		return nil, fmt.Errorf("questions: no heading under the directory names one subject: it needs markdown files with specific headings (not only Overview, Example…)")
	}
	r := rand.New(rand.NewPCG(seed, seed^0x51ed2701))
	if max > 0 && len(subjects) > max {
		r.Shuffle(len(subjects), func(i, j int) { subjects[i], subjects[j] = subjects[j], subjects[i] })
		subjects = subjects[:max]
		slices.SortFunc(subjects, func(a, b subject) int {
			if c := strings.Compare(a.path, b.path); c != 0 {
				return c
			}
			return a.line - b.line
		})
	}
	out := make([]Question, 0, len(subjects))
	for _, s := range subjects {
		ph, subj := phrase(s.text, r)
		out = append(out, Question{
			Text:     strings.ReplaceAll(ph.template, "{h}", subj),
			Keywords: s.text,
			Path:     s.path,
			Heading:  s.heading,
			Line:     s.line,
			Phrasing: ph.name,
		})
	}
	return out, nil
}

// GenerateDir is Generate over the directory dir.
func GenerateDir(dir string, seed uint64, max int) ([]Question, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("questions: %s is not a directory: give the documentation directory (e.g. a repository's docs/)", dir)
	}
	return Generate(os.DirFS(dir), seed, max)
}

// subjectText is a heading cleaned into the subject of a question, or ""
// when the heading has no single subject.
func subjectText(heading string) string {
	t := strings.TrimSpace(heading)
	if strings.HasSuffix(t, "?") || questionWords[strings.ToLower(firstWord(t))] {
		return "" // a question already ("How it works"), with no subject to ask about
	}
	// Angle brackets mark placeholders in reference headings
	// ("<scrape_config>"); colons and numbering are decoration.
	t = strings.NewReplacer("<", "", ">", "", "\\", "", "`", "").Replace(t)
	t = strings.TrimRight(t, ":.! ")
	t = strings.TrimLeft(t, "0123456789. ")
	t = strings.Join(strings.Fields(t), " ")
	if t == "" || generic[strings.ToLower(t)] {
		return ""
	}
	words := strings.Fields(t)
	if len(words) > 10 {
		return "" // a sentence, not a subject
	}
	long := false
	for _, w := range words {
		n := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				n++
			}
		}
		long = long || n >= 3
	}
	if !long {
		return ""
	}
	return t
}

// phrase picks the phrasing of a subject by its shape and returns the
// subject as it reads inside the question.
func phrase(text string, r *rand.Rand) (phrasing, string) {
	words := strings.Fields(text)
	first := strings.ToLower(words[0])
	lower := lowerFirst(text)
	switch {
	case looksLikeCode(text):
		return codePhrasings[r.IntN(len(codePhrasings))], text
	case len(words) > 1 && imperatives[first]:
		return imperativePhrasings[r.IntN(len(imperativePhrasings))], lower
	case len(words) > 1 && strings.HasSuffix(first, "ing") && len(first) >= 5 && !notGerunds[first]:
		return gerundPhrasings[r.IntN(len(gerundPhrasings))], lower
	}
	return nounPhrasings[r.IntN(len(nounPhrasings))], lower
}

// looksLikeCode reports whether text is an identifier, a call or a flag
// rather than prose: one word with _, ., (, or -- in it, or in camelCase.
func looksLikeCode(text string) bool {
	if strings.ContainsAny(text, " ") {
		return false
	}
	if strings.ContainsAny(text, "_.(/=") || strings.HasPrefix(text, "-") {
		return true
	}
	rs := []rune(text)
	for i := 1; i < len(rs); i++ {
		if unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) {
			return true
		}
	}
	return false
}

// lowerFirst lowers the first letter of text unless its first word looks
// like a name (more capitals than its first letter: "HTTP", "PromQL").
func lowerFirst(text string) string {
	first := strings.Fields(text)[0]
	caps := 0
	for _, r := range first {
		if unicode.IsUpper(r) {
			caps++
		}
	}
	if caps != 1 {
		return text
	}
	rs := []rune(text)
	rs[0] = unicode.ToLower(rs[0])
	return string(rs)
}
