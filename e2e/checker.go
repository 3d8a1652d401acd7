package e2e

import (
	"fmt"
	"slices"
	"strings"
)

// Version names one version of one document: repo, path and a content
// hash, written repo/path@hash.
type Version struct {
	Repo, Path, Hash string
}

// Key is the document's identity, whichever its version.
func (v Version) Key() string { return v.Repo + "/" + v.Path }

func (v Version) String() string { return v.Key() + "@" + v.Hash }

// Checker compares what the cluster acknowledged with what it shows. A
// scenario records every version JetStream acknowledged (Ack, in publish
// order) and every observation of a version: a read_doc answer, a cue_docs
// record, or one write seen on cue_docs' stream (Observe, once per sighting
// that counts). Only the newest acknowledged version of a key is expected
// to be observed: an older one may be overwritten before anyone looks.
type Checker struct {
	acked    map[Version]bool
	latest   map[string]Version // key -> newest acknowledged version
	observed map[Version]int
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	return &Checker{acked: map[Version]bool{}, latest: map[string]Version{}, observed: map[Version]int{}}
}

// Ack records that v was acknowledged. Later calls for the same key make
// their version the one expected.
func (c *Checker) Ack(v Version) {
	c.acked[v] = true
	c.latest[v.Key()] = v
}

// Observe records one sighting of v.
func (c *Checker) Observe(v Version) { c.observed[v]++ }

// Report is the checker's verdict.
type Report struct {
	Acknowledged int // distinct versions acknowledged
	Expected     int // keys whose newest acknowledged version must be seen
	Observed     int // distinct versions observed
	Lost         []string
	Duplicated   []string // versions observed more than once
	Unexpected   []string // versions observed that were never acknowledged
}

// Report compares the acknowledged and the observed sets.
func (c *Checker) Report() Report {
	r := Report{Acknowledged: len(c.acked), Expected: len(c.latest), Observed: len(c.observed)}
	for _, v := range c.latest {
		if c.observed[v] == 0 {
			r.Lost = append(r.Lost, v.String())
		}
	}
	for v, n := range c.observed {
		if !c.acked[v] {
			r.Unexpected = append(r.Unexpected, v.String())
		}
		if n > 1 {
			r.Duplicated = append(r.Duplicated, fmt.Sprintf("%s ×%d", v, n))
		}
	}
	slices.Sort(r.Lost)
	slices.Sort(r.Duplicated)
	slices.Sort(r.Unexpected)
	return r
}

// OK says whether nothing was lost or duplicated.
func (r Report) OK() bool { return len(r.Lost) == 0 && len(r.Duplicated) == 0 }

// String is the one-line summary scenarios print, with the first few
// offenders of each kind.
func (r Report) String() string {
	b := &strings.Builder{}
	fmt.Fprintf(b, "acknowledged=%d expected=%d observed=%d lost=%d duplicated=%d unexpected=%d",
		r.Acknowledged, r.Expected, r.Observed, len(r.Lost), len(r.Duplicated), len(r.Unexpected))
	for _, l := range []struct {
		name string
		s    []string
	}{{"lost", r.Lost}, {"duplicated", r.Duplicated}, {"unexpected", r.Unexpected}} {
		if len(l.s) > 0 {
			fmt.Fprintf(b, "\n  %s: %s", l.name, strings.Join(l.s[:min(len(l.s), 5)], ", "))
		}
	}
	return b.String()
}
