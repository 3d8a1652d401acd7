package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Scenario is what every fault scenario starts from: a cluster, a host
// connection to it, the watcher of cue_docs' writes (started before any
// write) and the checker of what JetStream acknowledged.
type Scenario struct {
	Ctx    context.Context
	T      testing.TB
	C      *Cluster
	NC     *nats.Conn
	JS     jetstream.JetStream
	Writes *DocsWrites
	Acked  *Checker
	start  time.Time
}

// StartScenario starts the cluster within a context of timeout (cancelled
// at cleanup) and logs how long the cluster took to come up.
func StartScenario(t testing.TB, timeout time.Duration, opts ClusterOptions) *Scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	s := &Scenario{Ctx: ctx, T: t, Acked: NewChecker(), start: time.Now()}
	s.C = StartCluster(ctx, t, opts)
	t.Logf("cluster up in %s", s.Elapsed())
	s.NC = s.C.Connect(ctx)
	s.JS, _ = jetstream.New(s.NC, jetstream.WithPublishAsyncMaxPending(512))
	s.Writes = WatchDocsWrites(ctx, t, s.JS)
	return s
}

// Elapsed is the time since the scenario started, for its log lines.
func (s *Scenario) Elapsed() time.Duration { return time.Since(s.start).Round(time.Millisecond) }

// Ingest publishes files and waits until cue_docs holds a write of every
// version acknowledged so far and every edge serves files' markdown.
func (s *Scenario) Ingest(files []File, timeout time.Duration) {
	s.T.Helper()
	Publish(s.Ctx, s.T, s.JS, files, s.Acked)
	waitWrites(s.Ctx, s.T, s.Writes, len(s.Acked.acked), timeout)
	for i := range s.C.Edges {
		waitEdgeServes(s.Ctx, s.T, s.C, s.NC, i, markdown(files), timeout)
	}
}

// CheckWrites runs the set checker on cue_docs' writes against every
// acknowledged version, prints its counts and fails the test on anything
// lost, duplicated or unexpected.
func (s *Scenario) CheckWrites() Report {
	s.T.Helper()
	kv := NewChecker()
	for v := range s.Acked.acked {
		kv.Ack(v)
	}
	s.Writes.ObserveInto(kv)
	r := kv.Report()
	s.T.Logf("checker cue_docs writes: %s", r)
	if !r.OK() || len(r.Unexpected) > 0 {
		s.T.Errorf("cue_docs writes: %s", r)
	}
	return r
}

// Done logs the scenario's duration.
func (s *Scenario) Done() { s.T.Logf("scenario took %s", s.Elapsed()) }
