package guard

import (
	"bytes"
	"math"
	"strings"
)

// The generic rule's thresholds, tuned on testdata/corpus.jsonl. People
// choose passwords, so a password key accepts shorter, plainer values than
// a token or API-key name, whose values are machine-made. Every value must
// also mix two of lower case, upper case and digits, and hold no spaces.
const (
	passwordMinLen     = 8
	passwordMinEntropy = 2.5 // bits per byte
	secretMinLen       = 16
	secretMinEntropy   = 3.0
	valueMaxLen        = 1024
)

// keyKind is what an assignment's key name says about its value.
type keyKind int

const (
	keyNone keyKind = iota
	keyPassword
	keySecret
	keyAWSSecret
)

var (
	keyChars = newCharset("a-z", "A-Z", "0-9", "_.-")
	// valueStop ends an unquoted value: whitespace (and everything outside
	// printable ASCII), quotes, and the punctuation that ends a value in
	// code, query strings and connection strings.
	valueStop = func() *charset {
		var c charset
		for b := 0; b < 256; b++ {
			c[b] = b <= ' ' || b >= 0x7f
		}
		for _, b := range []byte("\"'`,;&()[]{}<>\\") {
			c[b] = true
		}
		return &c
	}()
)

// scanAssignments finds secrets assigned to keys that name them.
func scanAssignments(text string, cs []cand, rule int) []cand {
	for _, sep := range []byte{'=', ':'} {
		var memo valueRun
		for i := 0; ; {
			j := strings.IndexByte(text[i:], sep)
			if j < 0 {
				break
			}
			p := i + j
			i = p + 1
			if vs := valueStart(text, p); vs > 0 {
				if kind := keyBefore(text, p); kind != keyNone {
					if s, e, ok := value(text, vs, kind, &memo); ok {
						r := rule
						if kind == keyAWSSecret {
							r = rAWSSecret
						}
						cs = append(cs, cand{s, e, r})
					}
				}
			}
		}
	}
	return cs
}

// valueStart returns where the value after the separator at p begins, or
// 0 if p is not an assignment (==, !=, <=, >=, ::, ://).
func valueStart(text string, p int) int {
	next := func(k int) byte {
		if k < len(text) {
			return text[k]
		}
		return 0
	}
	var prev byte
	if p > 0 {
		prev = text[p-1]
	}
	if text[p] == ':' {
		switch {
		case prev == ':' || next(p+1) == ':':
			return 0
		case next(p+1) == '/' && next(p+2) == '/':
			return 0
		case next(p+1) == '=':
			return p + 2
		}
		return p + 1
	}
	if strings.IndexByte("=!<>:", prev) >= 0 && prev != 0 || next(p+1) == '=' {
		return 0
	}
	if next(p+1) == '>' {
		return p + 2
	}
	return p + 1
}

// keyBefore reads the key left of the separator at p: spaces, an optional
// closing quote (maybe JSON-escaped, maybe in ["…"]), then the name.
func keyBefore(text string, p int) keyKind {
	k := p
	for k > 0 && p-k < 4 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k > 1 && text[k-1] == ']' && (text[k-2] == '"' || text[k-2] == '\'') {
		k-- // config["password"] = …; a bare ] is a marker's end, not a key's
	}
	if k > 0 && (text[k-1] == '"' || text[k-1] == '\'' || text[k-1] == '`') {
		k--
		if k > 0 && text[k-1] == '\\' {
			k--
		}
	}
	end := k
	for k > 0 && end-k < 80 && keyChars[text[k-1]] {
		k--
	}
	if k == end || end-k >= 80 {
		return keyNone
	}
	if key := text[k:end]; hasKeyHint(key) {
		return classifyKey(key)
	}
	return keyNone
}

