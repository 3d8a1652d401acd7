package builtin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuedeck/cuedeck/internal/cpumeter"
	"github.com/cuedeck/cuedeck/internal/priority"
)

func embedOne(t testing.TB, e *Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestEmbedMatchesReference(t *testing.T) {
	e := New()
	v := embedOne(t, e, "hello world")
	if len(v) != Dimensions {
		t.Fatalf("len = %d", len(v))
	}
	t.Logf("embed(hello world)[0:5] = %v", v[:5])
	want := []float32{-0.05149646, -0.05492519, -0.007690589, -0.04995197, 0.04887254}
	for i, w := range want {
		if math.Abs(float64(v[i]-w)) > 1e-5 {
			t.Errorf("embed(hello world)[%d] = %.9g, want %.9g", i, v[i], w)
		}
	}
	q := embedOne(t, e, "how do I log in")
	for _, tc := range []struct {
		text string
		want float64
	}{
		{"authentication flow", 0.4097},
		{"banana bread recipe", 0.1363},
	} {
		got := cosine(q, embedOne(t, e, tc.text))
		t.Logf("cos(how do I log in, %s) = %.6f", tc.text, got)
		if math.Round(got*1e4)/1e4 != tc.want {
			t.Errorf("cos(how do I log in, %s) = %.6f, want %.4f", tc.text, got, tc.want)
		}
	}
}

func TestEmbedBatchEqualsOneByOne(t *testing.T) {
	e := New()
	texts := []string{"hello world", "", "how do I log in", strings.Repeat("long input keeps going ", 100), "authentication flow"}
	batch, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one := embedOne(t, e, text)
		if !slices.Equal(one, batch[i]) {
			t.Errorf("text %d: batch vector differs from single", i)
		}
		var n float64
		for _, x := range batch[i] {
			if math.IsNaN(float64(x)) {
				t.Fatalf("text %d: NaN", i)
			}
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("text %d: |v|² = %g", i, n)
		}
	}
}

func TestEmbedHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Embed(ctx, []string{"a", "b"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// cancelAfter reports cancellation once Err has been asked n times, so a
// test can cancel part way through a batch without timing.
type cancelAfter struct {
	context.Context
	n atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestEmbedStopsWhenCancelledMidBatch(t *testing.T) {
	texts := make([]string, 8)
	for i := range texts {
		texts[i] = chunk128(i)
	}
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(3)
	if _, err := New().Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if left := ctx.n.Load(); left < -4 {
		t.Errorf("Err asked %d times after cancellation; want work to stop", -left)
	}
}

func TestEmbedConcurrent(t *testing.T) {
	e := New()
	want := embedOne(t, e, "how do I log in")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			v, err := e.Embed(context.Background(), []string{"how do I log in", "x"})
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(v[0], want) {
				t.Error("concurrent vector differs")
			}
		})
	}
	wg.Wait()
}

