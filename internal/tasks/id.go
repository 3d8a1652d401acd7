package tasks

import (
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	"strconv"
	"time"
)

// IDLength is the length of a task id: seed 002's ^[a-z0-9]{6}$.
const IDLength = 6

// NewID derives a task id from a timestamp and a title: six lowercase
// alphanumerics of SHA-256(unix nanos, title, n) in base 36, with n counting
// up from 0 until taken reports the id free. taken may be nil. The same
// inputs give the same id, so tests and replays are deterministic.
func NewID(at time.Time, title string, taken func(id string) bool) string {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(at.UnixNano()))
	for n := 0; ; n++ {
		h := sha256.New()
		h.Write(buf[:])
		h.Write([]byte(title))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(n)))
		sum := h.Sum(nil)
		id := new(big.Int).SetBytes(sum[:8]).Text(36)
		for len(id) < IDLength {
			id = "0" + id
		}
		id = id[len(id)-IDLength:]
		if taken == nil || !taken(id) {
			return id
		}
	}
}

// ValidID reports whether id has the form of a task id.
func ValidID(id string) bool {
	if len(id) != IDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
