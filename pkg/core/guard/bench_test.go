package guard

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// mixedText builds about size bytes of what tool results hold: prose,
// Go code, JSON and log lines, with a generated secret every secretEvery
// bytes (none if secretEvery is 0).
func mixedText(size, secretEvery int) string {
	r := rand.New(rand.NewPCG(42, 42))
	words := strings.Fields(`the guard runs on every tool result and every persisted memory so it must be
		cheap on clean text while agents read docs code logs and task cards under a token budget
		indexer extractor edge scene anchor heading section chunk embedding query ranking cache`)
	sentence := func() string {
		n := 6 + r.IntN(12)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ") + ". "
	}
	chunks := []func() string{
		func() string { return sentence() + sentence() + "\n" },
		func() string {
			return fmt.Sprintf("func (s *Service) Handle%d(ctx context.Context, req *Request) error {\n\tif err := s.store.Put(ctx, req.Key, req.Value); err != nil {\n\t\treturn fmt.Errorf(\"put %%s: %%w\", req.Key, err)\n\t}\n\treturn nil\n}\n", r.IntN(1000))
		},
		func() string {
			return fmt.Sprintf(`{"id": "%08x-4b7e-9f21-6c5d8e7a1b30", "status": %d, "path": "/api/v1/items/%d", "latency_ms": %d, "cache": "hit"}`+"\n", r.Uint32(), 200+r.IntN(300), r.IntN(1e5), r.IntN(900))
		},
		func() string {
			return fmt.Sprintf("2026-03-02T10:%02d:%02d.%03dZ INFO indexer: indexed repo=cuedeck path=docs/api.md chunks=%d tokens=%d sha=%040x\n", r.IntN(60), r.IntN(60), r.IntN(1000), r.IntN(40), r.IntN(9000), r.Uint64())
		},
		func() string {
			return "max_tokens: 4096\ntemperature: 0.2\nurl: https://github.com/cuedeck/cuedeck/blob/main/README.md#install\n"
		},
	}
	var b strings.Builder
	next := secretEvery
	for b.Len() < size {
		b.WriteString(chunks[r.IntN(len(chunks))]())
		if secretEvery > 0 && b.Len() >= next {
			frag, _ := secretKinds[r.IntN(len(secretKinds))].gen(r)
			b.WriteString("\n" + frag + "\n")
			next += secretEvery
		}
	}
	return b.String()
}

func benchmarkRedact(b *testing.B, text string) {
	_, findings := Redact(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Redact(text)
	}
	b.ReportMetric(float64(len(findings)), "findings")
}

// BenchmarkRedactMixed: 10 MB of mixed text with a secret every 200 kB.
func BenchmarkRedactMixed(b *testing.B) { benchmarkRedact(b, mixedText(10<<20, 200<<10)) }

// BenchmarkRedactClean: 10 MB of the same text without secrets.
func BenchmarkRedactClean(b *testing.B) { benchmarkRedact(b, mixedText(10<<20, 0)) }

// BenchmarkRedactToolResult: a typical 8 kB tool result with one secret.
func BenchmarkRedactToolResult(b *testing.B) { benchmarkRedact(b, mixedText(8<<10, 4<<10)) }

// BenchmarkRedactAdversarial: 1 MB inputs built to make a scanner re-read
// text; each must stay linear.
func BenchmarkRedactAdversarial(b *testing.B) {
	for name, unit := range map[string]string{
		"sk-":        "sk-",
		"xoxb-":      "-xoxb",
		"assign":     "password=",
		"colons":     "a:",
		"eyJ":        " eyJhbGciOiJIUzI1NiJ9.e.",
		"begin":      "-----BEGIN RSA PRIVATE KEY-----\n",
		"scheme":     "a://b:c@",
		"markers":    "[REDACTED:jwt]",
		"secrets":    "",
		"base64blob": "QUtJQVE3WksyTTRONlA4UjNUNVY=",
	} {
		text := strings.Repeat(unit, (1<<20)/max(1, len(unit)))
		if name == "secrets" {
			text = mixedText(1<<20, 256)
		}
		b.Run(name, func(b *testing.B) { benchmarkRedact(b, text) })
	}
}
