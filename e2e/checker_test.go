package e2e

import (
	"strings"
	"testing"
)

// TestCheckerCounts runs the checker without containers: a lost version, a
// twice-written one, one never acknowledged, and a superseded version that
// nobody saw (not lost: its newer version was seen).
func TestCheckerCounts(t *testing.T) {
	chk := NewChecker()
	v := func(path, hash string) Version { return Version{Repo: "r", Path: path, Hash: hash} }
	chk.Ack(v("a.md", "1"))
	chk.Ack(v("b.md", "1"))
	chk.Ack(v("c.md", "1"))
	chk.Ack(v("c.md", "2"))
	chk.Ack(v("d.md", "1"))
	chk.Observe(v("b.md", "1"))
	chk.Observe(v("b.md", "1"))
	chk.Observe(v("c.md", "2"))
	chk.Observe(v("d.md", "1"))
	chk.Observe(v("e.md", "9"))
	r := chk.Report()
	if r.Acknowledged != 5 || r.Expected != 4 || r.Observed != 4 {
		t.Errorf("counts: %s", r)
	}
	if strings.Join(r.Lost, ",") != "r/a.md@1" {
		t.Errorf("lost %v, want r/a.md@1", r.Lost)
	}
	if strings.Join(r.Duplicated, ",") != "r/b.md@1 ×2" {
		t.Errorf("duplicated %v, want r/b.md@1 ×2", r.Duplicated)
	}
	if strings.Join(r.Unexpected, ",") != "r/e.md@9" {
		t.Errorf("unexpected %v, want r/e.md@9", r.Unexpected)
	}
	if r.OK() {
		t.Error("a report with lost and duplicated versions says OK")
	}
	clean := NewChecker()
	clean.Ack(v("a.md", "1"))
	clean.Observe(v("a.md", "1"))
	if r := clean.Report(); !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("clean run reported %s", r)
	}
}
