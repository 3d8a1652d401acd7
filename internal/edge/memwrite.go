package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// WithMemoryStore serves save_memory, update_memory and forget_memory, writing through
// st into the cue_memories bucket the edge's materialiser follows.
func WithMemoryStore(st *memstore.Store) Option { return func(e *Edge) { e.memories = st } }

// ProviderAgent names memories an agent saved itself, where extracted
// ones name their LLM or "rules".
const ProviderAgent = "agent"

// appliedWait bounds how long a memory write waits for this edge to
// apply it, so that the caller's next search_memories finds it. The
// write is durable before the wait; a lagging edge only delays it.
const appliedWait = 2 * time.Second

// memoryRepo resolves the repo of a memory write: the one named, else
// the edge's default; either must be one the caller may read.
func (e *Edge) memoryRepo(ctx context.Context, tool, named string) (string, error) {
	id := access.FromContext(ctx)
	repo := named
	if repo == "" {
		repo = e.defaultRepo
	}
	switch {
	case repo == "":
		return "", tools.InvalidParams(tool, "repo: this edge has no default repo; name the repo the memory belongs to")
	case !id.MayRead(repo):
		e.refused(id, tool, "repo not readable by this client", "repo", repo)
		return "", tools.InvalidParams(tool, fmt.Sprintf("repo %q: not a repo this client may read; name one of its repos", repo))
	}
	return repo, nil
}

