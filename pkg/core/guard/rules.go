package guard

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// The built-in rules' ids. They appear in markers and findings and are
// stable: dashboards and tests match on them.
const (
	// RulePrivateKey: a PEM or PGP private key block, BEGIN line through
	// END line (RSA, EC, DSA, OPENSSH, ENCRYPTED, PKCS#8, PGP ... BLOCK).
	RulePrivateKey = "private-key"
	// RuleAWSAccessKeyID: AKIA (long-term) or ASIA (temporary) and 16
	// uppercase letters or digits.
	RuleAWSAccessKeyID = "aws-access-key-id"
	// RuleAWSSecretAccessKey: a 40-character value assigned to a key naming
	// an AWS secret (aws_secret_access_key, SecretAccessKey, …).
	RuleAWSSecretAccessKey = "aws-secret-access-key"
	// RuleGitHubToken: ghp_, gho_, ghu_, ghs_, ghr_ and github_pat_ tokens.
	RuleGitHubToken = "github-token"
	// RuleGitLabToken: glpat- personal access tokens.
	RuleGitLabToken = "gitlab-token"
	// RuleSlackToken: xoxb-, xoxp-, xoxa-, xoxr- and xoxs- tokens.
	RuleSlackToken = "slack-token"
	// RuleSlackWebhook: a https://hooks.slack.com/ webhook URL, whole.
	RuleSlackWebhook = "slack-webhook-url"
	// RuleStripeKey: Stripe secret and restricted keys, live and test
	// (sk_live_, rk_live_, sk_test_, rk_test_). Test keys count: they read
	// and write the account's test data. Publishable pk_ keys are public.
	RuleStripeKey = "stripe-key"
	// RuleAnthropicKey: sk-ant- keys.
	RuleAnthropicKey = "anthropic-api-key"
	// RuleOpenAIKey: other sk- keys (legacy, sk-proj-, sk-svcacct-, …) with
	// at least 20 characters mixing upper case, lower case and digits.
	RuleOpenAIKey = "openai-api-key"
	// RuleGoogleAPIKey: AIza and 35 base64url characters.
	RuleGoogleAPIKey = "google-api-key"
	// RuleJWT: three (JWS) or five (JWE) base64url parts whose first decodes
	// to a JSON header with "alg".
	RuleJWT = "jwt"
	// RuleURLPassword: the password in scheme://user:password@host, only
	// the password; at least 6 bytes and not a placeholder.
	RuleURLPassword = "url-password"
	// RuleGenericSecret: the value in key = value, key: value, "key": "value",
	// KEY=value and key => value when the key names a secret (password,
	// token, api_key, client_secret, auth, …) and the value looks random.
	RuleGenericSecret = "generic-secret"
)

// Built-in rule numbers, in priority order; generic is numbered by New.
const (
	rPrivateKey = iota
	rAWSAccessKeyID
	rAWSSecret
	rGitHub
	rGitLab
	rSlackToken
	rSlackWebhook
	rStripe
	rAnthropic
	rOpenAI
	rGoogle
	rJWT
	rURLPassword
	numSpecific
)

var builtinIDs = [...]string{
	rPrivateKey:     RulePrivateKey,
	rAWSAccessKeyID: RuleAWSAccessKeyID,
	rAWSSecret:      RuleAWSSecretAccessKey,
	rGitHub:         RuleGitHubToken,
	rGitLab:         RuleGitLabToken,
	rSlackToken:     RuleSlackToken,
	rSlackWebhook:   RuleSlackWebhook,
	rStripe:         RuleStripeKey,
	rAnthropic:      RuleAnthropicKey,
	rOpenAI:         RuleOpenAIKey,
	rGoogle:         RuleGoogleAPIKey,
	rJWT:            RuleJWT,
	rURLPassword:    RuleURLPassword,
	numSpecific:     RuleGenericSecret,
}

// RuleIDs returns the ids of the built-in rules, in priority order: when
// two findings overlap, their union is named after the earlier rule.
func RuleIDs() []string { return append([]string(nil), builtinIDs[:]...) }

type charset [256]bool

