package events

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Headers on every cue_docs entry, summarising its DocRecord so that a
// reader comparing the bucket with the files (ingest's reconcile) can read
// headers only instead of every record.
const (
	HeaderDocSHA256 = "Cue-Doc-Sha256"
	HeaderDocSeq    = "Cue-Doc-Source-Seq"
	// HeaderDocState is DocIndexed, DocDeleted, or DocSkipped followed by
	// ":" and the skip reason.
	HeaderDocState = "Cue-Doc-State"
	// HeaderDocKind, HeaderDocTokens, HeaderDocWarnings (a JSON array)
	// and HeaderDocSkipDetail (a JSON string) carry what `cue status`
	// counts, so it too reads headers alone; HeaderDocSummary says an
	// entry carries them all (entries written before do not).
	HeaderDocKind       = "Cue-Doc-Kind"
	HeaderDocTokens     = "Cue-Doc-Tokens"
	HeaderDocWarnings   = "Cue-Doc-Warnings"
	HeaderDocSkipDetail = "Cue-Doc-Skip-Detail"
	HeaderDocSummary    = "Cue-Doc-Summary"
)

// docSummaryVersion is HeaderDocSummary's value: every header above.
const docSummaryVersion = "2"

// maxSummaryHeaders bounds the warnings and skip detail carried in
// headers; a record with more is summarised incomplete and read whole by
// whoever needs them.
const maxSummaryHeaders = 4 << 10

// Values of HeaderDocState.
const (
	DocIndexed = "indexed"
	DocDeleted = "deleted"
	DocSkipped = "skipped"
)

// DocSummary is what the headers of a cue_docs entry say of its record.
type DocSummary struct {
	SHA256    string
	SourceSeq uint64
	Deleted   bool
	// Skip is the reason the file is not indexed, "" when it is.
	Skip SkipReason
	// Kind, Tokens, Warnings and SkipDetail are the record's; Complete
	// says the summary holds them (an entry written before they were
	// carried, or with warnings too long for headers, does not).
	Kind       DocKind
	Tokens     int
	Warnings   []string
	SkipDetail string
	Complete   bool
}

// Summary is rec's DocSummary.
func (rec DocRecord) Summary() DocSummary {
	s := DocSummary{SHA256: rec.SHA256, SourceSeq: rec.SourceSeq, Deleted: rec.Deleted,
		Kind: rec.Kind, Tokens: rec.Tokens, Warnings: rec.Warnings, Complete: true}
	if rec.Skip != nil {
		s.Skip, s.SkipDetail = rec.Skip.Reason, rec.Skip.Detail
	}
	return s
}

// Headers are the header values carrying s, by header name.
func (s DocSummary) Headers() map[string]string {
	state := DocIndexed
	switch {
	case s.Deleted:
		state = DocDeleted
	case s.Skip != "":
		state = DocSkipped + ":" + string(s.Skip)
	}
	h := map[string]string{HeaderDocState: state, HeaderDocSeq: strconv.FormatUint(s.SourceSeq, 10)}
	if s.SHA256 != "" {
		h[HeaderDocSHA256] = s.SHA256
	}
	if !s.Complete {
		return h
	}
	if s.Kind != "" {
		h[HeaderDocKind] = string(s.Kind)
	}
	if s.Tokens != 0 {
		h[HeaderDocTokens] = strconv.Itoa(s.Tokens)
	}
	size := 0
	if len(s.Warnings) > 0 {
		// JSON escapes what a header cannot hold (line ends).
		b, _ := json.Marshal(s.Warnings)
		h[HeaderDocWarnings], size = string(b), len(b)
	}
	if s.SkipDetail != "" {
		b, _ := json.Marshal(s.SkipDetail)
		h[HeaderDocSkipDetail], size = string(b), size+len(b)
	}
	if size > maxSummaryHeaders {
		delete(h, HeaderDocWarnings)
		delete(h, HeaderDocSkipDetail)
		return h
	}
	h[HeaderDocSummary] = docSummaryVersion
	return h
}

// ParseDocSummary reads a summary back from header values (get returns
// "" for a missing one); ok is false when the entry carries none (written
// before entries had them) or a malformed one.
func ParseDocSummary(get func(name string) string) (s DocSummary, ok bool) {
	state := get(HeaderDocState)
	seq, err := strconv.ParseUint(get(HeaderDocSeq), 10, 64)
	if state == "" || err != nil {
		return DocSummary{}, false
	}
	s = DocSummary{SHA256: get(HeaderDocSHA256), SourceSeq: seq}
	switch {
	case state == DocIndexed:
	case state == DocDeleted:
		s.Deleted = true
	case strings.HasPrefix(state, DocSkipped+":"):
		s.Skip = SkipReason(strings.TrimPrefix(state, DocSkipped+":"))
	default:
		return DocSummary{}, false
	}
	if get(HeaderDocSummary) != docSummaryVersion {
		return s, true
	}
	s.Kind = DocKind(get(HeaderDocKind))
	if t := get(HeaderDocTokens); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil {
			return s, true
		}
		s.Tokens = n
	}
	if w := get(HeaderDocWarnings); w != "" && json.Unmarshal([]byte(w), &s.Warnings) != nil {
		s.Warnings = nil
		return s, true
	}
	if d := get(HeaderDocSkipDetail); d != "" && json.Unmarshal([]byte(d), &s.SkipDetail) != nil {
		s.SkipDetail = ""
		return s, true
	}
	s.Complete = true
	return s, true
}
