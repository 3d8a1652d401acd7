// Package finder is `cue open`: a fuzzy finder over a workspace's docs,
// their headings and its task cards, in the terminal, that opens the chosen
// one in $EDITOR at its line.
package finder

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/pkg/core/fuzzy"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

// Kind of entry.
const (
	KindDoc     = "doc"
	KindHeading = "heading"
	KindCard    = "card"
)

// Entry is one thing to find: a markdown file, a heading in one, or a card.
type Entry struct {
	Kind string
	Path string // workspace-relative
	Line int
	// Label is what is shown and matched: the path, path#heading, or the
	// card's id and title.
	Label string
}

// maxFileBytes skips huge markdown files: headings of a generated dump
// are not what a person looks for.
const maxFileBytes = 2 << 20

// Entries lists the markdown files of fsys (hidden directories skipped,
// except .cuedeck's docs), their headings and the cards.
func Entries(fsys fs.FS) ([]Entry, error) {
	var out []Entry
	cards, err := scenes.Cards(fsys)
	if err != nil {
		return nil, err
	}
	isCard := map[string]bool{}
	for _, c := range cards {
		isCard[c.Path] = true
		out = append(out, Entry{Kind: KindCard, Path: c.Path, Line: 1, Label: fmt.Sprintf("%s %s [%s]", c.ID, c.Title, c.Status)})
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts are left out, not fatal
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (scenes.Vendored(name) || strings.HasPrefix(name, ".") && p != ".cuedeck") {
				return fs.SkipDir
			}
			if p == ".cuedeck/.cache" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(path.Ext(name), ".md") || isCard[p] || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxFileBytes {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil
		}
		out = append(out, Entry{Kind: KindDoc, Path: p, Line: 1, Label: p})
		for _, h := range markdown.Parse(src).Headings {
			out = append(out, Entry{Kind: KindHeading, Path: p, Line: h.Line, Label: p + "#" + h.Text})
		}
		return nil
	})
	return out, err
}

// Filter returns the entries matching query, best first, at most k.
func Filter(entries []Entry, query string, k int) []Entry {
	labels := make([]string, len(entries))
	for i, e := range entries {
		labels[i] = e.Label
	}
	var out []Entry
	for _, m := range fuzzy.Rank(query, labels, k) {
		out = append(out, entries[m.Index])
	}
	return out
}

// List writes the matches of query, one "path:line  label" per line, for
// scripts and for terminals that cannot run the interactive finder.
func List(w io.Writer, entries []Entry, query string, k int) int {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	matches := Filter(entries, query, k)
	for _, e := range matches {
		fmt.Fprintf(bw, "%s:%d\t%s\n", e.Path, e.Line, e.Label)
	}
	return len(matches)
}
