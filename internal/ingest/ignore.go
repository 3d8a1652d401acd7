package ingest

import (
	"bufio"
	"bytes"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreRules decides which paths of a repo are ignored: .git/info/exclude
// (lowest priority), the .gitignore of every directory (deeper wins), then
// the configured excludes (highest). The walker fills it as it reads each
// directory; the watcher and the publishers consult it.
type ignoreRules struct {
	exclude []gitignore.Pattern // Config.Exclude, applied last

	mu   sync.RWMutex
	info []gitignore.Pattern            // .git/info/exclude
	dirs map[string][]gitignore.Pattern // .gitignore patterns by directory ("" is the root)
}

func newIgnoreRules(exclude []string) *ignoreRules {
	return &ignoreRules{
		exclude: parsePatterns([]byte(strings.Join(exclude, "\n")), nil),
		dirs:    make(map[string][]gitignore.Pattern),
	}
}

// parsePatterns parses a gitignore file whose directory is domain.
func parsePatterns(b []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

func (ir *ignoreRules) setInfoExclude(b []byte) {
	ps := parsePatterns(b, nil)
	ir.mu.Lock()
	ir.info = ps
	ir.mu.Unlock()
}

// setDir records the .gitignore content of dir; nil content forgets it.
func (ir *ignoreRules) setDir(dir string, content []byte) {
	ps := parsePatterns(content, splitPath(dir))
	ir.mu.Lock()
	defer ir.mu.Unlock()
	if len(ps) == 0 {
		delete(ir.dirs, dir)
		return
	}
	ir.dirs[dir] = ps
}

// retainDirs forgets the rules of directories not in keep (a full scan no
// longer found them).
func (ir *ignoreRules) retainDirs(keep map[string]bool) {
	ir.mu.Lock()
	defer ir.mu.Unlock()
	for d := range ir.dirs {
		if !keep[d] {
			delete(ir.dirs, d)
		}
	}
}

// ignored reports whether rel (a slash-separated path relative to the repo
// root) is ignored, itself or through one of its parent directories: as in
// git, a file inside an ignored directory cannot be re-included.
func (ir *ignoreRules) ignored(rel string, isDir bool) bool {
	if rel == "" {
		return false
	}
	segs := splitPath(rel)
	ir.mu.RLock()
	ps := make([]gitignore.Pattern, 0, len(ir.info)+len(ir.exclude)+16)
	ps = append(ps, ir.info...)
	ps = append(ps, ir.dirs[""]...)
	for i := 1; i < len(segs); i++ {
		ps = append(ps, ir.dirs[strings.Join(segs[:i], "/")]...)
	}
	ir.mu.RUnlock()
	ps = append(ps, ir.exclude...)
	m := gitignore.NewMatcher(ps)
	for i := 1; i <= len(segs); i++ {
		if m.Match(segs[:i], i < len(segs) || isDir) {
			return true
		}
	}
	return false
}

func splitPath(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}
