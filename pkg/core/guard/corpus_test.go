package guard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/corpus.jsonl from the generators")

const corpusPath = "testdata/corpus.jsonl"

// corpusEntry is one line of testdata/corpus.jsonl.
type corpusEntry struct {
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
	Kind    string   `json:"kind"` // true-secret or look-alike
	Rule    string   `json:"rule,omitempty"`
	// KnownMiss says why the guard misses this entry's secrets today; the
	// test counts the miss against recall without failing on it.
	KnownMiss string `json:"known_miss,omitempty"`
}

// contexts place a secret where agents meet them: shell, logs, JSON,
// prose, code, YAML.
var contexts = []string{
	"export CREDENTIAL=%s\n",
	"2026-03-02T10:14:07Z INFO uploader: using %s for bucket assets-prod\n",
	`{"service": "billing", "config": {"value": "%s", "retries": 3}}`,
	"Rotate this one before Friday: `%s` (it leaked in the last incident).",
	"\tclient := api.NewClient(\"%s\", api.WithTimeout(5*time.Second))\n",
	"deploy:\n  env:\n    - %s\n  replicas: 2\n",
}

// assignmentContexts hold fragments that carry their own key.
var assignmentContexts = []string{
	"# .env for local runs\n%s\nLOG_LEVEL=debug\n",
	"Set it in the config like this:\n\n    %s\n\nthen restart.",
	"settings:\n  %s\n  region: eu-west-1\n",
	"$ cat app.conf\n%s\n$ ./app --serve",
	"[db]\nhost = \"db.internal\"\n%s\n",
}

// lookAlikes must survive the guard untouched.
var lookAlikes = []string{
	"request_id=3f2b9c1e-8d4a-4b7e-9f21-6c5d8e7a1b30 status=200 latency_ms=12",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Jane Doe <jane@example.com>",
	"Merged abc1234 and 0a1b2c3 into main; reverted 7d3e9f1.",
	"layer sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 already exists",
	"image: nginx@sha256:0b970013351304af46f322da1263516b188318682b2ab1091862497591189ff1",
	`<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`,
	`api_key = "<your-api-key>"`,
	"GITHUB_TOKEN=${GITHUB_TOKEN}",
	"password: changeme",
	"token: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	`secret = "****************"`,
	"AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
	"token_count = 42",
	"max_tokens: 4096\ntemperature: 0.2",
	`password_hint: "your first pet's name"`,
	`password = os.environ["DB_PASSWORD"]`,
	`token := os.Getenv("API_TOKEN")`,
	"const apiKey = process.env.OPENAI_API_KEY;",
	"See https://github.com/cuedeck/cuedeck/blob/main/README.md#install for details.",
	"git clone https://deploy@git.example.com/team/repo.git",
	"git@github.com:cuedeck/cuedeck.git",
	"DATABASE_URL=postgres://localhost:5432/app?sslmode=disable",
	"DATABASE_URL=postgres://user:password@localhost/db",
	"redis://:${REDIS_PASSWORD}@cache:6379/0",
	"sk-learn is a common misspelling of scikit-learn; import sklearn instead.",
	"Closed task-sk-1 and desk-sk-2 after review.",
	"pipeline step sk-preprocess-normalize-features-v2 finished in 3.2s",
	`password = "test"`,
	`api_key = "abc123"`,
	`{"cursor": "eyJ0ZXN0IjoxfQ.eyJ0ZXN0IjoxfQ.c2lnbmF0dXJl"}`,
	"cursor=eyJwYWdlIjoyLCJzaXplIjo1MH0 next page",
	"eyJhbGciOiJIUzI1NiJ9 is only a header, without payload or signature",
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@bastion",
	"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYWnm/eplO9BFtXszMRQNL5UtZ8HJ\ndTH2jBlHSZO2iKfU4oaHYYYO2hBE1Sp83PQ3Dv0jw7Y8GoYFvqe/EPPk8A==\n-----END PUBLIC KEY-----",
	"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUJ7lpDs0ePXGjB4m3N1VZj8SMzAMwCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----",
	"STRIPE_PUBLISHABLE_KEY=pk_live_51HxQ2bLkq8Zr4YtNv0aBcD3eFgHiJkLmNoPqRsTuVwXyZ",
	`cache_key = "a3f9c2e18b7d4c6f0e1a2b3c4d5e6f70"`,
	"checksum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	`integrity="sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="`,
	"AKIA prefixes mark long-term keys; ASIA marks temporary ones.",
	"secret_name: prod-db-credentials-2024",
	"auth: true\nauth_method: oauth2",
	"token_type: bearer\nexpires_in: 3599",
	`password = getpass.getpass("Password: ")`,
	`if token == "" { return ErrNoToken }`,
	`passwordField: document.querySelector("#password"),`,
	"ghp_ tokens are classic personal access tokens; gho_ ones come from OAuth.",
	"GITLAB_TOKEN=glpat-xxxxxxxxxxxxxxxxxxxx",
	"SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
	"SLACK_BOT_TOKEN=xoxb-your-bot-token",
	"Google API keys start with AIza and are 39 characters long.",
	"blob: Zm9vYmFyAKIAQWERTYUIOPASDFGHbmF6Cg==",
	"ENCRYPTION_KEY_ROTATION_DAYS=90",
	"key: 6f1ed002ab5595859014ebf0951522d9",
	"export PATH=$PATH:/usr/local/go/bin",
	"session_id=8f14e45fceea167a5a36dedd4bea2543",
	"env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-secret\n        key: password",
	"password: ${{ secrets.DB_PASSWORD }}",
	`{"token": null, "expires": 0}`,
	"TOKEN_URL=https://oauth2.googleapis.com/token",
	"passwd:         files systemd",
	`var ErrInvalidToken = errors.New("invalid token")`,
	"Use `sk_test_` keys in development and `sk_live_` keys in production.",
	"arn:aws:iam::123456789012:role/DeployRole",
	"client_id: 1234567890-k3j4h5g6f7d8s9a0.apps.googleusercontent.com",
	`tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")`,
	"jwt_secret_env: JWT_SECRET",
	`password: "{{ .Values.db.password }}"`,
	"auth_token = user.auth_token",
	"apiKey: config.apiKey,",
	"secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>",
	"10:42:17.118 DEBUG http: GET /api/v1/tokens?page=2 -> 200 (14ms)",
	"Time: 12:30:45, key=value, passes=3/3",
}

