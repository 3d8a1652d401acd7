package delta

import "sort"

// match is a run of n equal lines at a[a:a+n] and b[b:b+n].
type match struct{ a, b, n int }

// maxEdits bounds the edit distance Myers' algorithm explores in one
// region: its trace grows with the square of the distance. A region that
// needs more is replaced whole, which is still exact, only larger.
const maxEdits = 1024

// matches returns the runs of lines a and b keep in common, in order and
// not overlapping. It is patience diff (lines unique to both sides anchor
// the alignment, recursively) with Myers' O(ND) algorithm for the regions
// without unique lines.
func matches(a, b []string) []match {
	ids := make(map[string]int32, len(a))
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	var raw []match
	diffRange(x, y, 0, 0, &raw)
	// Merge touching runs.
	var out []match
	for _, m := range raw {
		if m.n == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].a+out[k].n == m.a && out[k].b+out[k].n == m.b {
			out[k].n += m.n
			continue
		}
		out = append(out, m)
	}
	return out
}

// diffRange appends the matches of a and b, which start at ao and bo in the
// whole texts.
func diffRange(a, b []int32, ao, bo int, out *[]match) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	*out = append(*out, match{ao, bo, p})
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma) > 0 && len(mb) > 0 {
		if anchors := uniqueAnchors(ma, mb); len(anchors) > 0 {
			i, j := 0, 0
			for _, an := range anchors {
				diffRange(ma[i:an.a], mb[j:an.b], ao+p+i, bo+p+j, out)
				*out = append(*out, match{ao + p + an.a, bo + p + an.b, 1})
				i, j = an.a+1, an.b+1
			}
			diffRange(ma[i:], mb[j:], ao+p+i, bo+p+j, out)
		} else if ms, ok := myers(ma, mb); ok {
			for _, m := range ms {
				*out = append(*out, match{ao + p + m.a, bo + p + m.b, m.n})
			}
		}
	}
	*out = append(*out, match{ao + len(a) - s, bo + len(b) - s, s})
}

// uniqueAnchors pairs the lines that occur exactly once in a and once in
// b, and returns the longest sequence of pairs in order on both sides.
func uniqueAnchors(a, b []int32) []match {
	type seen struct{ ca, cb, ia, ib int }
	count := make(map[int32]*seen, len(a))
	for i, v := range a {
		s := count[v]
		if s == nil {
			s = &seen{}
			count[v] = s
		}
		s.ca++
		s.ia = i
	}
	for j, v := range b {
		if s := count[v]; s != nil {
			s.cb++
			s.ib = j
		}
	}
	var pairs []match
	for _, s := range count {
		if s.ca == 1 && s.cb == 1 {
			pairs = append(pairs, match{s.ia, s.ib, 1})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].a < pairs[j].a })
	// Longest increasing subsequence of b positions, by patience sorting.
	tops := []int{}                 // index into pairs of each pile's top
	prev := make([]int, len(pairs)) // back pointer: pile below's top when placed
	for i, pr := range pairs {
		k := sort.Search(len(tops), func(t int) bool { return pairs[tops[t]].b > pr.b })
		if k > 0 {
			prev[i] = tops[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tops) {
			tops = append(tops, i)
		} else {
			tops[k] = i
		}
	}
	lis := make([]match, len(tops))
	for k, i := len(tops)-1, tops[len(tops)-1]; k >= 0; k, i = k-1, prev[i] {
		lis[k] = pairs[i]
	}
	return lis
}

// myers returns the matches of a shortest edit script from a to b, or
// false when it needs more than maxEdits edits.
func myers(a, b []int32) ([]match, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, d, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace of myers back from (n, m) after d edits and
// returns the diagonal runs in order.
func backtrack(trace [][]int, d, n, m int) []match {
	var rev []match
	x, y := n, m
	for ; d > 0; d-- {
		vd := trace[d] // v after step d-1, indexed by k+d
		k := x - y
		var pk int
		if k == -d || (k != d && vd[k-1+d] < vd[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd[pk+d]
		py := px - pk
		// The edit lands on (sx, sy); the snake runs from there to (x, y).
		sx, sy := px, py+1
		if pk == k-1 {
			sx, sy = px+1, py
		}
		if x > sx {
			rev = append(rev, match{sx, sy, x - sx})
		}
		x, y = px, py
	}
	if x > 0 {
		rev = append(rev, match{0, 0, x})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
