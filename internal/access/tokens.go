package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// TokenConfig is one bearer token as configured: [[mcp.tokens]] in a
// workspace's config.toml, or a tokens file of mcp-edge.
type TokenConfig struct {
	// Name identifies the token in logs and rate limits; never secret.
	Name string `toml:"name"`
	// Token is the secret itself; or give SHA256, its hex digest, so the
	// config file holds no secret.
	Token  string `toml:"token"`
	SHA256 string `toml:"sha256"`
	// Repos the token may read; ["*"] for every repo.
	Repos []string `toml:"repos"`
}

// MinTokenLength is the shortest secret accepted: 128 bits of base64.
const MinTokenLength = 22

// ErrNoToken and ErrBadToken are what Authenticate returns for a request
// without a token and with one that matches none.
var (
	ErrNoToken  = errors.New("access: no bearer token")
	ErrBadToken = errors.New("access: invalid bearer token")
)

// Tokens verifies bearer tokens. The zero value and nil hold none.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	name   string
	digest [sha256.Size]byte
	repos  []string // nil: every repo
}

var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)

// NewTokens checks cfgs and returns the verifier. Errors name the token and
// the field to fix: a missing or duplicate name, no secret or both forms,
// a secret shorter than MinTokenLength, a digest that is not 64 hex
// digits, no repos, or "*" mixed with names.
func NewTokens(cfgs []TokenConfig) (*Tokens, error) {
	t := &Tokens{}
	seen := map[string]bool{}
	for i, c := range cfgs {
		where := fmt.Sprintf("token %d (%q)", i+1, c.Name)
		switch {
		case !tokenName.MatchString(c.Name):
			return nil, fmt.Errorf("%s: name must be 1-64 letters, digits, '_', '.', '@' or '-'", where)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: name used twice; give each token its own", where)
		case c.Token == "" && c.SHA256 == "":
			return nil, fmt.Errorf("%s: set token (the secret) or sha256 (its hex digest)", where)
		case c.Token != "" && c.SHA256 != "":
			return nil, fmt.Errorf("%s: set token or sha256, not both", where)
		case c.Token != "" && len(c.Token) < MinTokenLength:
			return nil, fmt.Errorf("%s: token is %d characters; use at least %d random ones (e.g. `openssl rand -base64 24`)", where, len(c.Token), MinTokenLength)
		case len(c.Repos) == 0:
			return nil, fmt.Errorf(`%s: repos is empty; list the repos it may read, or ["*"] for all`, where)
		case len(c.Repos) > 1 && slices.Contains(c.Repos, "*"):
			return nil, fmt.Errorf(`%s: repos mixes "*" with names; "*" alone means every repo`, where)
		}
		seen[c.Name] = true
		e := tokenEntry{name: c.Name}
		if c.Token != "" {
			e.digest = sha256.Sum256([]byte(c.Token))
		} else {
			raw, err := hex.DecodeString(strings.TrimSpace(c.SHA256))
			if err != nil || len(raw) != sha256.Size {
				return nil, fmt.Errorf("%s: sha256 must be 64 hex digits (e.g. `printf %%s TOKEN | sha256sum`)", where)
			}
			copy(e.digest[:], raw)
		}
		if c.Repos[0] != "*" {
			e.repos = slices.Clone(c.Repos)
			slices.Sort(e.repos)
		}
		t.entries = append(t.entries, e)
	}
	return t, nil
}

// Enabled reports whether any token is configured, so that callers must
// present one.
func (t *Tokens) Enabled() bool { return t != nil && len(t.entries) > 0 }

// Authenticate returns the identity of secret. Every configured token is
// compared, in constant time on digests, so neither the time taken nor an
// early exit tells how much of a guess was right or which token was near.
// It returns ErrNoToken for an empty secret and ErrBadToken when none
// matches.
func (t *Tokens) Authenticate(secret string) (Identity, error) {
	if secret == "" {
		return Identity{}, ErrNoToken
	}
	got := sha256.Sum256([]byte(secret))
	match := -1
	for i := range t.entries {
		if subtle.ConstantTimeCompare(got[:], t.entries[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Identity{}, ErrBadToken
	}
	e := t.entries[match]
	return Identity{Client: "token:" + e.name, Token: e.name, Repos: e.repos}, nil
}

// BearerSecret extracts the secret of an "Authorization: Bearer <secret>"
// header value, or "" if it has another form.
func BearerSecret(header string) string {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(secret)
}

// LoadTokensFile reads a TOML file of [[tokens]] tables (the fields of
// TokenConfig) for servers configured by flags. An empty path means no
// tokens; a file that names unknown keys or no token is an error.
func LoadTokensFile(path string) (*Tokens, error) {
	if path == "" {
		return nil, nil
	}
	var f struct {
		Tokens []TokenConfig `toml:"tokens"`
	}
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, err
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s (keys: name, token, sha256, repos)", path, undec[0])
	}
	if len(f.Tokens) == 0 {
		return nil, fmt.Errorf("%s holds no [[tokens]]", path)
	}
	t, err := NewTokens(f.Tokens)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
