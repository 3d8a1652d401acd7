package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func unit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// bruteForce is the reference: every doc's best chunk, sorted.
func bruteForce(docs map[string][]Chunk, q []float32, k int, allow func(string) bool) []Hit {
	var hits []Hit
	for id, cs := range docs {
		if allow != nil && !allow(id) {
			continue
		}
		h := Hit{ID: id, Score: math.Inf(-1)}
		for i, c := range cs {
			if s := float64(Dot(q, c.Vector)); s > h.Score {
				h = Hit{ID: id, Score: s, Chunk: i, StartLine: c.StartLine, EndLine: c.EndLine}
			}
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return hits[:min(k, len(hits))]
}

func randomChunks(rng *rand.Rand, n, dims int) []Chunk {
	cs := make([]Chunk, n)
	for i := range cs {
		cs[i] = Chunk{StartLine: 1 + 10*i, EndLine: 10 + 10*i, Vector: unit(rng, dims)}
	}
	return cs
}

func TestSearchMatchesBruteForce(t *testing.T) {
	for _, ndocs := range []int{5, 3000} { // serial and parallel scans
		t.Run(fmt.Sprint(ndocs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(ndocs)))
			const dims = 24
			ix := New(dims)
			docs := map[string][]Chunk{}
			for i := range ndocs {
				id := fmt.Sprintf("doc%04d", i)
				docs[id] = randomChunks(rng, 1+rng.IntN(5), dims)
				if err := ix.Upsert(id, docs[id]); err != nil {
					t.Fatal(err)
				}
			}
			// Churn: replace some with other shapes, delete others.
			for i := 0; i < ndocs; i += 3 {
				id := fmt.Sprintf("doc%04d", i)
				if i%2 == 0 {
					ix.Delete(id)
					delete(docs, id)
					continue
				}
				docs[id] = randomChunks(rng, 1+rng.IntN(5), dims)
				if err := ix.Upsert(id, docs[id]); err != nil {
					t.Fatal(err)
				}
			}
			if ix.Len() != len(docs) {
				t.Fatalf("Len %d, want %d", ix.Len(), len(docs))
			}
			// The index answers for the vectors it stores, which are the
			// upserted ones quantised: within a small step of them.
			stored := map[string][]Chunk{}
			for id, orig := range docs {
				cs, ok := ix.Get(id)
				if !ok || len(cs) != len(orig) {
					t.Fatalf("Get(%s) = %d chunks, %v; want %d", id, len(cs), ok, len(orig))
				}
				for i := range cs {
					for j := range cs[i].Vector {
						if d := math.Abs(float64(cs[i].Vector[j] - orig[i].Vector[j])); d > 0.01 {
							t.Fatalf("%s chunk %d dim %d: stored %v, upserted %v", id, i, j, cs[i].Vector[j], orig[i].Vector[j])
						}
					}
				}
				stored[id] = cs
			}
			odd := func(id string) bool { return id[len(id)-1]%2 == 1 }
			for range 5 {
				q := unit(rng, dims)
				for _, allow := range []func(string) bool{nil, odd} {
					got := ix.Search(q, 7, allow)
					want := bruteForce(stored, q, 7, allow)
					if len(got) != len(want) {
						t.Fatalf("got %d hits, want %d", len(got), len(want))
					}
					for i := range want {
						if got[i].ID != want[i].ID || got[i].Chunk != want[i].Chunk || got[i].StartLine != want[i].StartLine || math.Abs(got[i].Score-want[i].Score) > 1e-5 {
							t.Fatalf("hit %d: got %+v, want %+v", i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}

func TestBestChunkLineRange(t *testing.T) {
	ix := New(3)
	must(t, ix.Upsert("a", []Chunk{
		{StartLine: 1, EndLine: 4, Vector: []float32{1, 0, 0}},
		{StartLine: 5, EndLine: 9, Vector: []float32{0, 1, 0}},
	}))
	must(t, ix.Upsert("b", []Chunk{{StartLine: 1, EndLine: 2, Vector: []float32{0.6, 0.8, 0}}}))
	hits := ix.Search([]float32{0, 1, 0}, 5, nil)
	if len(hits) != 2 || hits[0].ID != "a" || hits[0].StartLine != 5 || hits[0].EndLine != 9 || hits[0].Chunk != 1 {
		t.Fatalf("hits %+v", hits)
	}
	if hits[1].ID != "b" || math.Abs(hits[1].Score-0.8) > 1e-6 {
		t.Fatalf("second hit %+v", hits[1])
	}
	// Replacing a's chunks in place moves its best section.
	must(t, ix.Upsert("a", []Chunk{
		{StartLine: 1, EndLine: 2, Vector: []float32{0, 1, 0}},
		{StartLine: 3, EndLine: 9, Vector: []float32{1, 0, 0}},
	}))
	if h := ix.Search([]float32{0, 1, 0}, 1, nil); h[0].StartLine != 1 || h[0].EndLine != 2 {
		t.Fatalf("after replace %+v", h)
	}
	if h := ix.Search([]float32{0, 1, 0}, 5, func(id string) bool { return id == "b" }); len(h) != 1 || h[0].ID != "b" {
		t.Fatalf("allow: %+v", h)
	}
	got, ok := ix.Get("a")
	if !ok || len(got) != 2 || got[1].StartLine != 3 || got[1].Vector[0] != 1 {
		t.Fatalf("Get: %+v", got)
	}
	ix.Delete("a")
	ix.Delete("missing")
	if _, ok := ix.Get("a"); ok {
		t.Fatal("Get after Delete")
	}
	if h := ix.Search([]float32{0, 1, 0}, 5, nil); len(h) != 1 || h[0].ID != "b" {
		t.Fatalf("after delete %+v", h)
	}
}

func TestUpsertRejectsWrongDimensions(t *testing.T) {
	ix := New(3)
	if err := ix.Upsert("a", []Chunk{{Vector: []float32{1, 0}}}); err == nil {
		t.Fatal("want ErrDimensions")
	}
	if ix.Len() != 0 || ix.Search([]float32{1, 0}, 3, nil) != nil {
		t.Fatal("index changed or searched with a wrong query")
	}
}

func TestCompactionKeepsResultsAndBoundsMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ix := New(8)
	docs := map[string][]Chunk{}
	for round := range 20 {
		for i := range 100 {
			id := fmt.Sprint("d", i)
			docs[id] = randomChunks(rng, 1+(round+i)%4, 8)
			must(t, ix.Upsert(id, docs[id]))
		}
	}
	if rows := len(ix.owner); rows > 4*ix.Chunks()/3+compactMin+4 {
		t.Fatalf("%d rows for %d live chunks: dead rows not compacted", rows, ix.Chunks())
	}
	q := unit(rng, 8)
	got, want := ix.Search(q, 10, nil), bruteForce(docs, q, 10, nil)
	for i := range want {
		if got[i].ID != want[i].ID || got[i].StartLine != want[i].StartLine {
			t.Fatalf("hit %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if ix.Bytes() < ix.Chunks()*8*4 {
		t.Fatalf("Bytes %d below the vectors' own size", ix.Bytes())
	}
}

func TestDot(t *testing.T) {
	for n := range 20 {
		a, b := make([]float32, n), make([]float32, n)
		var want float32
		for i := range a {
			a[i], b[i] = float32(i+1), float32(2*i-3)
			want += a[i] * b[i]
		}
		if got := Dot(a, b); got != want {
			t.Fatalf("n=%d: %v, want %v", n, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkVectorSearch scans 50,000 chunks of 512 dimensions (10,000
// documents of five chunks), the scale of a large repository set.
func BenchmarkVectorSearch(b *testing.B) {
	const docs, per, dims = 10000, 5, 512
	rng := rand.New(rand.NewPCG(5, 6))
	ix := New(dims)
	for i := range docs {
		if err := ix.Upsert(fmt.Sprint("doc", i), randomChunks(rng, per, dims)); err != nil {
			b.Fatal(err)
		}
	}
	q := unit(rng, dims)
	b.ReportMetric(float64(ix.Bytes())/(docs*per/10000), "bytes/10k-chunks")
	for b.Loop() {
		if hits := ix.Search(q, 10, nil); len(hits) != 10 {
			b.Fatal(len(hits))
		}
	}
}

func BenchmarkDot512(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := unit(rng, 512), unit(rng, 512)
	var s float32
	for b.Loop() {
		s += Dot(x, y)
	}
	_ = s
}

// Stores keep a vector's codes; what they read back must quantise to the
// very same codes, or an index rebuilt from them would differ.
func TestQuantizeOfDequantizedCodesIsTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		v := make([]float32, 1+r.IntN(600))
		for i := range v {
			v[i] = float32(r.NormFloat64()) * float32(r.IntN(5)+1)
		}
		codes := make([]int8, len(v))
		scale := Quantize(codes, v)
		back := make([]float32, len(v))
		Dequantize(back, codes, scale)
		again := make([]int8, len(v))
		if s := Quantize(again, back); s != scale || !slices.Equal(again, codes) {
			t.Fatalf("re-quantised: scale %g vs %g, codes equal %v", s, scale, slices.Equal(again, codes))
		}
	}
}

// Codes upserted as they are hold what upserting their vector would: the
// same stored vector and the same scores; codes of the wrong length are
// refused as a vector would be.
func TestUpsertCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const dims = 64
	byVector, byCodes := New(dims), New(dims)
	var vecs, codes []Chunk
	for i := range 5 {
		v := unit(rng, dims)
		vecs = append(vecs, Chunk{StartLine: i + 1, EndLine: i + 2, Vector: v})
		codes = append(codes, Chunk{StartLine: i + 1, EndLine: i + 2, Codes: AppendCodes(nil, v)})
	}
	if err := byVector.Upsert("a", vecs); err != nil {
		t.Fatal(err)
	}
	if err := byCodes.Upsert("a", codes); err != nil {
		t.Fatal(err)
	}
	want, _ := byVector.Get("a")
	got, _ := byCodes.Get("a")
	for i := range want {
		if !slices.Equal(got[i].Vector, want[i].Vector) || got[i].StartLine != want[i].StartLine {
			t.Fatalf("chunk %d: codes stored %v, the vector %v", i, got[i], want[i])
		}
	}
	q := unit(rng, dims)
	if a, b := byVector.Search(q, 1, nil), byCodes.Search(q, 1, nil); !slices.Equal(a, b) {
		t.Fatalf("search: %v by vector, %v by codes", a, b)
	}
	short := []Chunk{{StartLine: 1, EndLine: 1, Codes: AppendCodes(nil, unit(rng, dims-1))}}
	if err := byCodes.Upsert("b", short); !errors.Is(err, ErrDimensions) {
		t.Fatalf("codes of %d dimensions: %v, want ErrDimensions", dims-1, err)
	}
}

// TestTiesGoToTheSmallerID: documents with the same vectors score the
// same, and the k kept are those with the smallest ids, whatever order
// the documents went in.
func TestTiesGoToTheSmallerID(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dims = 16
	shapes := [][]Chunk{randomChunks(rng, 1, dims), randomChunks(rng, 2, dims), randomChunks(rng, 1, dims)}
	ix := New(dims)
	docs := map[string][]Chunk{}
	for _, i := range rng.Perm(300) {
		id := fmt.Sprintf("doc%04d", i)
		docs[id] = shapes[i%len(shapes)]
		if err := ix.Upsert(id, docs[id]); err != nil {
			t.Fatal(err)
		}
	}
	stored := map[string][]Chunk{}
	for id := range docs {
		stored[id], _ = ix.Get(id)
	}
	for range 3 {
		q := unit(rng, dims)
		for _, k := range []int{1, 10, 150} {
			got := ix.Search(q, k, nil)
			want := bruteForce(stored, q, k, nil)
			if len(got) != len(want) {
				t.Fatalf("k=%d: got %d hits, want %d", k, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || got[i].Chunk != want[i].Chunk {
					t.Fatalf("k=%d hit %d: got %s chunk %d, want %s chunk %d", k, i, got[i].ID, got[i].Chunk, want[i].ID, want[i].Chunk)
				}
			}
		}
	}
}

// SearchStamped answers as Search with keep's verdicts and allow where
// keep asks it, and asks allow of no other document; a stamp follows its
// document through a rewrite in place, a reshaping, SetStamp and
// compaction, and Upsert keeps it.
func TestSearchStampedIsSearchAskingLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const dims = 32
	ix := New(dims)
	stampOf := map[string]uint64{}
	for i := range 4000 {
		id := fmt.Sprintf("d%04d", rng.IntN(800))
		switch {
		case i%9 == 0:
			ix.Delete(id)
			delete(stampOf, id)
		case i%5 == 0 && stampOf[id] != 0:
			stamp := uint64(1 + rng.IntN(6))
			ix.SetStamp(id, stamp)
			stampOf[id] = stamp
		case i%7 == 0 && stampOf[id] != 0:
			// Upsert without a stamp keeps the one the document has.
			chunks := make([]Chunk, 1+rng.IntN(3))
			for c := range chunks {
				chunks[c] = Chunk{Vector: unit(rng, dims)}
			}
			if err := ix.Upsert(id, chunks); err != nil {
				t.Fatal(err)
			}
		default:
			chunks := make([]Chunk, 1+rng.IntN(3))
			for c := range chunks {
				chunks[c] = Chunk{Vector: unit(rng, dims)}
			}
			stamp := uint64(1 + rng.IntN(6))
			if err := ix.UpsertStamped(id, chunks, stamp); err != nil {
				t.Fatal(err)
			}
			stampOf[id] = stamp
		}
	}
	for want := uint64(1); want <= 6; want++ {
		keep := func(stamp uint64) int {
			switch {
			case stamp < want:
				return Refuse
			case stamp > want:
				return Admit
			}
			return Ask
		}
		allow := func(id string) bool { return id[len(id)-1] != '3' }
		for range 20 {
			q := unit(rng, dims)
			got := ix.SearchStamped(q, 10, keep, func(id string) bool {
				if stampOf[id] != want {
					t.Fatalf("allow asked of %s, whose stamp %d keep decides", id, stampOf[id])
				}
				return allow(id)
			})
			exp := ix.Search(q, 10, func(id string) bool {
				return stampOf[id] > want || stampOf[id] == want && allow(id)
			})
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("stamp %d: %v, want %v", want, got, exp)
			}
		}
	}
}
