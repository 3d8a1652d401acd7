// Package edge is the query side of CueDeck: it materialises the indexers'
// DocRecords from the cue_docs bucket into a local Badger and an in-memory
// keyword index, and answers agents' read_context and read_doc calls from
// them. The MCP server and the NATS query service expose an Edge as a
// tools.Caller; cmd/cue-edge and `cue up` wire it to JetStream.
package edge