func newCharset(ranges ...string) *charset {
	var c charset
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for b := r[0]; b <= r[2]; b++ {
				c[b] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			c[r[i]] = true
		}
	}
	return &c
}

var (
	alnum        = newCharset("a-z", "A-Z", "0-9")
	upperDigit   = newCharset("A-Z", "0-9")
	alnumUnder   = newCharset("a-z", "A-Z", "0-9", "_")
	alnumDash    = newCharset("a-z", "A-Z", "0-9", "-")
	base64url    = newCharset("a-z", "A-Z", "0-9", "-_")
	base64urlDot = newCharset("a-z", "A-Z", "0-9", "-_.")
	base64std    = newCharset("a-z", "A-Z", "0-9", "+/=")
	slackPath    = newCharset("a-z", "A-Z", "0-9", "-_/")
)

func munch(text string, i int, set *charset) int {
	for i < len(text) && set[text[i]] {
		i++
	}
	return i
}

// tokenRule finds prefix + body, where the body is the longest run of set
// after the prefix and its length is in [min, max].
type tokenRule struct {
	rule     int
	prefix   string
	set      *charset
	min, max int
	// check, if set, trims or rejects the body and may change the rule;
	// it returns the body's new length, or -1.
	check func(body string) (n, rule int)
}

var tokenRules = []tokenRule{
	{rAWSAccessKeyID, "AKIA", upperDigit, 16, 16, nil},
	{rAWSAccessKeyID, "ASIA", upperDigit, 16, 16, nil},
	{rGitHub, "ghp_", alnum, 36, 251, nil},
	{rGitHub, "gho_", alnum, 36, 251, nil},
	{rGitHub, "ghu_", alnum, 36, 251, nil},
	{rGitHub, "ghs_", alnum, 36, 251, nil},
	{rGitHub, "ghr_", alnum, 36, 251, nil},
	{rGitHub, "github_pat_", alnumUnder, 50, 251, nil},
	{rGitLab, "glpat-", base64urlDot, 20, 255, trimGitLab},
	{rSlackToken, "xox", alnumDash, 12, 255, checkSlack},
	{rStripe, "sk_live_", alnum, 16, 255, nil},
	{rStripe, "rk_live_", alnum, 16, 255, nil},
	{rStripe, "sk_test_", alnum, 16, 255, nil},
	{rStripe, "rk_test_", alnum, 16, 255, nil},
	{rOpenAI, "sk-", base64url, 20, 255, checkSK},
	{rGoogle, "AIza", base64url, 35, 35, nil},
}

func trimGitLab(body string) (int, int) {
	return len(strings.TrimRight(body, ".")), rGitLab
}

// checkSlack sees the body after "xox": a type letter, '-', then the token.
func checkSlack(body string) (int, int) {
	if len(body) < 2 || strings.IndexByte("bpars", body[0]) < 0 || body[1] != '-' {
		return -1, 0
	}
	body = strings.TrimRight(body, "-")
	if len(body) < 3 || strings.IndexAny(body[2:], "0123456789") < 0 {
		return -1, 0
	}
	return len(body), rSlackToken
}

// checkSK tells Anthropic keys from OpenAI ones and rejects prose such as
// "sk-learn-compatible": a key's random part mixes cases and digits.
func checkSK(body string) (int, int) {
	if strings.HasPrefix(body, "ant-") {
		if len(body) < 40 {
			return -1, 0
		}
		return len(body), rAnthropic
	}
	rest := body
	for _, p := range []string{"proj-", "svcacct-", "admin-", "None-"} {
		rest = strings.TrimPrefix(rest, p)
	}
	if len(rest) < 20 || classes(rest) < 3 {
		return -1, 0
	}
	return len(body), rOpenAI
}

// anchoredRule is a token rule reached from one byte of its prefix.
type anchoredRule struct {
	rule   int // index in tokenRules
	offset int // of the anchor byte in the prefix
}

// tokenAnchor is one IndexByte pass over the text serving several token
// rules: those whose prefix holds byte b (uncommon in prose and code),
// which must be followed by one of the bytes in next.
type tokenAnchor struct {
	b     byte
	next  [256]bool
	rules []anchoredRule
}

