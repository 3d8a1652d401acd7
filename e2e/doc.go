// Package e2e runs CueDeck's real images in containers (testcontainers-go,
// reaper disabled) and checks what crosses process and network boundaries.
// `make e2e` builds the images first.
//
// StartCluster (cluster_test.go) is the team topology the fault scenarios
// share: three NATS JetStream servers routed to each other (file storage,
// sync_interval always), indexers, edges (each with its own query prefix,
// EdgePrefix) and optionally ingest on mounted repos, every role with
// --replicas 3; Node.Stop, Kill (SIGKILL), Start, Restart, Disconnect and
// Reconnect inject the faults. Roles run with --embed-model none: embedding
// thousands of files would take a 2-core runner minutes, and the scenarios
// are about delivery, not ranking.
//
// The Checker (checker.go) compares acknowledged versions with observed
// ones and reports lost, duplicated and unexpected versions. Observations
// come from read_doc answers (markdown only: seed 002 limits read_doc to
// .md paths) and from every write on cue_docs' stream (DocsWrites), which
// is where "indexed twice" shows: a second write of the same version.
package e2e
