package guard

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedact: no panics; findings are sorted, disjoint and inside the
// input; no reported secret survives; the output is valid UTF-8 when the
// input was; redacting the output changes nothing.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"", "password=", "a://b:c@", "-----BEGIN ", "eyJ.eyJ.", "xoxb-", "sk-ant-",
		"key " + awsID + " here", "GITHUB_TOKEN=" + ghToken, jwtIO,
		"postgres://app:S3cr3tPassw0rd@db:5432/app\npassword: Xk9mP2qR7vL4",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n",
		awsID + ghToken + "[REDACTED:jwt]",
		`{"api_key": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"} [REDACTED:github-token`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, findings := Redact(in)
		prev := 0
		for _, fd := range findings {
			if fd.Start < prev || fd.End <= fd.Start || fd.End > len(in) {
				t.Fatalf("finding %+v out of order or bounds (prev end %d, len %d)", fd, prev, len(in))
			}
			prev = fd.End
			if secret := in[fd.Start:fd.End]; strings.Contains(out, secret) {
				t.Fatalf("reported %s secret %q survives in %q", fd.Rule, secret, out)
			}
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 output %q", out)
		}
		if again, f2 := Redact(out); again != out || len(f2) != 0 {
			t.Fatalf("not idempotent:\n once %q\ntwice %q", out, again)
		}
	})
}

// FuzzGeneratedSecret: a generated real secret, set apart by whitespace
// from arbitrary text on both sides, never survives.
func FuzzGeneratedSecret(f *testing.F) {
	for i := range secretKinds {
		f.Add("see", "done", uint8(i), uint64(i))
	}
	f.Add("password = \"", "\"", uint8(0), uint64(7))
	f.Add("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", uint8(2), uint64(9))
	f.Add("[REDACTED:", "]", uint8(3), uint64(1))
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed uint64) {
		k := secretKinds[int(kind)%len(secretKinds)]
		frag, secret := k.gen(rand.New(rand.NewPCG(seed, seed^0x5eed)))
		in := prefix + " " + frag + "\n" + suffix
		if out, _ := Redact(in); strings.Contains(out, secret) {
			t.Fatalf("%s secret %q survives in %q", k.rule, secret, out)
		}
	})
}
