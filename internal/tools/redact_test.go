package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// secret is a GitHub token the guard catches (see pkg/core/guard tests),
// assembled so this file holds none.
var secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"

func TestRedactResult(t *testing.T) {
	clean := json.RawMessage(`[{"path":"docs/a.md","anchors":["Intro","Caf\u00e9 \"quoted\""],"n":1}]`)
	if got := RedactResult(clean); string(got) != string(clean) {
		t.Fatalf("clean result changed: %s", got)
	}
	in := json.RawMessage(fmt.Sprintf(`{"z":"token %s","a":["ok","esc\"aped %s\nline"],%q:1,"n":2}`, secret, secret, secret))
	got := RedactResult(in)
	if strings.Contains(string(got), secret) {
		t.Fatalf("secret survived: %s", got)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("not JSON any more: %v: %s", err, got)
	}
	// Order and the untouched parts are kept.
	if !strings.HasPrefix(string(got), `{"z":"token [REDACTED:`) || !strings.HasSuffix(string(got), `:1,"n":2}`) {
		t.Fatalf("structure changed: %s", got)
	}
	if a := v["a"].([]any); a[0] != "ok" || !strings.HasPrefix(a[1].(string), "esc\"aped [REDACTED:") || !strings.HasSuffix(a[1].(string), "\nline") {
		t.Fatalf("array: %v", a)
	}
}

func TestRedactError(t *testing.T) {
	plain := InvalidParams(ReadDoc, "no secret here")
	if RedactError(plain) != error(plain) {
		t.Fatal("clean error replaced")
	}
	other := errors.New("internal " + secret)
	if RedactError(other) != other {
		t.Fatal("non-tool errors are the server's to handle")
	}
	leaky := &Error{Code: CodeInvalidParams, Message: "bad " + secret, Data: map[string]any{"headings": []string{"Setup", "token=" + secret}}}
	got := RedactError(leaky)
	if strings.Contains(got.Error(), secret) {
		t.Fatalf("secret survived: %v", got)
	}
	var te *Error
	if !errors.As(got, &te) || te.Code != CodeInvalidParams || len(te.Data["headings"].([]any)) != 2 {
		t.Fatalf("shape lost: %v", got)
	}
}

func TestInternalErrorIsGuarded(t *testing.T) {
	e := Internal(fmt.Errorf("fetch https://x.example/?token=%s: %w", secret, errors.New("refused")))
	if e.Code != CodeInternal || strings.Contains(e.Message, secret) || !strings.Contains(e.Message, "Internal error: fetch") || !strings.Contains(e.Message, "refused") {
		t.Errorf("%+v", e)
	}
}
