package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// GOROOTRepo is the --repo value that names a copy of the Go standard
// library's sources, $(go env GOROOT)/src.
const GOROOTRepo = "goroot"

// repoFile is a file of a repository as ingest's walk finds it.
type repoFile struct {
	// Path is slash-separated, relative to the root.
	Path string
	Size int64
	// Symlink is set for a symbolic link: ingest publishes it (as a skip),
	// the copy leaves it out.
	Symlink bool
}

// indexableFiles lists, in path order, the files of root that ingest's
// walk publishes: the rules of internal/ingest applied the same way, i.e.
// .git/info/exclude (lowest priority), each directory's .gitignore (deeper
// wins), then exclude (the daemon's: ingest.DefaultExclude, the config's
// [ingest] exclude and ingest.NeverPublished) over all; a file inside an
// ignored directory is never re-included, and paths events cannot carry are
// left out. Ingest publishes a record for each (indexed, or skipped as
// binary or too large), so these are the records the bench waits for.
func indexableFiles(root string, exclude []string) ([]repoFile, error) {
	w := &ruleWalk{root: root, exclude: parseIgnore([]byte(strings.Join(exclude, "\n")), nil)}
	info, err := os.ReadFile(filepath.Join(root, ".git", "info", "exclude"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("bench: %w", err)
	}
	w.info = parseIgnore(info, nil)
	if err := w.dir("", nil); err != nil {
		return nil, err
	}
	return w.files, nil
}

type ruleWalk struct {
	root          string
	info, exclude []gitignore.Pattern
	files         []repoFile
}

// dir walks the directory rel; inherited are the .gitignore patterns of
// its parents, outermost first.
func (w *ruleWalk) dir(rel string, inherited []gitignore.Pattern) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	gi, err := os.ReadFile(filepath.Join(abs, ".gitignore"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bench: %w", err)
	}
	var domain []string
	if rel != "" {
		domain = strings.Split(rel, "/")
	}
	here := append(slices.Clip(inherited), parseIgnore(gi, domain)...)
	ps := append(append(slices.Clone(w.info), here...), w.exclude...)
	m := gitignore.NewMatcher(ps)
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// os.ReadDir sorts by name, as ingest's walk does.
	for _, e := range entries {
		child := path.Join(rel, e.Name())
		if events.ValidatePath(child) != nil {
			continue
		}
		isDir := e.IsDir()
		if m.Match(strings.Split(child, "/"), isDir) {
			continue
		}
		if isDir {
			if err := w.dir(child, here); err != nil {
				return err
			}
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		w.files = append(w.files, repoFile{Path: child, Size: fi.Size(), Symlink: fi.Mode()&fs.ModeSymlink != 0})
	}
	return nil
}

func parseIgnore(b []byte, domain []string) []gitignore.Pattern {
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

// ResolveRepo is the directory --repo names: GOROOTRepo is the Go
// toolchain's src directory ($(go env GOROOT)/src, else the one this
// binary was built with); anything else is a directory.
func ResolveRepo(repo string) (string, error) {
	if repo == GOROOTRepo {
		root := ""
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			root = strings.TrimSpace(string(out))
		}
		if root == "" {
			root = runtime.GOROOT()
		}
		src := filepath.Join(root, "src")
		if st, err := os.Stat(src); err != nil || !st.IsDir() {
			return "", fmt.Errorf("bench: --repo goroot: no Go sources at %q: put go on PATH or give --repo DIR", src)
		}
		return src, nil
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("bench: --repo %s: not a directory: give a repository's top directory, or goroot", repo)
	}
	return abs, nil
}

// spread picks n of files evenly across their path order, so that a
// limited copy still spans the whole tree.
func spread(files []repoFile, n int) []repoFile {
	if n <= 0 || n >= len(files) {
		return files
	}
	out := make([]repoFile, n)
	for i := range n {
		out[i] = files[i*len(files)/n]
	}
	return out
}

// copyFiles copies files from src to dst, keeping their permission bits.
func copyFiles(src, dst string, files []repoFile, p *Progress) error {
	p.Start("copy repository", len(files))
	for i, f := range files {
		if err := copyFile(filepath.Join(src, filepath.FromSlash(f.Path)), filepath.Join(dst, filepath.FromSlash(f.Path))); err != nil {
			return fmt.Errorf("bench: copy %s: %w", f.Path, err)
		}
		p.Set(i + 1)
	}
	// A repository at rest is on disk: left dirty in the page cache, the
	// copy would be written out by the daemon's first syncs, inside the
	// measured time.
	syncDisks()
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, st.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
