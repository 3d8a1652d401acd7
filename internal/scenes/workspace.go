// Package scenes assembles a workspace's scene for `cue scene` and `cue
// watch`: it finds the root card, follows its references (@doc refs with
// anchors, links to other cards and docs, depends_on) through an os.Root so
// that no reference escapes the workspace, fails on a cycle with error 1002,
// orders the nodes with package graph, redacts every section with the
// security guard and packs them into the context sandwich of package scene.
// `cue doctor` uses its card listing and reference resolution to find dead
// links and cycles.
package scenes

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

// Workspace-relative locations, slash-separated.
const (
	CardsDir  = ".cuedeck/cards"
	DocsDir   = ".cuedeck/docs"
	SceneFile = ".cuedeck/SCENE.md"
)

// RulesFiles are where project rules are looked for, first found wins:
// CueDeck's own file, then the one seed 004 §5 names.
var RulesFiles = []string{".cuedeck/rules.md", ".claude/rules.md"}

// Card is a task card's identity and the parts of its frontmatter the scene
// needs.
type Card struct {
	ID        string
	Path      string // workspace-relative
	Title     string
	Status    string
	DependsOn []string
	Src       []byte
	Doc       markdown.Document
}

// ErrNoActiveCard is returned by Root when no card is active.
var ErrNoActiveCard = errors.New("no card has status active; name one: cue scene CARD_ID")

// ErrSeveralActive is returned by Root when more than one card is active
// and none is named.
var ErrSeveralActive = errors.New("several active cards")

// ErrCardNotFound is returned by Root when the named card does not exist.
var ErrCardNotFound = errors.New("card not found")

// Cards reads every .md file in CardsDir of fsys (an os.Root's FS), sorted by
// id. A card's id is its frontmatter id, else its file name without .md.
// A missing cards directory gives no cards and no error.
func Cards(fsys fs.FS) ([]Card, error) {
	return readCards(fsys, func(e fs.DirEntry, p string) (Card, bool, error) {
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return Card{}, false, err
		}
		return parseCard(p, src), true, nil
	})
}

// readCards lists the .md files of fsys's CardsDir and returns what read
// makes of each (nothing for those it reports false), sorted by id.
func readCards(fsys fs.FS, read func(e fs.DirEntry, p string) (Card, bool, error)) ([]Card, error) {
	ents, err := fs.ReadDir(fsys, CardsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	var cards []Card
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		c, ok, err := read(e, CardsDir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("scenes: %w", err)
		}
		if ok {
			cards = append(cards, c)
		}
	}
	sort.Slice(cards, func(i, j int) bool { return cards[i].ID < cards[j].ID })
	return cards, nil
}

// CardHeads reads the cards of a cards directory as Cards does, without
// their source and parsed document (Src, Doc), keeping what it read: a
// card is read again only when its size or modification time changed. The
// hook server finds the active card in it at every refresh; reading and
// parsing every card each time made 18 % of a daemon's CPU once agents had
// made about 24,000 tasks. Safe for concurrent use.
type CardHeads struct {
	mu    sync.Mutex
	cards map[string]cardHead // by file name
}

type cardHead struct {
	size int64
	mod  time.Time
	card Card
}

// Cards returns the cards of fsys's CardsDir, sorted by id, without Src and
// Doc.
func (h *CardHeads) Cards(fsys fs.FS) ([]Card, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := map[string]cardHead{}
	cards, err := readCards(fsys, func(e fs.DirEntry, p string) (Card, bool, error) {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return Card{}, false, nil // removed since the listing
		}
		if err != nil {
			return Card{}, false, err
		}
		head, ok := h.cards[e.Name()]
		if !ok || head.size != info.Size() || !head.mod.Equal(info.ModTime()) {
			src, err := fs.ReadFile(fsys, p)
			if errors.Is(err, fs.ErrNotExist) {
				return Card{}, false, nil
			}
			if err != nil {
				return Card{}, false, err
			}
			c := parseCard(p, src)
			c.Src, c.Doc = nil, markdown.Document{}
			head = cardHead{size: info.Size(), mod: info.ModTime(), card: c}
		}
		next[e.Name()] = head
		return head.card, true, nil
	})
	if err != nil {
		return nil, err
	}
	h.cards = next
	return cards, nil
}

