// Package edge is the query side of CueDeck: it materialises the indexers'
// DocRecords from the cue_docs bucket, and the chunk vectors of its
// embedding model from cue_vectors, into a local Badger and in-memory
// keyword and vector indexes, and answers agents' read_context (keyword,
// semantic, hybrid, rrf, and the import and link graph for structural
// questions) and read_doc calls from them, each hit carrying its file's
// importance in its repo (importance.go), which also serves get_scene's
// packing order. It also follows the extractors'
// cue_memories into memory (a keyword index and one vector per memory) for
// search_memories and the scenes' recent decisions (RecentDecisions), and
// answers the stateless prune_conversation. With a tasks.Board
// (WithBoard) it also serves the task tools, writing through the board's
// optimistic appends. The MCP server and the NATS query service expose an
// Edge as a tools.Caller; cmd/mcp-edge and `cue up` wire it to JetStream.
package edge
