package status

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// EdgeAgreement compares what an edge serves with what cue_docs holds, at
// one revision of the bucket.
type EdgeAgreement struct {
	// Revision is the cue_docs revision both were read at; 0 when they
	// could not be caught at the same one (Moving).
	Revision uint64 `json:"revision"`
	// Moving is true when the bucket kept changing, or the edge kept
	// catching up, for as long as the comparison waited: nothing was
	// compared.
	Moving bool            `json:"moving,omitempty"`
	Repos  []RepoAgreement `json:"repos,omitempty"`
}

// RepoAgreement is one repo's documents in cue_docs and at the edge.
type RepoAgreement struct {
	Repo   string `json:"repo"`
	Bucket int    `json:"bucket_docs"`
	Edge   int    `json:"edge_docs"`
	Agree  bool   `json:"agree"`
}

// Problem says how r's documents differ.
func (r RepoAgreement) Problem() string {
	if r.Bucket == r.Edge {
		return fmt.Sprintf("the edge serves %s documents, as many as cue_docs holds, but not the same ones or not the same contents", humanize.Thousands(r.Edge))
	}
	return fmt.Sprintf("cue_docs holds %s indexed documents, the edge serves %s", humanize.Thousands(r.Bucket), humanize.Thousands(r.Edge))
}

// Disagreeing is the repos whose documents differ.
func (a EdgeAgreement) Disagreeing() []RepoAgreement {
	var out []RepoAgreement
	for _, r := range a.Repos {
		if !r.Agree {
			out = append(out, r)
		}
	}
	return out
}

// EdgeRemedy is what brings an edge that disagrees with cue_docs back in
// line: at start it compares its store with the bucket and rebuilds a
// store that differs.
const EdgeRemedy = "restart the daemon (`cue down`, then `cue up`; a team edge: restart mcp-edge): at start the edge compares its store with cue_docs and rebuilds it from cue_docs when they differ"

// compareWait bounds how long CompareEdge waits for the bucket and the edge
// to stand at one revision.
const compareWait = 5 * time.Second

// CompareEdge asks the edge serving client's prefix what it holds of
// cue_docs and compares it, repo by repo, with the bucket's indexed
// documents (key and content sha256) at the same revision. While
// indexing moves the bucket it retries, up to a few seconds, and then
// says it is moving rather than compare two different moments.
// repos are the repos cue_docs is known to hold (Report.Repos); those the
// edge holds are compared as well.
func CompareEdge(ctx context.Context, js jetstream.JetStream, client *query.Client, repos []string) (EdgeAgreement, error) {
	ctx, cancel := context.WithTimeout(ctx, compareWait)
	defer cancel()
	stream, err := js.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		return EdgeAgreement{}, fmt.Errorf("status: bucket %s: %w", events.DocsBucket, err)
	}
	head := func() (uint64, error) {
		info, err := stream.Info(ctx)
		if err != nil {
			return 0, err
		}
		return info.State.LastSeq, nil
	}
	// The wait's end is the answer "moving", unless what failed is the
	// edge itself.
	giveUp := func(err error) (EdgeAgreement, error) {
		if ctx.Err() != nil && !errors.Is(err, query.ErrNoEdge) {
			return EdgeAgreement{Moving: true}, nil
		}
		return EdgeAgreement{}, err
	}
	pause := 20 * time.Millisecond
	for {
		before, err := head()
		if err != nil {
			return giveUp(err)
		}
		held, err := query.AskEdgeDocs(ctx, client)
		if err != nil {
			return giveUp(err)
		}
		if held.Revision == before {
			a, same, err := compareAt(ctx, js, head, before, held, repos)
			if err != nil {
				return giveUp(err)
			}
			if same {
				return a, nil
			}
		}
		select {
		case <-ctx.Done():
			return EdgeAgreement{Moving: true}, nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// CompareServingEdge is CompareEdge for the edge serving the query prefix
// over conn, with the repos rep counts.
func CompareServingEdge(ctx context.Context, conn *bus.Conn, prefix string, rep Report) (EdgeAgreement, error) {
	client, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: prefix, Timeout: 5 * time.Second})
	if err != nil {
		return EdgeAgreement{}, err
	}
	repos := make([]string, len(rep.Repos))
	for i, r := range rep.Repos {
		repos[i] = r.Repo
	}
	return CompareEdge(ctx, conn.JS, client, repos)
}

// compareAt reads the bucket's summaries and compares them with held,
// read at revision rev; same is false when the bucket moved meanwhile.
func compareAt(ctx context.Context, js jetstream.JetStream, head func() (uint64, error), rev uint64, held events.EdgeDocs, known []string) (EdgeAgreement, bool, error) {
	repos := append(slices.Sorted(maps.Keys(held.Repos)), known...)
	slices.Sort(repos)
	repos = slices.Compact(repos)
	sums, err := ingest.ReadDocSummaries(ctx, js, repos)
	if err != nil {
		return EdgeAgreement{}, false, err
	}
	if after, err := head(); err != nil || after != rev {
		return EdgeAgreement{}, false, err
	}
	bucket := map[string]*events.DocSet{}
	for key, sum := range sums {
		if sum.Deleted || sum.Skip != "" {
			continue
		}
		repo, _, err := events.ParseDocKey(key)
		if err != nil {
			continue
		}
		s := bucket[repo]
		if s == nil {
			s = &events.DocSet{}
			bucket[repo] = s
		}
		s.Add(key, sum.SHA256)
	}
	a := EdgeAgreement{Revision: rev}
	for _, repo := range repos {
		var b events.DocSet
		if s := bucket[repo]; s != nil {
			b = *s
		}
		e := held.Repos[repo]
		a.Repos = append(a.Repos, RepoAgreement{Repo: repo, Bucket: b.Docs, Edge: e.Docs, Agree: b.Equal(e)})
	}
	return a, true, nil
}
