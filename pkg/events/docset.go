package events

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// DocSet summarises the indexed documents of a repo — which keys, with
// which contents — so that two holders of them (cue_docs and an edge) can
// be compared without either sending every key. It does not depend on the
// order the documents are added in.
type DocSet struct {
	Docs int `json:"docs"`
	// Sum is the sum, modulo 2^64, of a hash of each document's key and
	// content sha256, in hexadecimal.
	Sum string `json:"sum"`
	sum uint64
}

// Add counts the document at key whose content has sha256 sha (hex).
func (s *DocSet) Add(key, sha string) {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(sha))
	var b [sha256.Size]byte
	s.sum += binary.BigEndian.Uint64(h.Sum(b[:0]))
	s.Docs++
	s.Sum = strconv.FormatUint(s.sum, 16)
}

// Equal reports whether s and o hold the same documents (with the
// certainty of a 64-bit hash).
func (s DocSet) Equal(o DocSet) bool { return s.Docs == o.Docs && s.Sum == o.Sum }

// EdgeDocs is what an edge holds of cue_docs: the revision it has applied
// and, per repo, the documents it can serve.
type EdgeDocs struct {
	Revision uint64            `json:"revision"`
	Repos    map[string]DocSet `json:"repos"`
}
