package events

import "time"

// EmbedCostBucket is the KV bucket of EmbedCost records, one per model
// under ModelKey(model): what embedding with that model has cost so far.
// Every embed worker of the model adds what it spent, with compare-and-set,
// so the record sums them all, across restarts.
const EmbedCostBucket = "cue_embed_cost"

// EmbedCost is the value under a model's key in EmbedCostBucket, plain JSON.
//
// Its publishers are the embed workers, every few seconds while they
// embed and when they stop; its reader is `cue status`. Written best
// effort: a lost update undercounts, nothing depends on it.
type EmbedCost struct {
	Model string `json:"model"`
	// Chunks is the chunks embedded (found in no vector cache), Texts the
	// texts the model was given for them (a long chunk is embedded in
	// windows, each one text).
	Chunks uint64 `json:"chunks"`
	Texts  uint64 `json:"texts"`
	// CPUSeconds is the CPU time the model spent on this machine's cores
	// (cpumeter), for the Chunks whose model ran here; MeteredChunks counts
	// those. A model on its own server (Ollama) spends its CPU there, and
	// its chunks are not among them.
	CPUSeconds    float64 `json:"cpu_seconds"`
	MeteredChunks uint64  `json:"metered_chunks"`
	// CallSeconds is the time the workers waited on the model's answers,
	// summed over calls made at once.
	CallSeconds float64 `json:"call_seconds"`
	// Since is when the first of these was counted, Updated the last.
	Since   time.Time `json:"since"`
	Updated time.Time `json:"updated"`
}

// Add returns c with d's counts added to it and the later Updated.
func (c EmbedCost) Add(d EmbedCost) EmbedCost {
	c.Chunks += d.Chunks
	c.Texts += d.Texts
	c.CPUSeconds += d.CPUSeconds
	c.MeteredChunks += d.MeteredChunks
	c.CallSeconds += d.CallSeconds
	if c.Since.IsZero() || !d.Since.IsZero() && d.Since.Before(c.Since) {
		c.Since = d.Since
	}
	if d.Updated.After(c.Updated) {
		c.Updated = d.Updated
	}
	if c.Model == "" {
		c.Model = d.Model
	}
	return c
}

// CPUPer10kChunks is the CPU seconds per 10,000 metered chunks, and false
// when none were metered.
func (c EmbedCost) CPUPer10kChunks() (float64, bool) {
	if c.MeteredChunks == 0 {
		return 0, false
	}
	return c.CPUSeconds / float64(c.MeteredChunks) * 10000, true
}
