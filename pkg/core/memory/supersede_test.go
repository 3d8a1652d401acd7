package memory

import (
	"testing"
	"time"
)

func TestAutoSupersedes(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	mem := func(kind Kind, content string, at time.Time, files ...string) Memory {
		return Memory{Kind: kind, Content: content, CreatedAt: at, UpdatedAt: at, FilesTouched: files}
	}
	later := t0.Add(time.Hour)
	for _, tc := range []struct {
		name         string
		newer, older Memory
		want         bool
	}{
		{"a reversal of the same choice",
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", later, "internal/auth/session.go"),
			mem(KindDecision, "Store user sessions in Redis", t0, "auth/session.go"), true},
		{"a reversal by going back",
			mem(KindExperience, "go back to the v1 JSON codec for events", later, "pkg/events/codec.go"),
			mem(KindExperience, "switch the events to the v2 JSON codec", t0, "pkg/events/codec.go"), true},
		{"a restatement",
			mem(KindDecision, "Use pgx for all Postgres access", later, "db/conn.go"),
			mem(KindDecision, "Use pgx for Postgres access", t0, "db/conn.go"), true},
		{"both without files",
			mem(KindDecision, "No longer pin the linter version", later),
			mem(KindDecision, "Pin the linter version in CI", t0), false},
		{"later in the same batch of a session",
			Memory{Kind: KindExperience, Content: "store user sessions in Postgres instead of Redis", Session: "s1", Source: Span{Start: 900, End: 990}, CreatedAt: t0, FilesTouched: []string{"auth/session.go"}},
			Memory{Kind: KindExperience, Content: "store user sessions in Redis", Session: "s1", Source: Span{Start: 100, End: 180}, CreatedAt: t0, FilesTouched: []string{"auth/session.go"}}, true},
		{"earlier in the same batch",
			Memory{Kind: KindExperience, Content: "store user sessions in Postgres instead of Redis", Session: "s1", Source: Span{Start: 100, End: 180}, CreatedAt: t0, FilesTouched: []string{"auth/session.go"}},
			Memory{Kind: KindExperience, Content: "store user sessions in Redis", Session: "s1", Source: Span{Start: 900, End: 990}, CreatedAt: t0, FilesTouched: []string{"auth/session.go"}}, false},
		{"the reversal said first",
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", t0, "auth/session.go"),
			mem(KindDecision, "Store user sessions in Redis", later, "auth/session.go"), false},
		{"the same words on other files",
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", later, "web/session.ts"),
			mem(KindDecision, "Store user sessions in Redis", t0, "auth/session.go"), false},
		{"a reversal of something else in the same file",
			mem(KindDecision, "Use a channel for the worker pool instead of polling", later, "cache/cache.go"),
			mem(KindDecision, "Use a mutex around the cache map", t0, "cache/cache.go"), false},
		{"a neighbouring decision",
			mem(KindDecision, "Cache compiled regexps in memory", later, "tmpl/cache.go"),
			mem(KindDecision, "Cache parsed templates in memory", t0, "tmpl/cache.go"), false},
		{"a shorter choice said later (no reversal word, 4 of 5 words)",
			mem(KindDecision, "Store user sessions in Redis", later, "auth/session.go"),
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", t0, "auth/session.go"), false},
		{"facts are not choices",
			mem(KindFact, "The sessions table no longer lives in Redis", later, "auth/session.go"),
			mem(KindFact, "The sessions table lives in Redis", t0, "auth/session.go"), false},
		{"kinds differ",
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", later, "auth/session.go"),
			mem(KindExperience, "Store user sessions in Redis", t0, "auth/session.go"), false},
		{"a reversal under a same tag, no files",
			Memory{Kind: KindDecision, Content: "Store user sessions in Postgres instead of Redis", CreatedAt: later, Tags: []string{"Sessions"}},
			Memory{Kind: KindDecision, Content: "Store user sessions in Redis", CreatedAt: t0, Tags: []string{"storage", "sessions"}}, true},
		{"a reversal under other tags",
			Memory{Kind: KindDecision, Content: "Store user sessions in Postgres instead of Redis", CreatedAt: later, Tags: []string{"db"}},
			Memory{Kind: KindDecision, Content: "Store user sessions in Redis", CreatedAt: t0, Tags: []string{"sessions"}}, false},
		{"a path that only ends alike",
			mem(KindDecision, "Store user sessions in Postgres instead of Redis", later, "auth/mysession.go"),
			mem(KindDecision, "Store user sessions in Redis", t0, "session.go"), false},
	} {
		if got := AutoSupersedes(tc.newer, tc.older); got != tc.want {
			t.Errorf("%s: AutoSupersedes = %v, want %v", tc.name, got, tc.want)
		}
	}
}
