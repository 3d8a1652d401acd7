package edge

import "testing"

func TestStructuralQuery(t *testing.T) {
	cases := []struct {
		q, subject string
		forward    bool
		ok         bool
	}{
		{"who imports internal/edge?", "internal/edge", false, true},
		{"What calls `VerifyToken`", "VerifyToken", false, true},
		{"dependencies of the package pkg/core/search.", "pkg/core/search", true, true},
		{"show dependencies of ./cmd/cue/main.go", "cmd/cue/main.go", true, true},
		{"who imports", "", false, false},
		{"in file auth.go", "", false, false},
	}
	for _, c := range cases {
		subject, forward, ok := structuralQuery(c.q)
		if subject != c.subject || forward != c.forward || ok != c.ok {
			t.Errorf("%q: got (%q, %v, %v), want (%q, %v, %v)", c.q, subject, forward, ok, c.subject, c.forward, c.ok)
		}
	}
}

func TestSharedStem(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"tokens", "token", true}, {"configure", "configuration", true}, {"login", "logout", false}, {"auth", "author", false}} {
		if got := sharedStem(c.a, c.b); got != c.want {
			t.Errorf("sharedStem(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
