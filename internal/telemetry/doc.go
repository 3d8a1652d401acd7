// Package telemetry is the operations face of an edge process (mcp-edge and
// the `cue up` daemon): a Prometheus registry of its own with tool-call,
// materialisation-lag, guard and Go/process metrics; a tools.Caller
// middleware that times every call; a Monitor that compares what the edge
// has materialised with the heads of the buckets and streams it follows;
// an Indexing that keeps how far indexing trails the repositories, for
// read_context's notices; and the HTTP mux that serves /healthz, /readyz and /metrics beside the
// MCP handler at /mcp. docs/operations.md lists the metrics.
package telemetry
