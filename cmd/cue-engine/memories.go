package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuedeck/cuedeck/internal/tools"
)

const memoriesUsage = `usage: cue memories search QUERY [--mode keyword|semantic|hybrid] [--kind K] [--repo R] [--tag T] [--limit N] [--all] [--json]
       cue memories list [--kind K] [--repo R] [--tag T] [--since 2w] [--limit N] [--all] [--json]
       cue memories show HASH [--json]
       cue memories forget HASH [--repo R]`

// cmdMemories reads and forgets what agents remembered, through the
// workspace's running daemon: search with search_memories as an agent
// does, list the newest first, show one whole, forget one with
// forget_memory (a tombstone: extraction does not bring it back).
func cmdMemories(args []string) error {
	if len(args) == 0 {
		return errors.New(memoriesUsage)
	}
	switch args[0] {
	case "search", "list":
		return memoriesFind(args[0], args[1:])
	case "show":
		return memoriesShow(args[1:])
	case "forget":
		return memoriesForget(args[1:])
	}
	return fmt.Errorf("cue memories %s: unknown; %s", args[0], memoriesUsage)
}

// memoriesFind searches (a query, ranked) or lists (newest first).
func memoriesFind(verb string, args []string) error {
	fs, c := newFlags("memories " + verb)
	var f tools.MemoryFilters
	fs.StringVar(&f.Kind, "kind", "", "only this kind: decision, rationale, fact, preference, open_question, experience")
	fs.StringVar(&f.Repo, "repo", "", "only memories of this repo")
	fs.StringVar(&f.Since, "since", "", "only memories updated since a date (2024-01-01) or within an age (2w)")
	fs.Func("tag", "only memories with this tag (repeat for any of several)", func(v string) error {
		f.Tags = append(f.Tags, v)
		return nil
	})
	limit := fs.Int("limit", 20, "memories to print")
	mode := fs.String("mode", "", "keyword, semantic or hybrid (search; default hybrid)")
	asJSON := fs.Bool("json", false, "print the memories as search_memories' hits in JSON")
	history := fs.Bool("all", false, "also memories later ones superseded")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	query := strings.TrimSpace(strings.Join(words, " "))
	if verb == "search" && query == "" || verb == "list" && query != "" {
		return errors.New(memoriesUsage)
	}
	caller, done, err := daemonCaller(c, "cue memories")
	if err != nil {
		return err
	}
	defer done()
	filters := &f
	if f.Kind == "" && f.Repo == "" && f.Since == "" && len(f.Tags) == 0 {
		filters = nil
	}
	var out json.RawMessage
	if verb == "search" {
		ctx, notices := tools.WithNotices(context.Background())
		out, err = callDaemonToolIn(ctx, caller, tools.SearchMemories, tools.SearchMemoriesArgs{Query: query, Mode: *mode, Limit: min(max(*limit, 1), 50), Filters: filters, IncludeSuperseded: *history, Detail: true})
		for _, n := range notices.Texts() {
			fmt.Fprintln(os.Stderr, "cue memories:", n)
		}
	} else {
		out, err = callDaemonTool(caller, tools.ListMemories, tools.ListMemoriesArgs{Filters: filters, Limit: max(*limit, 0), IncludeSuperseded: *history})
	}
	if err != nil {
		return fmt.Errorf("cue memories %s: %w", verb, err)
	}
	var hits []tools.MemoryHit
	if err := json.Unmarshal(out, &hits); err != nil {
		return fmt.Errorf("cue memories %s: the daemon's answer: %w", verb, err)
	}
	if *asJSON {
		if hits == nil {
			hits = []tools.MemoryHit{}
		}
		b, err := json.Marshal(hits)
		if err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", b)
		return err
	}
	if err := printMemories(os.Stdout, hits); err != nil {
		return err
	}
	if len(hits) == 0 && verb == "search" {
		return fmt.Errorf("no memory matches %q", query)
	}
	return nil
}

