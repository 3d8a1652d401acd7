package guard

import "strings"

// golden is 2^64 divided by the golden ratio: a multiplicative hash.
const golden = 0x9E3779B97F4A7C15

// findAll appends a candidate for every occurrence in text of each secret
// (mapped to its rule) that does not touch a protected span.
func findAll(text string, secrets map[string]int, cs, protected []cand) []cand {
	add := func(at, n, rule int) {
		c := cand{at, at + n, rule}
		if !overlaps(protected, c) {
			cs = append(cs, c)
		}
	}
	if len(secrets) <= 4 {
		for s, r := range secrets {
			for i := 0; ; {
				j := strings.Index(text[i:], s)
				if j < 0 {
					break
				}
				add(i+j, len(s), r)
				i += j + 1
			}
		}
		return cs
	}

	// Many secrets: one pass over text with a rolling window of their first
	// w bytes, a bitset filter on its hash, then exact comparisons.
	w := 8
	for s := range secrets {
		w = min(w, len(s))
	}
	shift := uint(8 * (w - 1))
	var filter [1 << 10]uint64 // 65,536 bits, indexed by hash(window)
	heads := make(map[uint64][]string, len(secrets))
	for s := range secrets {
		var k uint64
		for i := w - 1; i >= 0; i-- {
			k = k<<8 | uint64(s[i])
		}
		h := (k * golden) >> 48
		filter[h>>6] |= 1 << (h & 63)
		heads[k] = append(heads[k], s)
	}
	var k uint64
	for i := 0; i < len(text); i++ {
		k = k>>8 | uint64(text[i])<<shift
		if i < w-1 {
			continue
		}
		if h := (k * golden) >> 48; filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		at := i - (w - 1)
		for _, s := range heads[k] {
			if strings.HasPrefix(text[at:], s) {
				add(at, len(s), secrets[s])
			}
		}
	}
	return cs
}
