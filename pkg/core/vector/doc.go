// Package vector is the in-memory index of chunk embeddings that semantic
// search scores: per document, the vectors of its chunks with their line
// ranges, kept in one contiguous float32 slab and scanned exhaustively
// (vectors are L2-normalised, so cosine is a dot product). Edges keep one
// Index per embedding model and search it for read_context's semantic,
// hybrid and rrf modes.
package vector
