package scenes

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
	"time"
)

// countingFS counts the files opened through it.
type countingFS struct {
	fstest.MapFS
	opened []string
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opened = append(c.opened, name)
	return c.MapFS.Open(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.opened = append(c.opened, name)
	return c.MapFS.ReadFile(name)
}

// CardHeads lists the cards Cards lists, reads a card again only when its
// size or modification time changed, and forgets a card removed.
func TestCardHeadsReadOnlyChangedCards(t *testing.T) {
	at := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	card := func(id, status string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nid: " + id + "\ntitle: Task " + id + "\nstatus: " + status + "\n---\n"), ModTime: at}
	}
	fsys := &countingFS{MapFS: fstest.MapFS{
		CardsDir + "/a.md": card("a", "todo"),
		CardsDir + "/b.md": card("b", "active"),
		CardsDir + "/c.md": card("c", "done"),
	}}
	var heads CardHeads
	summary := func() []string {
		t.Helper()
		cards, err := heads.Cards(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cards {
			if c.Src != nil {
				t.Errorf("card %s carries its source", c.ID)
			}
			out = append(out, c.ID+":"+c.Status+":"+c.Path)
		}
		return out
	}
	want := []string{"a:todo:" + CardsDir + "/a.md", "b:active:" + CardsDir + "/b.md", "c:done:" + CardsDir + "/c.md"}
	if got := summary(); !slices.Equal(got, want) {
		t.Fatalf("first read: %v, want %v", got, want)
	}
	all, err := Cards(fsys.MapFS)
	if err != nil || len(all) != 3 || all[1].Status != "active" {
		t.Fatalf("Cards: %+v, %v", all, err)
	}

	fsys.opened = nil
	if got := summary(); !slices.Equal(got, want) {
		t.Fatalf("second read: %v, want %v", got, want)
	}
	for _, name := range fsys.opened {
		if name != CardsDir {
			t.Fatalf("nothing changed, yet %s was read again (opened: %v)", name, fsys.opened)
		}
	}

	fsys.opened = nil
	changed := card("a", "active")
	changed.ModTime = at.Add(time.Second)
	fsys.MapFS[CardsDir+"/a.md"] = changed
	delete(fsys.MapFS, CardsDir+"/c.md")
	want = []string{"a:active:" + CardsDir + "/a.md", "b:active:" + CardsDir + "/b.md"}
	if got := summary(); !slices.Equal(got, want) {
		t.Fatalf("after a change and a removal: %v, want %v", got, want)
	}
	if !slices.Contains(fsys.opened, CardsDir+"/a.md") || slices.Contains(fsys.opened, CardsDir+"/b.md") {
		t.Fatalf("opened %v: want the changed a.md read again and b.md not", fsys.opened)
	}
}
