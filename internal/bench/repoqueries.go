package bench

import (
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Kinds of queries derived from a repository.
const (
	// QueryIdentifier is a declared name (an exported Go func or type, a
	// def, class or function elsewhere), as an agent looks up a symbol.
	QueryIdentifier = "identifier"
	// QueryPhrase is a run of words from a doc comment or a markdown
	// heading, as an agent asks about a concept.
	QueryPhrase = "phrase"
)

// RepoQuery is a query derived from the repository, and the file it came
// from.
type RepoQuery struct {
	Text   string `json:"query"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
}

var (
	goDecl    = regexp.MustCompile(`^(?:func(?: \([^)]*\))?|type) ([A-Z][A-Za-z0-9_]{5,})\b`)
	otherDecl = regexp.MustCompile(`^\s*(?:export\s+)?(?:def|class|function|fn|struct|interface)\s+([A-Za-z_][A-Za-z0-9_]{5,})\b`)
	// A doc comment line: its text after the comment marker.
	commentLine = regexp.MustCompile(`^\s*(?://|#|\*|--)\s+(.*)$`)
	heading     = regexp.MustCompile(`^#{1,4}\s+(.+?)\s*#*\s*$`)
	plainRun    = regexp.MustCompile(`[A-Za-z][A-Za-z ]*[A-Za-z]`)
)

// queryExts are the files queries are drawn from.
var queryExts = map[string]bool{".go": true, ".md": true, ".py": true, ".ts": true, ".js": true, ".rs": true, ".java": true, ".c": true, ".h": true}

// maxQuerySource is the largest file read for queries: generated tables
// and test data are not what agents ask about.
const maxQuerySource = 256 << 10

// deriveQueries draws n queries from the files under root, half
// identifiers and half phrases, deterministic from seed. Each text is a
// literal substring of its source, so `rg -F` finds at least that file.
func deriveQueries(root string, files []repoFile, n int, seed uint64) ([]RepoQuery, error) {
	var idents, phrases []RepoQuery
	for _, f := range files {
		if f.Symlink || f.Size > maxQuerySource || !queryExts[path.Ext(f.Path)] || isTest(f.Path) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, err
		}
		id, ph := candidates(f.Path, string(b))
		idents = append(idents, id...)
		phrases = append(phrases, ph...)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	pick := func(from []RepoQuery, k int, seen map[string]bool) []RepoQuery {
		r.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
		var out []RepoQuery
		for _, q := range from {
			if len(out) == k {
				break
			}
			if key := strings.ToLower(q.Text); !seen[key] {
				seen[key] = true
				out = append(out, q)
			}
		}
		return out
	}
	seen := map[string]bool{}
	out := pick(idents, n-n/2, seen)
	out = append(out, pick(phrases, n-len(out), seen)...)
	if len(out) < n {
		out = append(out, pick(idents, n-len(out), seen)...)
	}
	return out, nil
}

// isTest reports test files and test data: agents mostly ask about the
// code itself.
func isTest(p string) bool {
	return strings.Contains("/"+p, "/testdata/") || strings.HasSuffix(p, "_test.go")
}

// candidates are the queries one file offers: the names its declarations
// carry, and from each doc comment (the comment lines above a declaration)
// or markdown heading a run of 3 to 6 plain words.
func candidates(p, content string) (idents, phrases []RepoQuery) {
	lines := strings.Split(content, "\n")
	md := path.Ext(p) == ".md"
	var comment []string
	for _, line := range lines {
		if md {
			if m := heading.FindStringSubmatch(line); m != nil {
				if ph := wordRun(m[1], 2); ph != "" {
					phrases = append(phrases, RepoQuery{Text: ph, Kind: QueryPhrase, Source: p})
				}
			}
			continue
		}
		if m := commentLine.FindStringSubmatch(line); m != nil {
			comment = append(comment, m[1])
			continue
		}
		var name string
		if m := goDecl.FindStringSubmatch(line); m != nil {
			name = m[1]
		} else if m := otherDecl.FindStringSubmatch(line); m != nil {
			name = m[1]
		}
		if name != "" && len(comment) > 0 {
			idents = append(idents, RepoQuery{Text: name, Kind: QueryIdentifier, Source: p})
			// The first line of a doc comment after the name it
			// documents: "Fprintf formats according to a format
			// specifier" asks "formats according to a format".
			first := strings.TrimPrefix(comment[0], name+" ")
			if ph := wordRun(first, 3); ph != "" {
				phrases = append(phrases, RepoQuery{Text: ph, Kind: QueryPhrase, Source: p})
			}
		}
		comment = comment[:0]
	}
	return idents, phrases
}

// wordRun is the first run of at least minWords plain words (letters
// only) in s, at most 6 words; "" when there is none.
func wordRun(s string, minWords int) string {
	for _, at := range plainRun.FindAllStringIndex(s, -1) {
		if at[0] > 0 && s[at[0]-1] == '\'' {
			continue // the tail of a word: "Fprintf's"
		}
		words := strings.Fields(s[at[0]:at[1]])
		if len(words) < minWords {
			continue
		}
		words = words[:min(len(words), 6)]
		text := strings.Join(words, " ")
		if strings.Contains(s, text) && slices.ContainsFunc(words, func(w string) bool { return len(w) >= 4 }) {
			return text
		}
	}
	return ""
}
