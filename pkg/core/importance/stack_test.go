package importance

import (
	"slices"
	"testing"
)

func TestStackPaths(t *testing.T) {
	cases := []struct {
		name, text, cwd string
		want            []string
	}{
		{"go panic", `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]

goroutine 1 [running]:
example.com/shop/internal/orders.(*Service).Place(0x0, {0x0, 0x0})
	/home/ana/shop/internal/orders/orders.go:42 +0x1c
example.com/shop/internal/api.(*Handler).ServeHTTP(0xc000010000, {0x5a2f40, 0xc0000a4000}, 0xc0000b2000)
	/home/ana/shop/internal/api/api.go:17 +0x5d
net/http.serverHandler.ServeHTTP({0xc0000a0000?}, {0x5a2f40?, 0xc0000a4000?}, 0x6?)
	/usr/local/go/src/net/http/server.go:3137 +0x8e
exit status 2`, "/home/ana/shop", []string{"internal/orders/orders.go", "internal/api/api.go"}},
		{"go test failure", "--- FAIL: TestPlace (0.00s)\n    orders_test.go:31: got 2, want 3\nFAIL\tgithub.com/x/shop/internal/orders\t0.004s", "/home/ana/shop", []string{"orders_test.go"}},
		{"compiler", "# example.com/shop/internal/auth\ninternal/auth/auth.go:12:2: undefined: tokn", "", []string{"internal/auth/auth.go"}},
		{"python", "Traceback (most recent call last):\n  File \"/srv/app/app/views.py\", line 8, in index\n    return render(x)\n  File \"/srv/app/.venv/lib/python3.12/site-packages/flask/app.py\", line 1, in render\nNameError: name 'x' is not defined", "/srv/app", []string{"app/views.py"}},
		{"node", "TypeError: Cannot read properties of undefined\n    at login (/work/web/src/auth.ts:14:9)\n    at /work/web/src/index.ts:3:1\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)", "/work/web", []string{"src/auth.ts", "src/index.ts"}},
		{"repeats and prose", "see main.go:3 and main.go:3 again; version 1.2:3 is not a file", "", []string{"main.go"}},
		{"none", "all tests passed", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := StackPaths(c.text, c.cwd); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestMatchPath(t *testing.T) {
	files := map[string]bool{"internal/api/api.go": true, "main.go": true}
	has := func(p string) bool { return files[p] }
	for mention, want := range map[string]string{
		"/home/ana/shop/internal/api/api.go":   "internal/api/api.go",
		"example.com/shop/internal/api/api.go": "internal/api/api.go",
		"internal/api/api.go":                  "internal/api/api.go",
		"/tmp/build/main.go":                   "main.go",
		"api.go":                               "",
		"other/api/handler.go":                 "",
	} {
		got, ok := MatchPath(mention, has)
		if got != want || ok != (want != "") {
			t.Errorf("MatchPath(%q) = %q, %v; want %q", mention, got, ok, want)
		}
	}
}

func FuzzStackPaths(f *testing.F) {
	f.Add("panic: x\n\t/a/b/c.go:1 +0x1", "/a")
	f.Add(`File "x.py", line 2`, "")
	f.Fuzz(func(t *testing.T, text, cwd string) {
		got := StackPaths(text, cwd)
		if len(got) > maxStackPaths {
			t.Fatalf("%d paths", len(got))
		}
		for _, p := range got {
			if p == "" || p == "." {
				t.Fatalf("empty path in %q", got)
			}
		}
	})
}