var tokenAnchors = func() []*tokenAnchor {
	var as []*tokenAnchor
	for _, b := range []byte("xkAg") {
		as = append(as, &tokenAnchor{b: b})
	}
	for r, t := range tokenRules {
		for _, a := range as {
			if k := strings.IndexByte(t.prefix, a.b); k >= 0 {
				a.rules = append(a.rules, anchoredRule{r, k})
				a.next[t.prefix[k+1]] = true
				break
			}
		}
	}
	return as
}()

// scanTokens finds the prefixed tokens. A token must not continue a word:
// the byte before its prefix is not a letter or digit.
func scanTokens(text string, cs []cand) []cand {
	// next[r]: where rule r's last body run ended. A prefix inside that run
	// ("sk-sk-sk-…") would re-read it, so it is skipped: the scan stays linear.
	var next [32]int
	for _, a := range tokenAnchors {
		for i := 0; ; {
			j := strings.IndexByte(text[i:], a.b)
			if j < 0 {
				break
			}
			p := i + j
			i = p + 1
			if p+1 >= len(text) || !a.next[text[p+1]] {
				continue
			}
			for _, ar := range a.rules {
				t := &tokenRules[ar.rule]
				start := p - ar.offset
				if start < next[ar.rule] || start < 0 || !strings.HasPrefix(text[start:], t.prefix) ||
					start > 0 && alnum[text[start-1]] {
					continue
				}
				bodyStart := start + len(t.prefix)
				end := munch(text, bodyStart, t.set)
				next[ar.rule] = end
				n, rule := end-bodyStart, t.rule
				if t.check != nil {
					if n, rule = t.check(text[bodyStart:end]); n < 0 {
						continue
					}
				}
				if n < t.min || n > t.max || structuralPlaceholder(text[bodyStart:bodyStart+n]) {
					continue
				}
				cs = append(cs, cand{start, bodyStart + n, rule})
			}
		}
	}
	return cs
}

// slackWebhook returns the end of the Slack webhook URL whose host starts
// at h, or -1. The whole URL is redacted: its path is the credential.
func slackWebhook(text string, h int) int {
	const host = "hooks.slack.com/"
	if !strings.HasPrefix(text[h:], host) {
		return -1
	}
	pathStart := h + len(host)
	end := munch(text, pathStart, slackPath)
	path := text[pathStart:end]
	if !strings.HasPrefix(path, "services/") && !strings.HasPrefix(path, "workflows/") && !strings.HasPrefix(path, "triggers/") {
		return -1
	}
	if len(path) < 30 || strings.Count(path, "/") < 3 || structuralPlaceholder(path) {
		return -1
	}
	return end
}

// scanPrivateKeys finds PEM and PGP private key blocks. A block whose END
// line is missing (a truncated paste) runs as far as its key material does.
func scanPrivateKeys(text string, cs []cand) []cand {
	const begin = "-----BEGIN "
	for i := 0; ; {
		j := strings.Index(text[i:], begin)
		if j < 0 {
			return cs
		}
		start := i + j
		labelStart := start + len(begin)
		i = labelStart
		k := strings.Index(text[labelStart:min(len(text), labelStart+64)], "-----")
		if k < 0 {
			continue
		}
		label := text[labelStart : labelStart+k]
		if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
			continue
		}
		bodyStart := labelStart + k + len("-----")
		next := strings.Index(text[bodyStart:], begin)
		if next < 0 {
			next = len(text)
		} else {
			next += bodyStart
		}
		end := pemBodyEnd(text, bodyStart)
		endLine := "-----END " + label + "-----"
		if e := strings.Index(text[bodyStart:next], endLine); e >= 0 {
			end = bodyStart + e + len(endLine)
		}
		cs = append(cs, cand{start, end, rPrivateKey})
		i = end
	}
}