// hardSecrets are written by hand in shapes the rules were not built
// around; some are known misses (see the package's limits).
var hardSecrets = []corpusEntry{
	{Text: "mysql -u root -pNnFRIBXuDL7DxtpYlSXpfKtH app_db", Secrets: []string{"NnFRIBXuDL7DxtpYlSXpfKtH"}, Rule: "cli-flag", KnownMiss: "a password glued to a short flag has no key name"},
	{Text: "<password>F4vUCsMehGAkWvj7FAc9</password>", Secrets: []string{"F4vUCsMehGAkWvj7FAc9"}, Rule: "xml-element", KnownMiss: "XML elements are not assignments"},
	{Text: "docker login -u ci -p dckr_pat_u8jzPde0IgxLd6GncfBAepfJBd0K registry.example.com", Secrets: []string{"dckr_pat_u8jzPde0IgxLd6GncfBAepfJBd0K"}, Rule: "docker-pat", KnownMiss: "no rule for Docker Hub tokens"},
	{Text: `curl "https://api.example.com/v1/items?access_token=ba41ecccc3fc1626e53a13043b026c48bbf33fef&page=2"`, Secrets: []string{"ba41ecccc3fc1626e53a13043b026c48bbf33fef"}, Rule: RuleGenericSecret},
	{Text: "HEROKU_API_KEY=24e4e25a-15fc-499e-8fd5-8dbe7bdc968b", Secrets: []string{"24e4e25a-15fc-499e-8fd5-8dbe7bdc968b"}, Rule: RuleGenericSecret},
	{Text: "PGPASSWORD=wb8DwkNhFdnXsiVp psql -h db -U app", Secrets: []string{"wb8DwkNhFdnXsiVp"}, Rule: RuleGenericSecret},
	{Text: "./server --db-password=Tr0ub4dor-and-3 --port 8080", Secrets: []string{"Tr0ub4dor-and-3"}, Rule: RuleGenericSecret},
	{Text: `"{\"client_secret\":\"OL8dKLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKd\",\"grant_type\":\"client_credentials\"}"`, Secrets: []string{"OL8dKLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKd"}, Rule: RuleGenericSecret},
	{Text: "\tPassword: \"zz63FfkCzJr4i0B3JrTAwR4y9ojfljoQoaF1LlqsajAI\",\n", Secrets: []string{"zz63FfkCzJr4i0B3JrTAwR4y9ojfljoQoaF1LlqsajAI"}, Rule: RuleGenericSecret},
	{Text: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7QeWJKY40uvSw\\nMFLZDe1f8rESQedUStPKR0CsTy4Qzz63FfkCzJr4i0B3JrTAwR4y9ojfljoQoaF1\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@proj.iam.gserviceaccount.com"}`, Secrets: []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7QeWJKY40uvSw", "MFLZDe1f8rESQedUStPKR0CsTy4Qzz63FfkCzJr4i0B3JrTAwR4y9ojfljoQoaF1"}, Rule: RulePrivateKey},
	{Text: "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDqZ8Hb1Yw3nV6t0rK2mJxE4pL9sQhU7cR5fW1aT3oNgAAAJgk3Zp0JN2a\n... (output truncated)", Secrets: []string{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "QyNTUxOQAAACDqZ8Hb1Yw3nV6t0rK2mJxE4pL9sQhU7cR5fW1aT3oNgAAAJgk3Zp0JN2a"}, Rule: RulePrivateKey},
	{Text: `{"auths": {"registry.example.com": {"auth": "Y2k6UWVXSktZNDB1dlN3TUZMWkRlMWY4ckVTUWVkVQ=="}}}`, Secrets: []string{"Y2k6UWVXSktZNDB1dlN3TUZMWkRlMWY4ckVTUWVkVQ=="}, Rule: RuleGenericSecret},
	{Text: "POST https://slack.com/api/chat.postMessage?token=xoxp-482913750164-5938201746381-u8jzPde0IgxLd6GncfBAepfJ&channel=C024BE91L", Secrets: []string{"xoxp-482913750164-5938201746381-u8jzPde0IgxLd6GncfBAepfJ"}, Rule: RuleSlackToken},
}

