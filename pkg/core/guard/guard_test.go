package guard

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fake secrets, assembled so that no scanner reading this file sees a
// whole one.
var (
	ghToken  = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
	awsID    = "AKIA" + "Q7ZK2M4N6P8R3T5V"
	awsDocID = "AKIA" + "IOSFODNN7EXAMPLE"
	jwtIO    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

func TestRedactRules(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"key " + awsID + " here", "key [REDACTED:aws-access-key-id] here"},
		{"GITHUB_TOKEN=" + ghToken, "GITHUB_TOKEN=[REDACTED:github-token]"},
		{"postgres://app:S3cr3tPassw0rd@db:5432/app", "postgres://app:[REDACTED:url-password]@db:5432/app"},
		{"redis://:p@ss:w0rd!@cache:6379", "redis://:[REDACTED:url-password]@cache:6379"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED:private-key]\nafter"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED:private-key]"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n[truncated]", "[REDACTED:private-key]\n[truncated]"},
		{"Authorization: Bearer " + jwtIO, "Authorization: Bearer [REDACTED:jwt]"},
		{"token " + jwtIO + ".", "token [REDACTED:jwt]."},
		{`{"api_key": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"}`, `{"api_key": "[REDACTED:generic-secret]"}`},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz0Kq9WrTb", "aws_secret_access_key = [REDACTED:aws-secret-access-key]"},
		{`"password" => "Xk9mP2qR7vL4"`, `"password" => "[REDACTED:generic-secret]"`},
		{`secret := "Xk9mP2qR7vL4nB8wQ3zT"`, `secret := "[REDACTED:generic-secret]"`},
		// Look-alikes.
		{"token_count = 42", "token_count = 42"},
		{"password_hint: Xk9mP2qR7vLqweqwe", "password_hint: Xk9mP2qR7vLqweqwe"},
		{"we use sk-learn-compatible-estimators-here", "we use sk-learn-compatible-estimators-here"},
		{"password = os.environ['DB_PASSWORD']", "password = os.environ['DB_PASSWORD']"},
		{"pk_live_" + "51HxQ2bLkq8Zr4YtNv0aBcD3eFgHiJ", "pk_live_" + "51HxQ2bLkq8Zr4YtNv0aBcD3eFgHiJ"},
		{"naïve café — ünïcödé only", "naïve café — ünïcödé only"},
	} {
		got, _ := Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestFindingsPointIntoTheInput(t *testing.T) {
	in := "a " + awsID + " b\nGITHUB_TOKEN=" + ghToken + "\n"
	out, findings := Redact(in)
	if len(findings) != 2 {
		t.Fatalf("findings %v, want 2", findings)
	}
	for i, want := range []struct{ rule, secret string }{{RuleAWSAccessKeyID, awsID}, {RuleGitHubToken, ghToken}} {
		f := findings[i]
		if f.Rule != want.rule || in[f.Start:f.End] != want.secret {
			t.Errorf("finding %d: %s %q, want %s %q", i, f.Rule, in[f.Start:f.End], want.rule, want.secret)
		}
	}
	if strings.Contains(out, awsID) || strings.Contains(out, ghToken) {
		t.Errorf("secret survived: %q", out)
	}
}

// TestMarkerCompletesABoundary: the AWS id's last digit hides the GitHub
// token's left boundary until the id is redacted; one call catches both.
func TestMarkerCompletesABoundary(t *testing.T) {
	in := awsID + ghToken
	out, findings := Redact(in)
	if out != "[REDACTED:aws-access-key-id][REDACTED:github-token]" {
		t.Fatalf("got %q", out)
	}
	if len(findings) != 2 || in[findings[1].Start:findings[1].End] != ghToken {
		t.Fatalf("findings %v", findings)
	}
}

func TestSecretRedactedEverywhere(t *testing.T) {
	in := "PGPASSWORD=Xk9mP2qR7vL4 psql\nlater the log echoed Xk9mP2qR7vL4 back"
	out, findings := Redact(in)
	if strings.Contains(out, "Xk9mP2qR7vL4") || len(findings) != 2 {
		t.Fatalf("got %q %v", out, findings)
	}
}

func TestIdempotentOnCorpus(t *testing.T) {
	for _, e := range readCorpus(t) {
		once, _ := Redact(e.Text)
		twice, f := Redact(once)
		if twice != once || len(f) != 0 {
			t.Errorf("not idempotent:\n once %q\ntwice %q", once, twice)
		}
		if !utf8.ValidString(once) {
			t.Errorf("invalid UTF-8 from %q", e.Text)
		}
	}
}

func TestDocExamples(t *testing.T) {
	in := "AWS_ACCESS_KEY_ID=" + awsDocID + "\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nJWT=" + jwtIO
	if _, f := Redact(in); len(f) != 3 {
		t.Errorf("default guard: %d findings, want 3 (documentation examples are redacted)", len(f))
	}
	g, err := New(Options{AllowDocExamples: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, f := g.Redact(in); out != in {
		t.Errorf("AllowDocExamples: %q %v", out, f)
	}
}

func TestAllowlist(t *testing.T) {
	g, err := New(Options{
		Allow:         []string{ghToken},
		AllowPatterns: []*regexp.Regexp{regexp.MustCompile(`^AKIA.*TEST`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := ghToken + " " + "AKIA" + "Q7ZK2M4N6P8RTEST" + " " + awsID
	out, _ := g.Redact(in)
	if want := ghToken + " " + "AKIA" + "Q7ZK2M4N6P8RTEST" + " [REDACTED:aws-access-key-id]"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestOptions(t *testing.T) {
	g, err := New(Options{
		Marker: "<secret:%s>",
		Rules:  []Rule{{ID: "acme-key", Keywords: []string{"acme_"}, Pattern: regexp.MustCompile(`\bacme_(?P<secret>[a-f0-9]{32})\b`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := "k=acme_0123456789abcdef0123456789abcdef " + ghToken
	out, f := g.Redact(in)
	if want := "k=acme_<secret:acme-key> <secret:github-token>"; out != want {
		t.Errorf("got %q, want %q (%v)", out, want, f)
	}
	if again, _ := g.Redact(out); again != out {
		t.Errorf("custom marker not idempotent: %q", again)
	}

	for _, m := range []string{"%s", "[x]", "[%s", "%s]", "[%s%s]", "a%sb", "[%d:%s]"} {
		if _, err := New(Options{Marker: m}); !errors.Is(err, ErrInvalidMarker) {
			t.Errorf("marker %q: err %v, want ErrInvalidMarker", m, err)
		}
	}
	for _, r := range []Rule{
		{ID: "", Pattern: regexp.MustCompile("x")},
		{ID: "Bad_ID", Pattern: regexp.MustCompile("x")},
		{ID: RuleJWT, Pattern: regexp.MustCompile("x")},
		{ID: "no-pattern"},
	} {
		if _, err := New(Options{Rules: []Rule{r}}); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("rule %q: err %v, want ErrInvalidRule", r.ID, err)
		}
	}
}

func TestRuleIDsAreStable(t *testing.T) {
	want := "private-key aws-access-key-id aws-secret-access-key github-token gitlab-token slack-token slack-webhook-url stripe-key anthropic-api-key openai-api-key google-api-key jwt url-password generic-secret"
	if got := strings.Join(RuleIDs(), " "); got != want {
		t.Errorf("RuleIDs() = %s\nwant %s", got, want)
	}
}

func TestEntropy(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want float64
	}{{"aaaa", 0}, {"abab", 1}, {"abcd", 2}} {
		if got := entropy(tc.s); got != tc.want {
			t.Errorf("entropy(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestClassifyKey(t *testing.T) {
	for key, want := range map[string]keyKind{
		"password": keyPassword, "DB_PASSWORD": keyPassword, "pgpassword": keyPassword, "passwd": keyPassword,
		"api_key": keySecret, "apiKey": keySecret, "APIKEY": keySecret, "X-Api-Key": keySecret, "client_secret": keySecret,
		"Authorization": keySecret, "auth_token": keySecret, "SECRET_KEY_BASE": keySecret,
		"aws_secret_access_key": keyAWSSecret, "AWSSecretAccessKey": keyAWSSecret, "SecretAccessKey": keyAWSSecret,
		"token_count": keyNone, "password_hint": keyNone, "max_tokens": keyNone, "key": keyNone, "cache_key": keyNone,
		"author": keyNone, "tokenizer": keyNone, "public_key": keyNone, "secret_name": keyNone, "monkey": keyNone,
	} {
		if got := classifyKey(key); got != want {
			t.Errorf("classifyKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestMarkerIsNotAKey: a marker's rule id reads like a key name
// (github-token, url-password); it must not make the next value a secret.
func TestMarkerIsNotAKey(t *testing.T) {
	in := "[REDACTED:github-token]: Xk9mP2qR7vL4nB8wQ3zT and [REDACTED:url-password]=Xk9mP2qR7vL4"
	if out, f := Redact(in); out != in {
		t.Errorf("got %q %v", out, f)
	}
	in = `config["password"] = "Xk9mP2qR7vL4"`
	if out, _ := Redact(in); out != `config["password"] = "[REDACTED:generic-secret]"` {
		t.Errorf("got %q", out)
	}
}

func TestRedactKeepingLines(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAx7Yq2n8T0fVbS3kQ9mW1pL4r\n", 4) + "-----END RSA PRIVATE KEY-----"
	in := "line 1 " + ghToken + "\nline 2\n" + key + "\nlast line " + ghToken + "\n"
	out, found := RedactKeepingLines(in)
	if len(found) != 3 {
		t.Fatalf("findings %+v", found)
	}
	if strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Fatalf("line count %d, want %d:\n%s", strings.Count(out, "\n"), strings.Count(in, "\n"), out)
	}
	if strings.Contains(out, "MIIE") || strings.Contains(out, ghToken) {
		t.Fatalf("secret kept:\n%s", out)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[2], "[REDACTED:") || !strings.HasPrefix(lines[8], "last line [REDACTED:github") {
		t.Fatalf("lines moved:\n%s", out)
	}
	plain, _ := Redact(in)
	if strings.Count(plain, "\n") >= strings.Count(in, "\n") {
		t.Fatal("Redact should drop the key's lines, or this test proves nothing")
	}
	if again, f := RedactKeepingLines(out); again != out || len(f) != 0 {
		t.Fatalf("not idempotent: %q %+v", again, f)
	}
	if same, _ := RedactKeepingLines("no secrets\nhere"); same != "no secrets\nhere" {
		t.Fatal("clean text changed")
	}
}

func TestRedactionsCountsFindings(t *testing.T) {
	before := Redactions()
	if _, f := Redact("clean text, nothing to hide"); len(f) != 0 {
		t.Fatalf("clean text: findings %v", f)
	}
	if got := Redactions(); got != before {
		t.Fatalf("clean text moved Redactions from %d to %d", before, got)
	}
	_, f := Redact("a " + awsID + " b and again " + awsID)
	if len(f) != 2 {
		t.Fatalf("findings = %d, want 2", len(f))
	}
	if got := Redactions(); got < before+2 {
		t.Fatalf("Redactions = %d, want at least %d", got, before+2)
	}
}