// saveMemory stores what an agent asked to remember as the extractor
// stores what it finds: secrets redacted, keyed by the dedup hash of the
// words, decided against the memory already there by compare-and-set.
// The same words saved again stay one memory; words once forgotten stay
// forgotten. The memories it supersedes must be live memories of the
// repo (else MemoryNotFound, 1001): they become history.
func (e *Edge) saveMemory(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	valid, err := tools.Validate(tools.SaveMemory, raw)
	if err != nil {
		return nil, err
	}
	a, err := decodeArgs[tools.SaveMemoryArgs](tools.SaveMemory, valid)
	if err != nil {
		return nil, err
	}
	repo, err := e.memoryRepo(ctx, tools.SaveMemory, a.Repo)
	if err != nil {
		return nil, err
	}
	res, err := e.storeMemory(ctx, tools.SaveMemory, repo, a)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// updateMemory corrects a live memory: the new words are saved as
// save_memory saves them, superseding the old memory, which stays as
// history linked both ways. Kind, rationale, files and tags not given are
// the old memory's.
func (e *Edge) updateMemory(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	valid, err := tools.Validate(tools.UpdateMemory, raw)
	if err != nil {
		return nil, err
	}
	a, err := decodeArgs[tools.UpdateMemoryArgs](tools.UpdateMemory, valid)
	if err != nil {
		return nil, err
	}
	repo, err := e.memoryRepo(ctx, tools.UpdateMemory, a.Repo)
	if err != nil {
		return nil, err
	}
	old, found, err := e.memories.Get(ctx, repo, a.Hash)
	if err != nil {
		return nil, err
	}
	if !found || !old.Forgotten.IsZero() {
		return nil, tools.MemoryNotFound(repo, a.Hash)
	}
	save := tools.SaveMemoryArgs{Kind: a.Kind, Text: a.Text, Repo: repo, Supersedes: []string{a.Hash}}
	if save.Kind == "" {
		save.Kind = string(old.Kind)
	}
	if save.Rationale = old.Rationale; a.Rationale != nil {
		save.Rationale = *a.Rationale
	}
	if save.Files = old.FilesTouched; a.Files != nil {
		save.Files = a.Files
	}
	if save.Tags = old.Tags; a.Tags != nil {
		save.Tags = a.Tags
	}
	res, err := e.storeMemory(ctx, tools.UpdateMemory, repo, save)
	if err != nil {
		return nil, err
	}
	return json.Marshal(tools.UpdateMemoryResult{SaveMemoryResult: res, Supersedes: a.Hash})
}

// storeMemory is what save_memory and update_memory share: a, an
// agent's memory of repo, stored as extracted ones are.
func (e *Edge) storeMemory(ctx context.Context, tool, repo string, a tools.SaveMemoryArgs) (tools.SaveMemoryResult, error) {
	if strings.TrimSpace(a.Text) == "" {
		return tools.SaveMemoryResult{}, tools.InvalidParams(tool, "text: write what to remember, not only spaces")
	}
	now := e.clock.Now().UTC()
	rec := events.MemoryRecord{
		Memory: memory.Memory{
			Kind: memory.Kind(a.Kind), Confidence: tools.SavedConfidence, Repo: repo,
			Session: access.FromContext(ctx).Session, Provider: ProviderAgent, CreatedAt: now, UpdatedAt: now,
		},
		// Each save is its own batch: saving known words again counts
		// as the memory said again.
		Batch: tool + ":" + uuid.NewString(),
	}
	rec.Content, _ = guard.Redact(strings.TrimSpace(a.Text))
	rec.Rationale, _ = guard.Redact(strings.TrimSpace(a.Rationale))
	for _, f := range a.Files {
		f, _ = guard.Redact(f)
		rec.FilesTouched = append(rec.FilesTouched, f)
	}
	for _, tag := range a.Tags {
		if tag, _ = guard.Redact(strings.TrimSpace(tag)); !slices.Contains(rec.Tags, tag) {
			rec.Tags = append(rec.Tags, tag)
		}
	}
	for _, h := range a.Supersedes {
		if h == memory.Hash(rec.Content) {
			return tools.SaveMemoryResult{}, tools.InvalidParams(tool, "supersedes: a memory cannot supersede itself; write the corrected words, or give the hashes of earlier memories")
		}
		old, found, err := e.memories.Get(ctx, repo, h)
		if err != nil {
			return tools.SaveMemoryResult{}, err
		}
		if !found || !old.Forgotten.IsZero() {
			return tools.SaveMemoryResult{}, tools.MemoryNotFound(repo, h)
		}
	}
	rec.Supersedes = dedupe(a.Supersedes)
	d, rev, err := e.memories.PutRevision(ctx, rec)
	if errors.Is(err, events.ErrMalformed) {
		return tools.SaveMemoryResult{}, tools.InvalidParams(tool, err.Error())
	}
	if err != nil {
		return tools.SaveMemoryResult{}, err
	}
	e.awaitMemory(ctx, rev)
	action := "unchanged"
	switch {
	case d.Action == memory.ActionInsert:
		action = "saved"
	case d.Action == memory.ActionUpdate:
		action = "updated"
	case d.Reason == memstore.ReasonForgotten:
		action = "forgotten"
	}
	return tools.SaveMemoryResult{Hash: d.Hash, Repo: repo, Kind: a.Kind, Action: action}, nil
}

// forgetMemory replaces a memory with its tombstone (memstore.Forget):
// every edge drops it from search, scenes and hook context. An unknown
// hash is MemoryNotFound (1001); forgetting twice answers the first time.
func (e *Edge) forgetMemory(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	valid, err := tools.Validate(tools.ForgetMemory, raw)
	if err != nil {
		return nil, err
	}
	a, err := decodeArgs[tools.ForgetMemoryArgs](tools.ForgetMemory, valid)
	if err != nil {
		return nil, err
	}
	repo, err := e.memoryRepo(ctx, tools.ForgetMemory, a.Repo)
	if err != nil {
		return nil, err
	}
	tomb, rev, err := e.memories.Forget(ctx, repo, a.Hash, e.clock.Now())
	if errors.Is(err, memstore.ErrNotFound) {
		return nil, tools.MemoryNotFound(repo, a.Hash)
	}
	if err != nil {
		return nil, err
	}
	e.awaitMemory(ctx, rev)
	e.logger.Info("memory forgotten", "repo", repo, "hash", a.Hash, "client", access.FromContext(ctx).Client)
	return json.Marshal(tools.ForgetMemoryResult{Hash: a.Hash, Repo: repo, Forgotten: tomb.Forgotten.UTC().Format(time.RFC3339)})
}

// awaitMemory waits, at most appliedWait, until this edge has applied
// the cue_memories revision rev.
func (e *Edge) awaitMemory(ctx context.Context, rev uint64) {
	if e.m == nil || rev == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, appliedWait)
	defer cancel()
	_ = e.m.WaitMemoryRevision(wctx, rev)
}