func chunk128(i int) string {
	words := strings.Fields("the index maps each file to chunks of code and prose which agents search by meaning when keywords fail")
	var b strings.Builder
	for j := range 400 {
		b.WriteString(words[(i+j)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

func BenchmarkEmbed128(b *testing.B) {
	e := New()
	texts := make([]string, 16)
	for i := range texts {
		texts[i] = chunk128(i)
	}
	m := testModel(b)
	if n := len(m.tok.tokens(texts[0])); n != maxTokens {
		b.Fatalf("chunk has %d tokens", n)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkEmbedShort embeds a batch of 64 query-sized sentences.
func BenchmarkEmbedShort(b *testing.B) {
	e := New()
	base := []string{"how do I log in", "authentication flow", "banana bread recipe", "hello world",
		"where is the config loaded", "retry the request with backoff", "parse the frontmatter", "list open tasks"}
	var texts []string
	for i := range 8 {
		for _, s := range base {
			texts = append(texts, fmt.Sprintf("%s %d", s, i))
		}
	}
	testModel(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "sentences/s")
}

func TestEmbedGroupsOfShortTexts(t *testing.T) {
	e := New()
	words := strings.Fields("how do I log in where is the config loaded retry with backoff")
	texts := make([]string, 2*maxGroupTexts+3)
	for i := range texts {
		texts[i] = strings.Join(words[:1+i%len(words)], " ")
		if i%17 == 0 {
			texts[i] = ""
		}
	}
	batch, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !slices.Equal(batch[i], embedOne(t, e, text)) {
			t.Fatalf("text %d (%q): grouped vector differs from single", i, text)
		}
	}
}

func TestMakeGroups(t *testing.T) {
	seqs := [][]int{make([]int, 5), make([]int, 128), nil, make([]int, 3), make([]int, 3)}
	got := makeGroups(seqs, 5)
	want := [][2]int{{0, 1}, {1, 2}, {2, 4}, {4, 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("makeGroups = %v, want %v", got, want)
	}
}

// BenchmarkEmbedQuery embeds one short query, the latency an edge sees.
func BenchmarkEmbedQuery(b *testing.B) {
	e := New()
	testModel(b)
	for b.Loop() {
		if _, err := e.Embed(context.Background(), []string{"how do I log in"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedOneChunk embeds a single 128-token chunk, whose products
// are shared between cores.
func BenchmarkEmbedOneChunk(b *testing.B) {
	e := New()
	text := chunk128(0)
	testModel(b)
	for b.Loop() {
		if _, err := e.Embed(context.Background(), []string{text}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestYieldingEmbedderWaitsForForegroundWork(t *testing.T) {
	texts := []string{"hello world", chunk128(1), "authentication flow"}
	want, err := New().Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		gate := priority.New(time.Millisecond)
		end := gate.Begin()
		bg := New().Yielding(gate)
		done := make(chan [][]float32, 1)
		go func() {
			vecs, err := bg.Embed(context.Background(), texts)
			if err != nil {
				t.Error(err)
			}
			done <- vecs
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("embedded while foreground work ran")
		default:
		}
		end()
		vecs := <-done
		for i := range texts {
			if !slices.Equal(vecs[i], want[i]) {
				t.Errorf("text %d: the yielding embedder's vector differs", i)
			}
		}
	})
}

func TestYieldingEmbedderHeldBackStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := priority.New(0)
		gate.Begin()
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := New().Yielding(gate).Embed(ctx, []string{"a", "b"})
			got <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Fatalf("held embedding ended with %v, want context.Canceled", err)
		}
	})
}

func TestYieldingEmbedderKeepsToTheBackgroundCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var running, peak atomic.Int32
	onGroup = func(delta int) {
		n := running.Add(int32(delta))
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
	}
	defer func() { onGroup = nil }()
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d about how the background embeds while agents ask", i)
	}
	for _, cores := range []int{1, 3} {
		g := priority.New(time.Millisecond)
		g.SetBackgroundCores(cores)
		peak.Store(0)
		// The embed worker handles requests side by side: the cap holds
		// for all their calls together.
		e := New().Yielding(g)
		var calls sync.WaitGroup
		for range 3 {
			calls.Go(func() {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					t.Error(err)
				}
			})
		}
		calls.Wait()
		if got := int(peak.Load()); got > cores {
			t.Errorf("%d groups ran at once with %d background cores", got, cores)
		}
	}
}

func TestEmbedMetersItsWork(t *testing.T) {
	if !cpumeter.Supported {
		t.Skip("no per-thread CPU clock on this platform")
	}
	texts := make([]string, 256)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("word%d ", i), 60)
	}
	e := New()
	embedOne(t, e, "load the model first")
	m := new(cpumeter.Meter)
	before := processCPU(t)
	if _, err := e.Embed(cpumeter.With(context.Background(), m), texts); err != nil {
		t.Fatal(err)
	}
	spent := processCPU(t) - before
	// Every goroutine the model fans out to is metered: together they are
	// most of the process's CPU time meanwhile, never more.
	if got := m.Total(); got < spent*6/10 || got > spent+spent/20 {
		t.Fatalf("metered %v of the process's %v", got, spent)
	}
}

func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