// memoriesShow prints one memory whole.
func memoriesShow(args []string) error {
	fs, c := newFlags("memories show")
	asJSON := fs.Bool("json", false, "print the memory as a search_memories hit in JSON")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return errors.New(memoriesUsage)
	}
	caller, done, err := daemonCaller(c, "cue memories")
	if err != nil {
		return err
	}
	defer done()
	m, err := memoryByHash(caller, "show", words[0])
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", b)
		return err
	}
	fmt.Printf("%s  %s\n", m.Hash, m.Kind)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "text\t%s\n", oneLine(m.Content))
	if m.Rationale != "" {
		fmt.Fprintf(tw, "rationale\t%s\n", oneLine(m.Rationale))
	}
	if len(m.FilesTouched) > 0 {
		fmt.Fprintf(tw, "files\t%s\n", strings.Join(m.FilesTouched, ", "))
	}
	if len(m.Tags) > 0 {
		fmt.Fprintf(tw, "tags\t%s\n", strings.Join(m.Tags, ", "))
	}
	if len(m.Supersedes) > 0 {
		fmt.Fprintf(tw, "supersedes\t%s\n", strings.Join(m.Supersedes, ", "))
	}
	if len(m.SupersededBy) > 0 {
		fmt.Fprintf(tw, "superseded by\t%s\n", strings.Join(m.SupersededBy, ", "))
	}
	by := m.Provider
	if m.Model != "" {
		by += " " + m.Model
	}
	fmt.Fprintf(tw, "repo\t%s\nconfidence\t%.2f\nsaid\t%d time(s)\nby\t%s\n", m.Repo, m.Confidence, m.Extractions, by)
	if m.Session != "" {
		fmt.Fprintf(tw, "session\t%s (bytes %d-%d)\n", m.Session, m.Source.Start, m.Source.End)
	}
	fmt.Fprintf(tw, "created\t%s\nupdated\t%s\n", m.CreatedAt.UTC().Format(time.RFC3339), m.UpdatedAt.UTC().Format(time.RFC3339))
	return tw.Flush()
}

// memoriesForget forgets one memory with forget_memory.
func memoriesForget(args []string) error {
	fs, c := newFlags("memories forget")
	repo := fs.String("repo", "", "repo of the memory (default: the daemon's own)")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return errors.New(memoriesUsage)
	}
	caller, done, err := daemonCaller(c, "cue memories")
	if err != nil {
		return err
	}
	defer done()
	hash := words[0]
	if len(hash) < 64 {
		m, err := memoryByHash(caller, "forget", hash)
		if err != nil {
			return err
		}
		hash = m.Hash
		if *repo == "" {
			*repo = m.Repo
		}
	}
	out, err := callDaemonTool(caller, tools.ForgetMemory, tools.ForgetMemoryArgs{Hash: hash, Repo: *repo})
	if err != nil {
		return fmt.Errorf("cue memories forget %s: %w", words[0], err)
	}
	var r tools.ForgetMemoryResult
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("cue memories forget: the daemon's answer: %w", err)
	}
	_, err = fmt.Printf("forgot %s (repo %s) at %s\n", r.Hash, r.Repo, r.Forgotten)
	return err
}

// memoryByHash finds the memory whose hash is or starts with prefix (the
// 12 digits `cue memories list` prints do); none or several is an error
// saying so.
func memoryByHash(caller tools.Caller, verb, prefix string) (tools.MemoryHit, error) {
	if len(prefix) < 6 {
		return tools.MemoryHit{}, fmt.Errorf("cue memories %s %s: give at least 6 digits of the hash", verb, prefix)
	}
	out, err := callDaemonTool(caller, tools.ListMemories, tools.ListMemoriesArgs{Hash: prefix})
	if err != nil {
		return tools.MemoryHit{}, fmt.Errorf("cue memories %s %s: %w", verb, prefix, err)
	}
	var hits []tools.MemoryHit
	if err := json.Unmarshal(out, &hits); err != nil {
		return tools.MemoryHit{}, fmt.Errorf("cue memories %s %s: the daemon's answer: %w", verb, prefix, err)
	}
	switch len(hits) {
	case 0:
		return tools.MemoryHit{}, fmt.Errorf("cue memories %s %s: no such memory (forgotten, or never stored); `cue memories list` shows them", verb, prefix)
	case 1:
		return hits[0], nil
	}
	return tools.MemoryHit{}, fmt.Errorf("cue memories %s %s: %d memories start so; give more digits", verb, prefix, len(hits))
}

// printMemories writes one memory a line: the hash's first 12 digits,
// the kind, the day it was last updated and its words.
func printMemories(w io.Writer, hits []tools.MemoryHit) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range hits {
		words := oneLine(m.Content)
		if len(m.SupersededBy) > 0 {
			words = "(superseded) " + words
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Hash[:min(12, len(m.Hash))], m.Kind, m.UpdatedAt.UTC().Format(time.DateOnly), words)
	}
	return tw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
