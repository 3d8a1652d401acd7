package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// HTTPOptions configure HTTPGuard. The zero value admits every request
// with no Origin header or a same-origin one, without a token.
type HTTPOptions struct {
	// Tokens, when it holds any, must authenticate every request.
	Tokens *Tokens
	// AllowedOrigins are origins (scheme://host[:port]) whose browsers may
	// call besides the server's own.
	AllowedOrigins []string
	// Logger receives one warn line per refused request.
	Logger *slog.Logger
}

// identityExtra is the TokenInfo.Extra key of the Identity, for handlers
// that receive the SDK's TokenInfo rather than the request's context.
const identityExtra = "cuedeck.identity"

// HTTPGuard admits a request to next only if:
//
//   - its Origin header, when present, is the server's own origin or one
//     of AllowedOrigins (else 403): a web page in a browser cannot drive
//     the tools, and a DNS-rebound name does not match the Host;
//   - with tokens configured, it carries "Authorization: Bearer <token>"
//     matching one (else 401 with WWW-Authenticate: Bearer).
//
// An admitted request's context carries the token's Identity (see
// FromContext), and the MCP SDK's TokenInfo with UserID set to the token's
// name, so that a stateful MCP session stays bound to the token that
// opened it. Every refusal is logged with the reason, remote address and
// path; bodies of refusals say what to fix, never what is served.
func HTTPGuard(next http.Handler, opts HTTPOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	allowed := make(map[string]bool, len(opts.AllowedOrigins))
	for _, o := range opts.AllowedOrigins {
		allowed[normOrigin(o)] = true
	}
	refuse := func(w http.ResponseWriter, r *http.Request, code int, reason, msg string) {
		log.Warn("http request refused", "reason", reason, "status", code,
			"remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		if code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cuedeck"`)
		}
		CloseAfterRefusal(w)
		http.Error(w, msg, code)
	}
	inner := next
	if opts.Tokens.Enabled() {
		verify := func(ctx context.Context, secret string, r *http.Request) (*auth.TokenInfo, error) {
			id, err := opts.Tokens.Authenticate(secret)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
			}
			return &auth.TokenInfo{UserID: id.Token, Extra: map[string]any{identityExtra: id}}, nil
		}
		withIdentity := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
				if id, ok := ti.Extra[identityExtra].(Identity); ok {
					r = r.WithContext(WithIdentity(r.Context(), id))
				}
			}
			next.ServeHTTP(w, r)
		})
		inner = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(withIdentity)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) && !allowed[normOrigin(o)] {
			refuse(w, r, http.StatusForbidden, "origin", "Forbidden: origin "+o+" may not call this server (add it to the allowed origins if it should)")
			return
		}
		if opts.Tokens.Enabled() {
			secret := BearerSecret(r.Header.Get("Authorization"))
			if secret == "" {
				refuse(w, r, http.StatusUnauthorized, "no token", "Unauthorized: send Authorization: Bearer <token>")
				return
			}
			if _, err := opts.Tokens.Authenticate(secret); err != nil {
				refuse(w, r, http.StatusUnauthorized, "invalid token", "Unauthorized: the bearer token matches none configured")
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
}

// CloseAfterRefusal has the connection closed after the answer to a
// request refused before its body was read. Otherwise the server reads
// the rest of the body before it answers, with no deadline: a refused
// client that never finishes its body (slow, or gone) would get no answer
// and hold the connection for as long as it stays open.
func CloseAfterRefusal(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

// IdentityOf returns the Identity an HTTPGuard put in the SDK's TokenInfo.
func IdentityOf(ti *auth.TokenInfo) (Identity, bool) {
	if ti == nil {
		return Identity{}, false
	}
	id, ok := ti.Extra[identityExtra].(Identity)
	return id, ok
}

// sameOrigin reports whether origin names the host the request was sent
// to. A browser always sends its page's origin; a page of the server
// itself (a dashboard) has the request's Host.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

func normOrigin(o string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
}

// ErrOpenBind is returned by CheckBind for a non-loopback address without
// tokens.
var ErrOpenBind = errors.New("access: a non-loopback address needs bearer tokens")

// CheckBind refuses to serve addr beyond this machine without tokens: a
// host that is empty, unspecified (0.0.0.0, ::), or any address or name
// other than loopback and "localhost" needs tokens.Enabled().
func CheckBind(addr string, tokens *Tokens) error {
	if tokens.Enabled() || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("%w: %s is reachable from other machines; configure tokens, or bind 127.0.0.1", ErrOpenBind, addr)
}

// IsLoopback reports whether addr (host:port) binds only the loopback
// interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
