package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/card"
)

func TestCardNew(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC)
	p, err := newCard(root, cardOptions{Title: "Design the API", Priority: "high"}, at)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if p != card.Path(c.Task.ID) || c.Task.Status != "todo" || c.Task.Priority != "high" || !c.Task.Created.Equal(at) || !c.Task.Updated.Equal(at) {
		t.Fatalf("card %s: %+v", p, c.Task)
	}

	// Same second, same title: the id is taken, so another comes out.
	p2, err := newCard(root, cardOptions{Title: "Design the API", Priority: "medium", Tags: []string{"auth", "api"},
		DependsOn: []string{c.Task.ID}, Assignee: "@dev"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if p2 == p {
		t.Fatalf("second card overwrote the first: %s", p2)
	}
	data, _ = os.ReadFile(filepath.Join(root, p2))
	c2, err := card.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c2.Task.DependsOn, []string{c.Task.ID}) || !slices.Equal(c2.Task.Tags, []string{"auth", "api"}) || c2.Task.Assignee != "@dev" {
		t.Fatalf("second card: %+v", c2.Task)
	}

	_, err = newCard(root, cardOptions{Title: "x", Priority: "low", DependsOn: []string{"zzzzzz"}}, at)
	if !errors.Is(err, errUnknownDependency) || !strings.Contains(err.Error(), `"zzzzzz"`) {
		t.Fatalf("unknown dependency: err = %v", err)
	}
	_, err = newCard(root, cardOptions{Title: "x", Priority: "urgent"}, at)
	if !errors.Is(err, card.ErrInvalid) {
		t.Fatalf("bad priority: err = %v", err)
	}
}

func TestCardNewCommand(t *testing.T) {
	root := t.TempDir()
	out, err := exec.Command(bin("cue"), "card", "new", "Fix login", "--priority", "critical", "--tags", "auth,web", "--workspace", root).Output()
	if err != nil {
		t.Fatalf("cue card new: %v", err)
	}
	p := strings.TrimSpace(string(out))
	if !strings.HasPrefix(p, ".cuedeck/cards/") {
		t.Fatalf("printed %q", p)
	}
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(data)
	if err != nil || c.Task.Title != "Fix login" || c.Task.Priority != "critical" || len(c.Task.Tags) != 2 {
		t.Fatalf("card %+v, %v", c.Task, err)
	}
	cmd := exec.Command(bin("cue"), "card", "new", "Needs more", "--depends-on", "nosuch", "--workspace", root)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "unknown dependency \"nosuch\"") {
		t.Fatalf("unknown dependency: %v\n%s", err, msg)
	}
}
