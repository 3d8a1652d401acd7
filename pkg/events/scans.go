package events

import "time"

// ScansBucket is the KV bucket of ScanProgress records, one per repo under
// its name: how many files ingest's latest full scan found and how many of
// them it has handed to the bus. Only while a scan runs does it tell more
// than the other assets: the files found and not yet published are nowhere
// else.
const ScansBucket = "cue_scans"

// ScanHeartbeat is how often ingest rewrites the ScanProgress of a running
// scan: often, because a file published since the last rewrite is counted
// both as unpublished and in the indexers' backlog. A reader treats a
// running scan's record older than ScanStaleAfter as left behind by an
// ingest that stopped.
const (
	ScanHeartbeat  = 500 * time.Millisecond
	ScanStaleAfter = 30 * time.Second
)

// ScanProgress is the value under a repo's key in ScansBucket, plain JSON.
//
// Its publisher is ingest: when a full scan starts listing the repo, when
// it has listed it, every ScanHeartbeat while it runs, and when it is done. Its readers are the
// edges (read_context says how far indexing got while files are still to
// come) and `cue status`. Ingest writes it best effort: a reader that finds
// none, or an old one, counts only what the streams hold.
type ScanProgress struct {
	Repo string `json:"repo"`
	// Files is how many files the scan found (not ignored).
	Files int `json:"files"`
	// Handled counts those whose event was acknowledged, or that needed
	// none (unchanged since the last publish). Deletions of files the scan
	// did not find are not counted.
	Handled int `json:"handled"`
	// Scanning is true until the scan has handled every file it found;
	// Listing while it is still listing the repo (Files is then 0).
	Scanning bool `json:"scanning"`
	Listing  bool `json:"listing,omitempty"`
}

// Unpublished is how many files the scan found and has not handed to the
// bus yet: 0 once it is done.
func (p ScanProgress) Unpublished() int {
	if !p.Scanning || p.Listing || p.Handled >= p.Files {
		return 0
	}
	return p.Files - p.Handled
}
