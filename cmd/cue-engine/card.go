package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// errUnknownDependency is returned by `cue card new` for a --depends-on id
// no card in the workspace has.
var errUnknownDependency = errors.New("unknown dependency")

func cmdCard(args []string) error {
	if len(args) == 0 || args[0] != "new" {
		return errors.New("usage: cue card new TITLE [--priority P] [--tags a,b] [--depends-on id,id] [--assignee X]")
	}
	fs, c := newFlags("card new")
	priority := fs.String("priority", card.DefaultPriority, "priority: "+strings.Join(card.Priorities, ", "))
	tags := fs.String("tags", "", "comma-separated tags")
	deps := fs.String("depends-on", "", "comma-separated ids of the tasks this one depends on")
	assignee := fs.String("assignee", "", "who the task is assigned to")
	// The title comes first, flags after it (cue card new "Fix login" --priority high),
	// or the other way round.
	rest := args[1:]
	var title []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		title = append(title, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	t := strings.TrimSpace(strings.Join(title, " "))
	if t == "" {
		return errors.New("cue card new: give the task a title")
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	p, err := newCard(ws.Root, cardOptions{Title: t, Priority: *priority, Tags: splitList(*tags),
		DependsOn: splitList(*deps), Assignee: *assignee}, time.Now())
	if err != nil {
		return err
	}
	fmt.Println(p)
	return nil
}

type cardOptions struct {
	Title     string
	Priority  string
	Tags      []string
	DependsOn []string
	Assignee  string
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// newCard writes a todo card for o under root's cards directory and returns
// its repository-relative path. Dependencies must name existing cards
// (errUnknownDependency otherwise); the file is created exclusively, so an
// existing card is never overwritten.
func newCard(root string, o cardOptions, now time.Time) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	known, err := existingIDs(r)
	if err != nil {
		return "", err
	}
	for _, d := range o.DependsOn {
		if !known[d] {
			return "", fmt.Errorf("cue card new: %w %q: no card in %s has that id", errUnknownDependency, d, card.Dir)
		}
	}
	now = now.UTC().Truncate(time.Second)
	id := tasks.NewID(now, o.Title, func(id string) bool {
		if known[id] {
			return true
		}
		_, err := r.Stat(card.Path(id))
		return err == nil
	})
	t := events.Task{ID: id, Title: o.Title, Status: card.DefaultStatus, Priority: o.Priority,
		Assignee: o.Assignee, Tags: o.Tags, DependsOn: o.DependsOn, Created: now, Updated: now}
	data, err := card.Render(card.Card{Task: t, Body: "\n"})
	if err != nil {
		return "", fmt.Errorf("cue card new: %w", err)
	}
	if err := r.MkdirAll(card.Dir, 0o755); err != nil {
		return "", err
	}
	p := card.Path(id)
	f, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return p, f.Close()
}

// existingIDs are the ids of the cards under root: those their frontmatter
// declares, and the file names, so that a broken card still reserves its id.
func existingIDs(r *os.Root) (map[string]bool, error) {
	ids := map[string]bool{}
	entries, err := fs.ReadDir(r.FS(), card.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ids, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".md" {
			continue
		}
		ids[strings.TrimSuffix(e.Name(), ".md")] = true
		data, err := r.ReadFile(path.Join(card.Dir, e.Name()))
		if err != nil {
			continue
		}
		if c, err := card.Parse(data); err == nil {
			ids[c.Task.ID] = true
		}
	}
	return ids, nil
}
