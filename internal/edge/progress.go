package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// Progress is how far indexing trails the repositories, as an edge last
// read it (internal/telemetry's Indexing keeps it, refreshed in the
// background). read_context tells the agent while anything is still to
// come, so that an empty or thin answer on a new workspace is not taken
// for the truth.
type Progress struct {
	// Indexed counts the documents this edge holds, skipped files
	// included: what read_context answers from.
	Indexed int
	// Pending counts the files still to come: found by a running scan and
	// not yet published, waiting for or in the hands of the indexers, or
	// indexed and not yet applied here (an upper bound).
	Pending int
	// Listing is true while a scan is still listing a repo: more files
	// are to come than Pending counts.
	Listing bool
	// Model is the embedding model whose vectors this edge searches, ""
	// for none. Embeddable counts the indexed documents that get vectors
	// (skipped ones do not), Vectors those that have them, VectorsPending
	// the embed requests not yet done.
	Model          string
	Embeddable     int
	Vectors        int
	VectorsPending int
}

// Indexing reports whether files are still to come.
func (p Progress) Indexing() bool { return p.Pending > 0 || p.Listing }

// VectorsTrail reports whether some documents still wait for vectors of
// the edge's model. Requests in flight while every document has vectors
// (removals for skipped files, new vectors for edited ones) do not count.
func (p Progress) VectorsTrail() bool {
	return p.Model != "" && (p.Indexing() || (p.VectorsPending > 0 && p.Vectors < p.Embeddable))
}

// Files is the number of files known: those indexed and those to come.
func (p Progress) Files() int { return p.Indexed + p.Pending }

// Notice is what read_context tells the agent beside its answer in mode
// (keyword, semantic, hybrid, rrf), or "" when there is nothing to say:
// everything is indexed, or only vectors trail and mode does not use
// them. noHits is true when the answer is empty.
func (p Progress) Notice(mode string, noHits bool) string {
	semantic := mode != "" && mode != tools.ModeKeyword
	vectors := ""
	if semantic && p.Model != "" {
		vectors = "; vectors " + humanize.Percent(p.Vectors, p.Embeddable)
	}
	of := "of " + humanize.Thousands(p.Files()) + " files"
	if p.Listing {
		of = "of " + humanize.Thousands(p.Files()) + " files found so far (the scan is still listing the repository)"
	}
	switch {
	case p.Indexing() && noHits:
		return fmt.Sprintf("no match yet: indexing %s %s%s. The answer may be among the files still to come: ask again in a while (`cue status` shows the progress).",
			humanize.Thousands(p.Indexed), of, vectors)
	case p.Indexing():
		return fmt.Sprintf("indexing: %s %s%s. These hits come from the files indexed so far: ask again in a while for a complete answer.",
			humanize.Thousands(p.Indexed), of, vectors)
	case semantic && p.VectorsTrail():
		return fmt.Sprintf("vectors: %s of %s documents (%s); ranking by meaning covers only those so far, keywords cover all.",
			humanize.Thousands(p.Vectors), humanize.Thousands(p.Embeddable), humanize.Percent(p.Vectors, p.Embeddable))
	}
	return ""
}

// WithProgress has read_context tell how far indexing got (Progress.Notice)
// while it runs, as a notice beside the answer (tools.Notify). progress is
// called on every read_context call: it must be as cheap as an atomic load.
func WithProgress(progress func() Progress) Option {
	return func(e *Edge) { e.progress = progress }
}

// noteProgress adds the progress notice of a read_context call with args
// that answered out, if there is one.
func (e *Edge) noteProgress(ctx context.Context, args json.RawMessage, out json.RawMessage) {
	p := e.progress()
	if !p.Indexing() && !p.VectorsTrail() {
		return
	}
	tools.Notify(ctx, p.Notice(searchMode(args), isEmptyArray(out)))
}

// isEmptyArray reports whether raw, an answer as read_context marshals
// it, has no hits; it reads only the ends, so a long answer costs nothing.
func isEmptyArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return string(t) == "[]" || string(t) == "null"
}