// hasKeyHint reports whether key contains, in any case, a substring every
// secret key name has: pass, pwd, secret, token, key, auth or cred. It is
// the cheap filter before the key is split into words.
func hasKeyHint(key string) bool {
	for i := 0; i+3 <= len(key); i++ {
		var hint string
		switch key[i] | 0x20 {
		case 'p':
			if hasPrefixFold(key[i:], "pwd") {
				return true
			}
			hint = "pass"
		case 's':
			hint = "secret"
		case 't':
			hint = "token"
		case 'k':
			hint = "key"
		case 'a':
			hint = "auth"
		case 'c':
			hint = "cred"
		default:
			continue
		}
		if hasPrefixFold(key[i:], hint) {
			return true
		}
	}
	return false
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case; prefix is lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

var (
	passwordWords = set("password", "passwd", "pwd", "pass", "passphrase", "passcode")
	secretWords   = set("secret", "token", "apikey", "auth", "authorization", "credential", "credentials",
		"secretkey", "accesskey", "privatekey", "authtoken", "accesstoken", "apitoken", "apisecret", "clientsecret")
	// secretSuffixes catch run-together names: dbpassword, mytoken.
	secretSuffixes = []string{"password", "passwd", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey"}
	// keyQualifiers make a following "key" a secret: api_key, signing_key.
	keyQualifiers = set("api", "access", "secret", "private", "signing", "sign", "encryption", "encrypt", "master",
		"auth", "client", "app", "application", "account", "service", "license", "shared", "session", "hmac",
		"jwt", "webhook", "admin", "subscription", "consumer", "storage", "aws")
	// notSecretLast: a key ending in one of these describes a secret
	// without holding it (token_count, password_hint, secret_name).
	notSecretLast = set("count", "counts", "length", "len", "hint", "hints", "type", "types", "name", "names",
		"id", "ids", "file", "path", "dir", "url", "uri", "endpoint", "env", "var", "field", "prompt", "label",
		"policy", "limit", "max", "min", "size", "ttl", "timeout", "expiry", "expires", "expiration", "expired",
		"format", "header", "param", "regex", "pattern", "enabled", "enable", "disabled", "required", "reset",
		"version", "kind", "mode", "hash", "digest", "algorithm", "alg", "method", "provider", "store", "manager",
		"location", "source", "ref", "usage", "used", "budget", "estimate", "ratio", "rate", "index", "idx",
		"prefix", "suffix", "chars", "rotation", "rules", "strength", "validator", "valid", "error", "message",
		"msg", "help", "description", "placeholder", "input", "class", "fingerprint", "length", "policy", "at",
		"date", "time", "by", "level", "scope", "scopes", "check", "checker", "service", "server", "host", "port",
		"user", "username", "login", "email", "mask", "masked", "field", "form", "key")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// maxKeyWords bounds the words classifyKey reads; longer names are not keys.
const maxKeyWords = 16

// classifyKey splits a key name into lower-case words (at _ - . and case
// changes) and says whether it names a password, a secret, or neither. It
// works in stack buffers: it runs for every key that passes hasKeyHint.
func classifyKey(key string) keyKind {
	if len(key) > 80 {
		return keyNone
	}
	var lower, joined [80]byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	var spans [maxKeyWords][2]int
	n := splitWords(key, &spans)
	if n == 0 || n > maxKeyWords {
		return keyNone
	}
	word := func(i int) []byte { return lower[spans[i][0]:spans[i][1]] }
	last := word(n - 1)
	if notSecretLast[string(last)] && !(string(last) == "key" && n > 1 && keyQualifiers[string(word(n-2))]) {
		return keyNone
	}
	aws, kind, nj := false, keyNone, 0
	for i := range n {
		w := word(i)
		nj += copy(joined[nj:], w)
		aws = aws || string(w) == "aws"
		switch {
		case passwordWords[string(w)]:
			kind = max(kind, keyPassword)
		case secretWords[string(w)], string(w) == "key" && i > 0 && keyQualifiers[string(word(i-1))]:
			kind = max(kind, keySecret)
		default:
			for _, s := range secretSuffixes {
				if bytes.HasSuffix(w, []byte(s)) {
					k := keySecret
					if strings.HasPrefix(s, "pass") {
						k = keyPassword
					}
					kind = max(kind, k)
				}
			}
		}
	}
	j := joined[:nj]
	if kind != keyNone && (aws && bytes.Contains(j, []byte("secret")) || bytes.Contains(j, []byte("secretaccesskey"))) {
		return keyAWSSecret
	}
	return kind
}

// splitWords records the words of key in spans and returns how many there
// are; more than len(spans) means too many.
func splitWords(key string, spans *[maxKeyWords][2]int) int {
	n, start := 0, 0
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	flush := func(end int) {
		if end > start {
			if n < len(spans) {
				spans[n] = [2]int{start, end}
			}
			n++
		}
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c == '-' || c == '.' {
			flush(i)
			start = i + 1
			continue
		}
		if i > start && isUpper(c) && (isLower(key[i-1]) || i+1 < len(key) && isUpper(key[i-1]) && isLower(key[i+1])) {
			flush(i)
			start = i
		}
	}
	flush(len(key))
	return n
}

// valueRun is the last run of value bytes value read: [start, end).
type valueRun struct{ start, end int }

// value reads the value starting at vs and reports its span if it looks
// like a secret for a key of this kind.
func value(text string, vs int, kind keyKind, memo *valueRun) (start, end int, ok bool) {
	for vs < len(text) && (text[vs] == ' ' || text[vs] == '\t') {
		vs++
	}
	if vs >= len(text) {
		return 0, 0, false
	}
	// An opening quote, maybe JSON-escaped; Python's b"" and r"" too.
	var quote string
	q := vs
	if (text[q] == 'b' || text[q] == 'r') && q+1 < len(text) && (text[q+1] == '"' || text[q+1] == '\'') {
		q++
	}
	if text[q] == '\\' && q+1 < len(text) && text[q+1] == '"' {
		quote = `\"`
	} else if text[q] == '"' || text[q] == '\'' || text[q] == '`' {
		quote = text[q : q+1]
	}
	if quote != "" {
		vs = q + len(quote)
	}
	start = skipAuthScheme(text, vs)
	// Values inside one run end where the run does: remember it, so a run
	// full of separators (password=password=…) is read once.
	if start < memo.start || start >= memo.end {
		memo.start, memo.end = start, munch(text, start, notValueStop)
	}
	end = min(memo.end, start+valueMaxLen+1)
	if quote != "" {
		if !strings.HasPrefix(text[end:], quote) {
			return 0, 0, false // spaces or escapes inside: prose, not a secret
		}
	} else if end < len(text) && (text[end] == '(' || text[end] == '[') {
		return 0, 0, false // a call or an index: code computes the value
	} else if end > start && text[end-1] == ':' {
		return 0, 0, false // a key, not a value: pass: Authorization: …
	}
	v := text[start:end]
	if kind == keyAWSSecret && len(v) == 40 && !structuralPlaceholder(v) && onlyFrom(v, base64std) && !strings.HasSuffix(v, "=") {
		return start, end, true
	}
	if quote == "" && codeExpression(v) {
		return 0, 0, false
	}
	if !secretValue(v, kind) {
		return 0, 0, false
	}
	return start, end, true
}

var notValueStop = func() *charset {
	var c charset
	for b := range c {
		c[b] = !valueStop[b]
	}
	return &c
}()

// skipAuthScheme skips "Bearer ", "Basic ", "Token " and "Digest ".
func skipAuthScheme(text string, i int) int {
	for _, s := range []string{"bearer ", "basic ", "token ", "digest "} {
		if len(text)-i > len(s) && strings.EqualFold(text[i:i+len(s)], s) {
			return i + len(s)
		}
	}
	return i
}

func onlyFrom(s string, set *charset) bool {
	for i := 0; i < len(s); i++ {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

var identChars = newCharset("a-z", "A-Z", "0-9", "_")

// codeExpression reports whether an unquoted value reads as code, not a
// literal: an identifier or dotted path without digits (userPassword,
// os.environ, settings.SECRET_KEY). Machine-made secrets have digits.
func codeExpression(v string) bool {
	if v == "" || !(v[0] == '_' || alnum[v[0]] && v[0] > '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= '0' && c <= '9' || c == '.' && (i+1 == len(v) || v[i+1] == '.') || c != '.' && !identChars[c] {
			return false // digits, an empty part, or a byte outside identifiers
		}
	}
	return true
}

// secretValue applies the generic thresholds.
func secretValue(v string, kind keyKind) bool {
	minLen, minEntropy := secretMinLen, secretMinEntropy
	if kind == keyPassword {
		minLen, minEntropy = passwordMinLen, passwordMinEntropy
	}
	return len(v) >= minLen && len(v) <= valueMaxLen && classes(v) >= 2 &&
		!placeholder(v) && entropy(v) >= minEntropy
}

// classes counts which of lower case, upper case and digits s uses.
func classes(s string) int {
	var lower, upper, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		}
	}
	return lower + upper + digit
}

// entropy is the Shannon entropy of s's bytes, in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// placeholderWords mark a value as a stand-in: documentation, templates,
// environment lookups, test fixtures.
var placeholderWords = []string{
	"example", "changeme", "change_me", "change-me", "dummy", "placeholder", "your", "redacted", "sample",
	"xxxx", "****", "....", "${", "{{", "}}", "%s", "%(", "todo", "fixme", "replace", "insert", "fake",
	"mock", "secret", "password", "passwd", "token", "test", "foobar", "lorem", "null", "none", "undefined",
	"getenv", "environ", "process.env", "env(", "vault:", "ssm:", "arn:aws",
}

// placeholder reports whether a generic value is a stand-in, not a secret.
func placeholder(v string) bool {
	if strings.IndexByte("$%<", v[0]) >= 0 || structuralPlaceholder(v) {
		return true
	}
	lower := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// structuralPlaceholder reports shapes no random secret has: a run of
// eight identical bytes (00000000), four filler bytes (xxxx, ****, ####,
// ....), or a counting run (12345678, abcdefgh). Token rules use only this
// check, so that a real token is never spared for a word inside it; the
// thresholds leave a random body's chance of tripping them below 1e-4.
func structuralPlaceholder(s string) bool {
	run := 1
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1] {
			run = 1
			continue
		}
		run++
		if run >= 8 || run >= 4 && strings.IndexByte("xX*#.", s[i]) >= 0 {
			return true
		}
	}
	lower := strings.ToLower(s)
	return strings.Contains(lower, "12345678") || strings.Contains(lower, "abcdefgh") || strings.Contains(lower, "xxxx")
}

// urlPlaceholder reports a URL password that stands in for one:
// user:password@, user:${DB_PASSWORD}@, user:<pass>@.
func urlPlaceholder(pw string) bool {
	switch strings.ToLower(pw) {
	case "password", "passwd", "secret", "changeme", "pass123", "password1", "example":
		return true
	}
	return placeholder(pw) || strings.IndexAny(pw, "{}") >= 0
}
