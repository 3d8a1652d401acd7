package importance

import (
	"path"
	"regexp"
	"strings"
)

// stackFrames match the file of one stack frame or compiler diagnostic:
// Python's `File "x.py", line 3`, and `path.ext:line` as Go panics and
// test failures, Node, Rust, Java and compilers print it.
var stackFrames = []*regexp.Regexp{
	regexp.MustCompile(`File "([^"\n]+)", line \d+`),
	regexp.MustCompile(`(?:^|[\s(\[<'"=])((?:[A-Za-z]:)?[\w.@+~/\\-]*[\w-]\.[A-Za-z][\w]{0,9}):\d+`),
}

// maxStackPaths bounds what one text yields: a trace of a deep recursion
// repeats the same few files.
const maxStackPaths = 32

// LooksLikeError reports whether text reads as error output: a panic, a
// traceback, a failed test or a compiler error.
func LooksLikeError(text string) bool {
	for _, s := range errorMarkers {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

var errorMarkers = []string{"panic:", "Traceback (most recent call last)", "--- FAIL", "FAIL\t", "Error:", "error:", "Exception", "    at ", "goroutine ", "undefined:"}

// StackPaths returns the files named by the stack frames and diagnostics
// of text, in order of first mention, repeats dropped, at most 32. Paths
// under cwd (when it is absolute) are made relative to it; others are
// kept as written, cleaned, for the edge to match against a repo's files
// by suffix (MatchPath). Go's runtime and standard library frames
// ("/usr/local/go/src/…", "runtime/…") are dropped.
func StackPaths(text, cwd string) []string {
	var out []string
	seen := make(map[string]bool)
	for _, re := range stackFrames {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			p := cleanMention(m[1], cwd)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, p)
			if len(out) == maxStackPaths {
				return out
			}
		}
	}
	return out
}

// cleanMention is a frame's file as StackPaths reports it, "" to drop it.
func cleanMention(p, cwd string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.Contains(p, "://") || strings.HasPrefix(p, "<") {
		return ""
	}
	p = path.Clean(p)
	if strings.Contains(p, "/go/src/") || strings.HasPrefix(p, "runtime/") || strings.Contains(p, "/pkg/mod/") || strings.Contains(p, "site-packages/") || strings.Contains(p, "node_modules/") {
		return ""
	}
	if cwd = path.Clean(strings.ReplaceAll(cwd, `\`, "/")); strings.HasPrefix(cwd, "/") && strings.HasPrefix(p, cwd+"/") {
		p = p[len(cwd)+1:]
	}
	return strings.TrimPrefix(p, "./")
}

// MatchPath is the file of the repo (has reports membership) that a stack
// mention names: the mention itself or its longest suffix at a '/' that is
// a file, such as internal/api/api.go for
// /home/me/shop/internal/api/api.go or example.com/shop/internal/api/api.go.
// A bare file name therefore names only a file at the repo's root.
func MatchPath(mention string, has func(string) bool) (string, bool) {
	for s := strings.TrimPrefix(mention, "/"); s != ""; {
		if has(s) {
			return s, true
		}
		_, rest, ok := strings.Cut(s, "/")
		if !ok {
			break
		}
		s = rest
	}
	return "", false
}
