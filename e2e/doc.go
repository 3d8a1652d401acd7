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
// StartScenario (scenario_test.go) starts a cluster with the watcher and
// the checker every scenario uses.
//
// The scenarios of the team topology, each printing its checkers' counts:
//
//  1. TestClusterIngestEdgesAgree: three repos, 2,000 files; both edges
//     serve every version and answer the same searches byte for byte.
//  2. TestClusterIndexerKilledMidStream: an indexer SIGKILLed mid-batch and
//     restarted; nothing lost, nothing written twice to cue_docs.
//  3. TestClusterNATSNodeStopped: the CUE_INGEST stream leader stopped
//     under steady ingest and queries; publishes retried with their
//     Nats-Msg-Id, the node rejoins with every replica current.
//  4. TestClusterEdgePartitioned: an edge cut off the cluster's network
//     keeps answering, reports its lag, and converges when reconnected.
//  5. TestClusterEdgeVolumeLost: an edge's container and state removed; a
//     new one rebuilds from the buckets and answers byte for byte as before.
//  6. TestClusterExtractorsShareBudget: two extractors against a model
//     server on the host never spend more than their shared daily budget.
//  7. TestClusterLaptopLeaf: a laptop's `cue up` (bin/, on the host) joins
//     as a leaf node with the laptop user's permissions; its files reach
//     the team's edges, and its `cue mcp` answers from them.
//  8. TestClusterDocsBucketRecreated: cue_docs deleted and recreated empty
//     under running roles (a lost store, a restore onto a new cluster);
//     the edges stop, Docker restarts them and they rebuild, ingest
//     publishes again what the bucket lost, and every file's current
//     version is back once.
//  9. TestClusterTaskChainsOnReplicatedLog: two task boards, as two team
//     edges, write one repo at once into the three-replica task log, one
//     event at a time (chains are for single-replica logs); every write
//     lands once and none is built on a state that missed an event.
//  10. TestClusterDocsBucketRestoredFromBackup: cue_docs put back from a
//     backup taken before files were edited (older versions, at
//     revisions below the edges' stores); the edges stop and rebuild,
//     ingest publishes again the edits the restore took back, and an edit
//     made afterwards, at a revision the old stores had passed, reaches
//     both edges.
//  11. TestClusterTaskLogRestoredFromBackup: CUE_TASKS put back from a
//     backup taken before tasks were created and changed over MCP and
//     written back into their cards (the repos mounted read-write); no
//     card is set back, the cards' tasks and states reach the restored
//     log again, both edges list them, and later changes land once.
//
// Besides: TestClusterIngestContainer (the ingest image on mounted repos),
// TestRolesOverContainerNetwork, TestEvalSciFactHybridHoldsKeyword, and
// BenchmarkClusterSteadyIngest (files/s to searchable, freshness and query
// latency at the edges under a steady load), which `make e2e` runs once.
package e2e