func parseCard(p string, src []byte) Card {
	doc := markdown.Parse(src)
	c := Card{Path: p, Src: src, Doc: doc, ID: strings.TrimSuffix(path.Base(p), ".md")}
	fm := doc.Frontmatter
	if s, ok := fm["id"].(string); ok && strings.TrimSpace(s) != "" {
		c.ID = strings.TrimSpace(s)
	}
	c.Title, _ = fm["title"].(string)
	c.Status, _ = fm["status"].(string)
	switch d := fm["depends_on"].(type) {
	case []any:
		for _, v := range d {
			if s := strings.TrimSpace(fmt.Sprint(v)); s != "" {
				c.DependsOn = append(c.DependsOn, s)
			}
		}
	case string:
		for _, s := range strings.FieldsFunc(d, func(r rune) bool { return r == ',' || r == ' ' }) {
			c.DependsOn = append(c.DependsOn, s)
		}
	}
	return c
}

// Root picks the scene's root card: the one named id (by id or file name),
// else the only card with status active. With several active cards the
// error lists them.
func Root(cards []Card, id string) (Card, error) {
	if id != "" {
		for _, c := range cards {
			if c.ID == id || strings.TrimSuffix(path.Base(c.Path), ".md") == id {
				return c, nil
			}
		}
		return Card{}, fmt.Errorf("%w: %q (looked in %s)", ErrCardNotFound, id, CardsDir)
	}
	var active []Card
	for _, c := range cards {
		if strings.EqualFold(c.Status, "active") {
			active = append(active, c)
		}
	}
	switch len(active) {
	case 0:
		return Card{}, ErrNoActiveCard
	case 1:
		return active[0], nil
	}
	ids := make([]string, len(active))
	for i, c := range active {
		ids[i] = c.ID
	}
	return Card{}, fmt.Errorf("%w: %d cards are active (%s); name one: cue scene CARD_ID", ErrSeveralActive, len(active), strings.Join(ids, ", "))
}

// Resolve maps a link or @ref in file from to the workspace-relative path
// it names, trying each candidate in turn and keeping the first that exists
// in fsys. A markdown link is relative to the linking file; a ref is
// relative to the workspace root, then to .cuedeck, and "@doc/x" means
// .cuedeck/docs/x; ".md" may be omitted. It returns "" and false when no
// candidate exists or every candidate would leave the workspace.
func Resolve(fsys fs.FS, from string, l markdown.Link) (string, bool) {
	for _, c := range Candidates(from, l) {
		if st, err := fs.Stat(fsys, c); err == nil && !st.IsDir() {
			return c, true
		}
	}
	return "", false
}

// Candidates lists the paths Resolve tries, cleaned and inside the
// workspace; a target that climbs out of the workspace has none.
func Candidates(from string, l markdown.Link) []string {
	t := strings.TrimSpace(l.Target)
	if t == "" {
		return nil
	}
	var bases []string
	switch l.Kind {
	case markdown.KindLink:
		if strings.HasPrefix(t, "/") {
			bases = []string{t}
		} else {
			bases = []string{path.Join(path.Dir(from), t)}
		}
	case markdown.KindRef:
		t = strings.TrimPrefix(t, "./")
		bases = []string{t, ".cuedeck/" + t}
		if rest, ok := strings.CutPrefix(t, "doc/"); ok {
			bases = append(bases, DocsDir+"/"+rest)
		}
		if rest, ok := strings.CutPrefix(t, "card/"); ok {
			bases = append(bases, CardsDir+"/"+rest)
		}
	default:
		return nil
	}
	var out []string
	for _, b := range bases {
		b = path.Clean(b)
		if b == ".." || strings.HasPrefix(b, "../") {
			continue // climbs out of the workspace
		}
		b = strings.TrimPrefix(b, "/")
		if b == "" || b == "." || !fs.ValidPath(b) {
			continue
		}
		out = append(out, b)
		if !strings.HasSuffix(strings.ToLower(b), ".md") {
			out = append(out, b+".md")
		}
	}
	return out
}
