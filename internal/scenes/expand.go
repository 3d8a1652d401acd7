package scenes

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/outline"
	"github.com/cuedeck/cuedeck/pkg/core/scene"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// ErrUnknownNode is returned by Expand for an id no path of the workspace
// hashes to.
var ErrUnknownNode = errors.New("no directory or file of the workspace has this expand id")

// maxExpandDepth bounds the search for an expand id: the horizon shows two
// levels, and an expansion shows one more, whose entries may be expanded
// in turn.
const maxExpandDepth = 8

// Expand answers an `[expand: node_…]` of a scene's horizon: the directory
// the id names, one entry per line with its own expand id, or the file it
// names, passed through the security guard: whole, or when it is longer
// than budget tokens, as its outline (package outline) if that fits, else
// cut at budget tokens.
// Hidden and vendored directories are never searched.
func Expand(fsys fs.FS, id string, budget int) (string, error) {
	if budget <= 0 {
		budget = scene.DefaultBudget
	}
	target, isDir, ok := findNode(fsys, ".", id, 0)
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrUnknownNode, id)
	}
	var b strings.Builder
	if !isDir {
		src, err := fs.ReadFile(fsys, target)
		if err != nil {
			return "", err
		}
		text, _ := guard.Redact(string(src))
		fmt.Fprintf(&b, "# %s\n\n", target)
		if tokens.Count(b.String()+text) > budget {
			// Too long whole: its outline, if it has one that fits.
			if o, ok := outline.Render(target, []byte(text)); ok {
				page := b.String() + o + "\n[outline: the file exceeds the token limit; its line ranges point into the file]\n"
				if tokens.Count(page) <= budget {
					return page, nil
				}
			}
		}
		for _, line := range strings.SplitAfter(text, "\n") {
			if tokens.Count(b.String()+line) > budget {
				b.WriteString("\n[truncated: the file exceeds the token limit; read_doc reads it by section]\n")
				break
			}
			b.WriteString(line)
		}
		return b.String(), nil
	}
	ents, err := fs.ReadDir(fsys, target)
	if err != nil {
		return "", err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].IsDir() && !ents[j].IsDir() })
	fmt.Fprintf(&b, "# %s/\n\n", target)
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || skipDir[name] {
			continue
		}
		p := path.Join(target, name)
		if e.IsDir() {
			p += "/"
		}
		fmt.Fprintf(&b, "- %s [expand: %s]\n", p, scene.NodeID(p))
	}
	out, _ := guard.Redact(b.String())
	return out, nil
}

// findNode walks dir for the path whose NodeID is id.
func findNode(fsys fs.FS, dir, id string, depth int) (p string, isDir, ok bool) {
	if depth > maxExpandDepth {
		return "", false, false
	}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return "", false, false
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || skipDir[name] {
			continue
		}
		p := path.Join(dir, name)
		if scene.NodeID(p) == id {
			return p, e.IsDir(), true
		}
		if e.IsDir() {
			if found, d, ok := findNode(fsys, p, id, depth+1); ok {
				return found, d, true
			}
		}
	}
	return "", false, false
}
