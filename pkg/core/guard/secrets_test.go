package guard

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generators of realistic fake secrets: the right prefixes, lengths and
// alphabets, with random bodies. The corpus, the fuzz test and the
// benchmarks share them.

const (
	lowerAlpha   = "abcdefghijklmnopqrstuvwxyz"
	upperAlpha   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitAlpha   = "0123456789"
	alnumAlpha   = lowerAlpha + upperAlpha + digitAlpha
	b64urlAlpha  = alnumAlpha + "-_"
	b64stdAlpha  = alnumAlpha + "+/"
	passwdAlpha  = alnumAlpha + "!^*-_~+."
	upperDigits  = upperAlpha + digitAlpha
	hexLowerAlfa = "0123456789abcdef"
)

func randString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// body draws until the result has no placeholder shape and mixes lower
// case, upper case and digits where the alphabet has them.
func body(r *rand.Rand, alphabet string, n int) string {
	for {
		s := randString(r, alphabet, n)
		want := 0
		for _, a := range []string{lowerAlpha, upperAlpha, digitAlpha} {
			if strings.ContainsAny(alphabet, a) {
				want++
			}
		}
		if !structuralPlaceholder(s) && !placeholder(s) && classes(s) >= min(want, 3) {
			return s
		}
	}
}

// secretKind generates one kind of secret: the text to embed, and the
// secret substring of it that must not survive.
type secretKind struct {
	rule string
	gen  func(r *rand.Rand) (fragment, secret string)
}

func same(s string) (string, string) { return s, s }

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

var secretKinds = []secretKind{
	{RuleAWSAccessKeyID, func(r *rand.Rand) (string, string) {
		return same(pick(r, "AKIA", "ASIA") + body(r, upperDigits, 16))
	}},
	{RuleAWSSecretAccessKey, func(r *rand.Rand) (string, string) {
		v := body(r, b64stdAlpha, 40)
		key := pick(r, "aws_secret_access_key = ", "AWS_SECRET_ACCESS_KEY=", `"SecretAccessKey": "`, "aws_secret_key: ")
		return key + v + map[bool]string{true: `"`}[strings.HasSuffix(key, `"`)], v
	}},
	{RuleGitHubToken, func(r *rand.Rand) (string, string) {
		if r.IntN(4) == 0 {
			return same("github_pat_" + body(r, alnumAlpha, 22) + "_" + body(r, alnumAlpha, 59))
		}
		return same(pick(r, "ghp_", "gho_", "ghu_", "ghs_", "ghr_") + body(r, alnumAlpha, 36))
	}},
	{RuleGitLabToken, func(r *rand.Rand) (string, string) {
		return same("glpat-" + body(r, b64urlAlpha, 20))
	}},
	{RuleSlackToken, func(r *rand.Rand) (string, string) {
		return same(pick(r, "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-") + randString(r, digitAlpha, 12) + "-" +
			randString(r, digitAlpha, 13) + "-" + body(r, alnumAlpha, 24))
	}},
	{RuleSlackWebhook, func(r *rand.Rand) (string, string) {
		return same("https://hooks.slack.com/services/T" + body(r, upperDigits, 8+r.IntN(3)) + "/B" +
			body(r, upperDigits, 8+r.IntN(3)) + "/" + body(r, alnumAlpha, 24))
	}},
	{RuleStripeKey, func(r *rand.Rand) (string, string) {
		return same(pick(r, "sk_live_", "rk_live_", "sk_test_") + body(r, alnumAlpha, 24+r.IntN(76)))
	}},
	{RuleOpenAIKey, func(r *rand.Rand) (string, string) {
		if r.IntN(2) == 0 {
			return same("sk-proj-" + body(r, b64urlAlpha, 156))
		}
		return same("sk-" + body(r, alnumAlpha, 48))
	}},
	{RuleAnthropicKey, func(r *rand.Rand) (string, string) {
		return same("sk-ant-api03-" + body(r, b64urlAlpha, 93) + "AA")
	}},
	{RuleGoogleAPIKey, func(r *rand.Rand) (string, string) {
		return same("AIza" + body(r, b64urlAlpha, 35))
	}},
	{RuleJWT, func(r *rand.Rand) (string, string) {
		enc := base64.RawURLEncoding.EncodeToString
		h := enc(fmt.Appendf(nil, `{"alg":"%s","typ":"JWT"}`, pick(r, "HS256", "RS256", "ES256", "EdDSA")))
		p := enc(fmt.Appendf(nil, `{"sub":"%s","iat":%d,"scope":"%s"}`, body(r, alnumAlpha, 12), 1700000000+r.IntN(1e8), pick(r, "read", "admin", "repo")))
		return same(h + "." + p + "." + body(r, b64urlAlpha, 43))
	}},
	{RulePrivateKey, func(r *rand.Rand) (string, string) {
		label := pick(r, "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK")
		var b strings.Builder
		b.WriteString("-----BEGIN " + label + "-----\n")
		if label == "PGP PRIVATE KEY BLOCK" {
			b.WriteString("Version: GnuPG v2\n\n")
		}
		for range 3 + r.IntN(6) {
			b.WriteString(body(r, b64stdAlpha, 64) + "\n")
		}
		b.WriteString(body(r, b64stdAlpha, 20) + "=\n-----END " + label + "-----")
		return same(b.String())
	}},
	{RuleURLPassword, func(r *rand.Rand) (string, string) {
		pw := body(r, passwdAlpha, 12+r.IntN(13))
		return fmt.Sprintf("%s://%s:%s@%s", pick(r, "postgres", "mysql", "mongodb+srv", "redis", "amqp", "https"),
			pick(r, "app", "admin", "svc_deploy", "root"), pw, pick(r, "db.internal:5432/app", "10.0.3.7:6379", "cluster0.mongodb.net/prod?retryWrites=true", "mq.local")), pw
	}},
	{RuleGenericSecret, func(r *rand.Rand) (string, string) {
		if r.IntN(3) == 0 {
			v := body(r, passwdAlpha, 10+r.IntN(10))
			return fmt.Sprintf(pick(r, `password = "%s"`, `DB_PASSWORD=%s`, `"password": "%s"`, `passwd: %s`, `spring.datasource.password=%s`), v), v
		}
		v := body(r, pick(r, alnumAlpha, hexLowerAlfa, b64urlAlpha), 24+r.IntN(24))
		return fmt.Sprintf(pick(r, `api_key = "%s"`, `CLIENT_SECRET=%s`, `"auth_token": "%s"`, `SECRET_KEY: %s`,
			`apiKey: '%s'`, `X-Api-Key: %s`, `Authorization: Bearer %s`, `signing_key => "%s"`, `access_token := "%s"`), v), v
	}},
}
