package card

import (
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	"strconv"
	"time"
)

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// NewID derives a task id from the creation time and the title: six base-36
// characters of their SHA-256. When taken reports the id in use (nil means
// none is), a counter is mixed in until a free id comes out, so ids stay
// unique within a repository.
func NewID(at time.Time, title string, taken func(id string) bool) string {
	for n := 0; ; n++ {
		h := sha256.New()
		var ts [8]byte
		binary.BigEndian.PutUint64(ts[:], uint64(at.UnixNano()))
		h.Write(ts[:])
		h.Write([]byte(title))
		if n > 0 {
			h.Write([]byte("#" + strconv.Itoa(n)))
		}
		v := new(big.Int).SetBytes(h.Sum(nil))
		id := make([]byte, 6)
		base := big.NewInt(36)
		mod := new(big.Int)
		for i := range id {
			v.DivMod(v, base, mod)
			id[i] = idAlphabet[mod.Int64()]
		}
		if taken == nil || !taken(string(id)) {
			return string(id)
		}
	}
}