// hardLookAlikes are code and data that read like assignments of secrets.
var hardLookAlikes = []string{
	"\t\tToken:    token,\n\t\tPassword: cfg.Password,\n\t\tSecret:   []byte(secret),",
	"def login(password: str, token: Optional[str] = None) -> Session:",
	"interface Config { apiKey: string; authToken?: string }",
	"secret: {{ randAlphaNum 32 }}",
	`"password": "$2b$12$KIXQJQhV1xGq7Zr1e0x7veNnFRIBXuDL7DxtpYlSXpfKtHxyz1"`,
	"nonce=8f14e45fceea167a5a36dedd4bea2543 ts=1717171717",
	"| token | string | The API token for the service |",
	"secret_version: projects/123/secrets/db/versions/latest",
	"tokens_used=18234 prompt_tokens=1200 completion_tokens=311",
	`"password_reset_url": "https://app.example.com/reset?id=ab12cd34ef56"`,
	"src: url(data:font/woff2;base64,d09GMgABAAAAAAKcAA0AAAAABjAAAAJHAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAGhYbHhw2BmAAgQ4KhCCEDws) format('woff2');",
	"X-Request-Id: 5f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e",
}

func buildCorpus() []corpusEntry {
	r := rand.New(rand.NewPCG(20260302, 1))
	var entries []corpusEntry
	for _, k := range secretKinds {
		ctxs := contexts
		if k.rule == RuleAWSSecretAccessKey || k.rule == RuleURLPassword || k.rule == RuleGenericSecret {
			ctxs = assignmentContexts
		}
		for i := range 5 {
			frag, secret := k.gen(r)
			if k.rule == RuleURLPassword && i%2 == 0 {
				frag = "DATABASE_URL=" + frag
			}
			entries = append(entries, corpusEntry{Text: fmt.Sprintf(ctxs[(i+r.IntN(2))%len(ctxs)], frag), Secrets: []string{secret}, Kind: "true-secret", Rule: k.rule})
		}
	}
	// Secrets in company: an AWS credentials file, a .env, a curl command.
	id, _ := secretKinds[0].gen(r)
	_, sec := secretKinds[1].gen(r)
	entries = append(entries, corpusEntry{
		Text:    fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\nregion = us-east-1\n", id, sec),
		Secrets: []string{id, sec}, Kind: "true-secret",
	})
	gh, _ := secretKinds[2].gen(r)
	oa, _ := secretKinds[7].gen(r)
	entries = append(entries, corpusEntry{
		Text:    fmt.Sprintf("GITHUB_TOKEN=%s\nOPENAI_API_KEY=%s\nMAX_TOKENS=2048\n", gh, oa),
		Secrets: []string{gh, oa}, Kind: "true-secret",
	})
	jwt, _ := secretKinds[10].gen(r)
	entries = append(entries, corpusEntry{
		Text:    fmt.Sprintf("curl -s -H 'Authorization: Bearer %s' https://api.internal/v1/me", jwt),
		Secrets: []string{jwt}, Kind: "true-secret",
	})
	for _, e := range hardSecrets {
		e.Kind = "true-secret"
		entries = append(entries, e)
	}
	for _, s := range append(lookAlikes, hardLookAlikes...) {
		entries = append(entries, corpusEntry{Text: s, Secrets: []string{}, Kind: "look-alike"})
	}
	return entries
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", corpusPath, err)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestCorpus measures precision and recall on the labelled corpus. A true
// secret is found when its whole text no longer appears in the output; a
// false positive is a finding in a look-alike, or a finding in a true-secret
// entry that touches none of its secrets.
func TestCorpus(t *testing.T) {
	if *updateCorpus {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, e := range buildCorpus() {
			if err := enc.Encode(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(corpusPath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries := readCorpus(t)
	var secrets, found, falsePos, lookAlikeCount int
	perRule := map[string][2]int{}
	for _, e := range entries {
		out, findings := Redact(e.Text)
		switch e.Kind {
		case "true-secret":
			for _, s := range e.Secrets {
				secrets++
				pr := perRule[e.Rule]
				pr[1]++
				if !strings.Contains(out, s) {
					found++
					pr[0]++
				} else if e.KnownMiss != "" {
					t.Logf("known miss (%s): %q", e.KnownMiss, s)
				} else {
					t.Errorf("missed %s secret %q in\n%s", e.Rule, s, e.Text)
				}
				perRule[e.Rule] = pr
			}
			for _, f := range findings {
				touches := false
				for _, s := range e.Secrets {
					for at := 0; ; {
						k := strings.Index(e.Text[at:], s)
						if k < 0 {
							break
						}
						touches = touches || f.Start < at+k+len(s) && at+k < f.End
						at += k + 1
					}
				}
				if !touches {
					falsePos++
					t.Errorf("false positive %s %q in true-secret entry", f.Rule, e.Text[f.Start:f.End])
				}
			}
		case "look-alike":
			lookAlikeCount++
			for _, f := range findings {
				falsePos++
				t.Errorf("false positive %s %q in look-alike\n%s", f.Rule, e.Text[f.Start:f.End], e.Text)
			}
		default:
			t.Fatalf("entry kind %q", e.Kind)
		}
	}
	recall := float64(found) / float64(secrets)
	precision := float64(found) / float64(found+falsePos)
	t.Logf("corpus: %d entries, %d true secrets, %d look-alikes", len(entries), secrets, lookAlikeCount)
	t.Logf("recall %.3f (%d/%d), precision %.3f (%d false positives)", recall, found, secrets, precision, falsePos)
	for _, rule := range slices.Sorted(maps.Keys(perRule)) {
		if rule != "" {
			t.Logf("  %-22s %d/%d", rule, perRule[rule][0], perRule[rule][1])
		}
	}
	if secrets < 60 || lookAlikeCount < 60 {
		t.Errorf("corpus too small: %d secrets, %d look-alikes; want 60 of each", secrets, lookAlikeCount)
	}
	if recall < 0.95 || precision < 0.95 {
		t.Errorf("recall %.3f, precision %.3f; want both ≥ 0.95", recall, precision)
	}
}
