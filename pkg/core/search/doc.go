// Package search is the keyword index an edge uses to answer read_context in
// keyword mode, and the keyword half of hybrid mode. Documents are split into
// fields (path, title, headings, body), tokenized and stemmed, and ranked with
// BM25F; a query word that matches nothing is widened to indexed words one or
// two typos away.
//
// The package is pure: it holds everything in memory and imports no NATS,
// Badger, network or filesystem code. The edge feeds it from the cue_docs
// bucket and rebuilds it on replay.
package search
