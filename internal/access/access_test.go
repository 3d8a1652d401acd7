package access

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

const (
	secretA = "alpha-secret-0123456789abcdef"
	secretB = "bravo-secret-0123456789abcdef"
)

func testTokens(t *testing.T) *Tokens {
	t.Helper()
	sum := sha256.Sum256([]byte(secretB))
	tok, err := NewTokens([]TokenConfig{
		{Name: "alpha", Token: secretA, Repos: []string{"app"}},
		{Name: "bravo", SHA256: hex.EncodeToString(sum[:]), Repos: []string{"*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthenticate(t *testing.T) {
	tok := testTokens(t)
	id, err := tok.Authenticate(secretA)
	if err != nil || id.Token != "alpha" || !id.MayRead("app") || id.MayRead("secret") || !id.Restricted() {
		t.Errorf("alpha: %+v %v", id, err)
	}
	id, err = tok.Authenticate(secretB)
	if err != nil || id.Token != "bravo" || id.Restricted() || !id.MayRead("anything") {
		t.Errorf("bravo by digest: %+v %v", id, err)
	}
	if _, err := tok.Authenticate(""); !errors.Is(err, ErrNoToken) {
		t.Errorf("empty secret: %v", err)
	}
	for _, guess := range []string{secretA + "x", secretA[:len(secretA)-1], strings.ToUpper(secretA)} {
		if _, err := tok.Authenticate(guess); !errors.Is(err, ErrBadToken) {
			t.Errorf("guess %q: %v", guess, err)
		}
	}
	if (*Tokens)(nil).Enabled() || (&Tokens{}).Enabled() || !tok.Enabled() {
		t.Error("Enabled")
	}
}

func TestNewTokensRefusesBadConfig(t *testing.T) {
	long := "0123456789abcdefghijklmnop"
	for _, tc := range []struct {
		cfg  TokenConfig
		want string
	}{
		{TokenConfig{Name: "", Token: long, Repos: []string{"*"}}, "name"},
		{TokenConfig{Name: "a b", Token: long, Repos: []string{"*"}}, "name"},
		{TokenConfig{Name: "a", Repos: []string{"*"}}, "set token"},
		{TokenConfig{Name: "a", Token: long, SHA256: strings.Repeat("0", 64), Repos: []string{"*"}}, "not both"},
		{TokenConfig{Name: "a", Token: "short", Repos: []string{"*"}}, "at least"},
		{TokenConfig{Name: "a", SHA256: "xyz", Repos: []string{"*"}}, "64 hex"},
		{TokenConfig{Name: "a", Token: long}, "repos is empty"},
		{TokenConfig{Name: "a", Token: long, Repos: []string{"*", "app"}}, "mixes"},
	} {
		_, err := NewTokens([]TokenConfig{tc.cfg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	_, err := NewTokens([]TokenConfig{{Name: "a", Token: long, Repos: []string{"*"}}, {Name: "a", Token: long + "x", Repos: []string{"*"}}})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate name: %v", err)
	}
}

func TestLoadTokensFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tokens.toml")
	os.WriteFile(good, []byte("[[tokens]]\nname = \"ci\"\ntoken = \""+secretA+"\"\nrepos = [\"app\"]\n"), 0o600)
	tok, err := LoadTokensFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := tok.Authenticate(secretA); err != nil || id.Token != "ci" {
		t.Errorf("%+v %v", id, err)
	}
	typo := filepath.Join(dir, "typo.toml")
	os.WriteFile(typo, []byte("[[tokens]]\nname = \"ci\"\ntokn = \""+secretA+"\"\nrepos = [\"app\"]\n"), 0o600)
	if _, err := LoadTokensFile(typo); err == nil || !strings.Contains(err.Error(), "tokn") {
		t.Errorf("unknown key: %v", err)
	}
	if tok, err := LoadTokensFile(""); err != nil || tok.Enabled() {
		t.Errorf("no file: %v", err)
	}
}

func TestCheckBind(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:80", "localhost:0", "127.0.0.2:1"} {
		if err := CheckBind(addr, nil); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "[::]:1", "10.0.0.5:80", "edge.example:80"} {
		if err := CheckBind(addr, nil); !errors.Is(err, ErrOpenBind) {
			t.Errorf("%s without tokens: %v", addr, err)
		}
		if err := CheckBind(addr, testTokens(t)); err != nil {
			t.Errorf("%s with tokens: %v", addr, err)
		}
	}
}

func TestBearerSecret(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "abc": "", "": ""} {
		if got := BearerSecret(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// guarded serves a handler that reports the identity it was given, behind
// HTTPGuard, and collects the guard's log.
func guarded(t *testing.T, opts HTTPOptions) (*httptest.Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	opts.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	h := HTTPGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := FromContext(r.Context())
		ti := auth.TokenInfoFromContext(r.Context())
		user := ""
		if ti != nil {
			user = ti.UserID
		}
		json.NewEncoder(w).Encode(map[string]any{"client": id.Client, "repos": id.Repos, "user": user})
	}), opts)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, &logs
}

func do(t *testing.T, srv *httptest.Server, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func TestHTTPGuardTokens(t *testing.T) {
	srv, logs := guarded(t, HTTPOptions{Tokens: testTokens(t)})
	code, body := do(t, srv, map[string]string{"Authorization": "Bearer " + secretA})
	if code != 200 || !strings.Contains(body, `"client":"token:alpha"`) || !strings.Contains(body, `"repos":["app"]`) || !strings.Contains(body, `"user":"alpha"`) {
		t.Errorf("good token: %d %s", code, body)
	}
	for _, tc := range []struct {
		header map[string]string
		reason string
	}{
		{nil, "no token"},
		{map[string]string{"Authorization": "Basic " + secretA}, "no token"},
		{map[string]string{"Authorization": "Bearer " + secretA + "0"}, "invalid token"},
	} {
		logs.Reset()
		code, body := do(t, srv, tc.header)
		if code != http.StatusUnauthorized || strings.Contains(body, "client") {
			t.Errorf("%v: %d %s", tc.header, code, body)
		}
		if !strings.Contains(logs.String(), `"reason":"`+tc.reason+`"`) || !strings.Contains(logs.String(), `"status":401`) {
			t.Errorf("%v: refusal not logged: %s", tc.header, logs)
		}
	}
}

// A request refused before its body has all come (no token here) is
// answered at once and its connection closed, not held until the body
// ends.
func TestHTTPGuardAnswersARefusalBeforeTheBody(t *testing.T) {
	srv, _ := guarded(t, HTTPOptions{Tokens: testTokens(t)})
	host := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{", host)
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is unfinished: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("%d, connection close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
}

func TestHTTPGuardOrigin(t *testing.T) {
	srv, logs := guarded(t, HTTPOptions{AllowedOrigins: []string{"https://dash.team.example/"}})
	own := "http://" + strings.TrimPrefix(srv.URL, "http://")
	for _, origin := range []string{"", own, "https://dash.team.example", "HTTPS://DASH.team.example"} {
		h := map[string]string{}
		if origin != "" {
			h["Origin"] = origin
		}
		if code, body := do(t, srv, h); code != 200 || !strings.Contains(body, `"client":"local"`) {
			t.Errorf("origin %q: %d %s", origin, code, body)
		}
	}
	for _, origin := range []string{"https://evil.example", "null", "http://127.0.0.1:1"} {
		logs.Reset()
		code, body := do(t, srv, map[string]string{"Origin": origin})
		if code != http.StatusForbidden || strings.Contains(body, "client") {
			t.Errorf("origin %q: %d %s", origin, code, body)
		}
		if !strings.Contains(logs.String(), `"reason":"origin"`) {
			t.Errorf("origin %q: refusal not logged: %s", origin, logs)
		}
	}
}

func TestRateLimitMiddleware(t *testing.T) {
	clk := clock.NewDeterministic(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	lim, err := resilience.NewRateLimiter(nil, clk)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	next := tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		calls++
		return json.RawMessage(`[]`), nil
	})
	var logs bytes.Buffer
	c := RateLimit(next, lim, slog.New(slog.NewJSONHandler(&logs, nil)))
	alice := WithIdentity(context.Background(), Identity{Client: "alice"})
	bob := WithIdentity(context.Background(), Identity{Client: "bob"})
	// read_context: 15 at once, the 16th refused.
	for i := range 15 {
		if _, err := c.Call(alice, tools.ReadContext, nil); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err = c.Call(alice, tools.ReadContext, nil)
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != 429 || te.Message != "Rate Limit Exceeded" {
		t.Fatalf("16th call: %v", err)
	}
	want := map[string]any{"retry_after_seconds": 6, "limit": 10, "window_seconds": 60, "current_count": 16}
	for k, v := range want {
		if te.Data[k] != v {
			t.Errorf("data %s = %v, want %v (%v)", k, te.Data[k], v, te.Data)
		}
	}
	if calls != 15 {
		t.Errorf("next called %d times, want 15: a refused call must not reach the tool", calls)
	}
	if !strings.Contains(logs.String(), `"client":"alice"`) || !strings.Contains(logs.String(), `"tool":"read_context"`) {
		t.Errorf("refusal not logged: %s", logs.String())
	}
	// Another client, and an unlimited tool, are unaffected.
	if _, err := c.Call(bob, tools.ReadContext, nil); err != nil {
		t.Errorf("bob: %v", err)
	}
	if _, err := c.Call(alice, tools.SearchMemories, nil); err != nil {
		t.Errorf("unlimited tool: %v", err)
	}
	// One interval (60 s / 10) later, one more call is allowed.
	clk.Advance(6 * time.Second)
	if _, err := c.Call(alice, tools.ReadContext, nil); err != nil {
		t.Errorf("after refill: %v", err)
	}
	// Without a limiter nothing is refused.
	unlimited := RateLimit(next, nil, nil)
	for i := range 20 {
		if _, err := unlimited.Call(alice, tools.ReadContext, nil); err != nil {
			t.Fatalf("no limiter, call %d: %v", i+1, err)
		}
	}
}