// pemBodyEnd returns where the key material after a BEGIN line ends: runs
// of base64 lines and "Name: value" headers, separated by whitespace or by
// the \n escapes of a JSON string.
func pemBodyEnd(text string, i int) int {
	end := i
	for {
		j := skipPEMSpace(text, end)
		k := munch(text, j, base64std)
		tok := text[j:k]
		switch {
		case len(tok) >= 16 || len(tok) > 0 && tok[len(tok)-1] == '=':
			end = k
		case k < len(text) && (text[k] == ':' || text[k] == '-') && len(tok) > 0:
			// A header such as Proc-Type: 4,ENCRYPTED or Version: GnuPG.
			h := munch(text, k, alnumDash)
			if h >= len(text) || text[h] != ':' {
				return end
			}
			for h < len(text) && text[h] != '\n' && text[h] != '\\' {
				h++
			}
			end = h
		default:
			return end
		}
	}
}

func skipPEMSpace(text string, i int) int {
	for i < len(text) {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '\\' && i+1 < len(text) && strings.IndexByte("nrt", text[i+1]) >= 0:
			i += 2
		default:
			return i
		}
	}
	return i
}

// scanJWTs finds JWS (three parts) and JWE (five parts) compact tokens.
func scanJWTs(text string, cs []cand) []cand {
	// Anchored on 'J', much rarer than 'e'.
	for i := 0; ; {
		j := strings.IndexByte(text[i:], 'J')
		if j < 0 {
			return cs
		}
		start := i + j - 2
		i = start + 3
		if start < 0 || text[start] != 'e' || text[start+1] != 'y' || start > 0 && base64urlDot[text[start-1]] {
			continue
		}
		end := munch(text, start, base64urlDot)
		run := text[start:end]
		dots := strings.Count(run, ".")
		if dots >= 3 && run[len(run)-1] == '.' {
			// A sentence's full stop, not an empty part.
			end--
			run = run[:len(run)-1]
			dots--
		}
		if dots != 2 && dots != 4 {
			continue
		}
		parts := strings.SplitN(run, ".", 3)
		if len(parts[0]) < 10 || parts[1] == "" && dots == 2 {
			continue
		}
		if dots == 2 && base64.RawURLEncoding.DecodedLen(len(parts[1])) == 0 || !jwtHeader(parts[0]) {
			continue
		}
		if dots == 2 {
			if _, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil {
				continue
			}
		}
		cs = append(cs, cand{start, end, rJWT})
		i = end
	}
}

func jwtHeader(part string) bool {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return false
	}
	// Cheap checks first: scanJWTs may meet many eyJ runs.
	if len(b) < 2 || b[0] != '{' || !bytes.Contains(b, []byte(`"alg"`)) || !json.Valid(b) {
		return false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(b, &h) != nil {
		return false
	}
	_, ok := h["alg"]
	return ok
}

var (
	schemeChars = newCharset("a-z", "A-Z", "0-9", "+.-")
	// authorityStop ends a URL's authority.
	authorityStop = newCharset("/?#\"'`<> \t\r\n\\")
)

// scanURLs finds the password in scheme://user:password@host, and Slack
// webhook URLs.
func scanURLs(text string, cs []cand) []cand {
	for i := 0; ; {
		j := strings.Index(text[i:], "://")
		if j < 0 {
			return cs
		}
		sep := i + j
		i = sep + 3
		s := sep
		for s > 0 && schemeChars[text[s-1]] {
			s--
		}
		if s == sep || !alnum[text[s]] || text[s] <= '9' {
			continue
		}
		authStart := sep + 3
		if end := slackWebhook(text, authStart); end > 0 {
			cs = append(cs, cand{s, end, rSlackWebhook})
			i = end
			continue
		}
		authEnd := authStart
		for authEnd < len(text) && !authorityStop[text[authEnd]] {
			authEnd++
		}
		at := strings.LastIndexByte(text[authStart:authEnd], '@')
		if at < 0 || authStart+at+1 == authEnd {
			continue
		}
		colon := strings.IndexByte(text[authStart:authStart+at], ':')
		if colon < 0 {
			continue
		}
		pwStart, pwEnd := authStart+colon+1, authStart+at
		if pw := text[pwStart:pwEnd]; len(pw) >= 6 && !urlPlaceholder(pw) {
			cs = append(cs, cand{pwStart, pwEnd, rURLPassword})
		}
		i = authEnd
	}
}
