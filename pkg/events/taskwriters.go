package events

import (
	"encoding/base64"
	"time"
)

// TaskWritersBucket is the KV bucket of task-writer leases, one per repo
// under TaskWriterKey: the value is the NATS subject on which the edge
// holding the lease takes the repo's task writes. Edges forward their
// clients' writes there, so that one edge batches a repo's writes rather
// than several racing for the log's last sequence. A lease only routes:
// every write still expects the log's last sequence, so two edges that
// both believe they hold a lease stay correct, only slower.
const TaskWritersBucket = "cue_task_writers"

// TaskWriterLease is how long a lease lasts without renewal: the bucket's
// TTL. The holder renews at a third of it.
const TaskWriterLease = 6 * time.Second

// TaskWriterKey is repo's key in TaskWritersBucket: repo names may hold
// characters KV keys may not.
func TaskWriterKey(repo string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(repo))
}
