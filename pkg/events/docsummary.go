package events

import (
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
)

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
}

// Summary is rec's DocSummary.
func (rec DocRecord) Summary() DocSummary {
	s := DocSummary{SHA256: rec.SHA256, SourceSeq: rec.SourceSeq, Deleted: rec.Deleted}
	if rec.Skip != nil {
		s.Skip = rec.Skip.Reason
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
	return s, true
}
