package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// Commands are the binaries `cue upgrade` installs side by side: the
// front and the engine it execs.
var Commands = []string{"cue-engine", "cue"}

// PrevSuffix names the copy of a replaced binary that Rollback restores.
const PrevSuffix = ".prev"

// Errors Upgrade returns; each comes wrapped with what to do.
var (
	ErrDowngrade     = errors.New("downgrade refused")
	ErrDataFormat    = errors.New("data format change refused")
	ErrUnversioned   = errors.New("cannot compare versions")
	ErrChecksum      = errors.New("checksum mismatch")
	ErrNoBinary      = errors.New("no binary for this platform")
	ErrNothingToUndo = errors.New("no previous binaries")
)

// Upgrader installs a release's binaries into Dir.
type Upgrader struct {
	// Dir holds the installed cue and cue-engine.
	Dir string
	// Version and DataFormat are the installed build's.
	Version    string
	DataFormat int
	// GOOS and GOARCH pick the binaries; empty: this process's.
	GOOS, GOARCH string
	// Force installs a downgrade, a release across a data-format change,
	// or any release over a build without a semantic version.
	Force bool
	// Client fetches; nil: a client whose transport honours HTTPS_PROXY,
	// HTTP_PROXY and NO_PROXY.
	Client *http.Client
	// Progress receives a progress line per download; nil: none.
	Progress io.Writer
}

// Result says what Upgrade did.
type Result struct {
	From, To  string
	Installed []string // paths replaced
	UpToDate  bool     // nothing to do
}

// Check fetches the manifest at manifestURL and decides whether it may be
// installed over u's build. It returns ErrDowngrade, ErrUnversioned or
// ErrDataFormat (wrapped, with what to do) unless u.Force is set; a
// release of the same version is returned with upToDate set.
func (u *Upgrader) Check(ctx context.Context, manifestURL string) (m *Manifest, upToDate bool, err error) {
	m, err = u.fetchManifest(ctx, manifestURL)
	if err != nil {
		return nil, false, err
	}
	c, err := CompareVersions(m.Version, u.Version)
	switch {
	case err != nil && !u.Force:
		return m, false, fmt.Errorf("%w: %v; this build is %s and the release %s: pass --force to install the release anyway", ErrUnversioned, err, u.Version, m.Version)
	case err == nil && c < 0 && !u.Force:
		return m, false, fmt.Errorf("%w: the release at %s is %s, older than this build (%s); pass --force to install it anyway", ErrDowngrade, manifestURL, m.Version, u.Version)
	case err == nil && c == 0 && !u.Force:
		return m, true, nil
	}
	if !u.Force {
		if err := u.checkDataFormat(m); err != nil {
			return m, false, err
		}
	}
	return m, false, nil
}

func (u *Upgrader) checkDataFormat(m *Manifest) error {
	switch {
	case m.MinDataFormat > u.DataFormat:
		return fmt.Errorf("%w: %s reads data format %d and later, and this build stores format %d: the new binaries would have to rebuild the workspace caches and streams; back up .cuedeck and pass --force to upgrade anyway", ErrDataFormat, m.Version, m.MinDataFormat, u.DataFormat)
	case m.DataFormat > u.DataFormat:
		return fmt.Errorf("%w: %s stores data format %d and this build format %d: once it migrates a workspace, `cue upgrade --rollback` gives back a build that cannot read it; pass --force to upgrade anyway", ErrDataFormat, m.Version, m.DataFormat, u.DataFormat)
	case m.DataFormat < u.DataFormat:
		return fmt.Errorf("%w: %s stores data format %d and reads no later one, and this build stores format %d: it could not read this build's data; pass --force to install it anyway", ErrDataFormat, m.Version, m.DataFormat, u.DataFormat)
	}
	return nil
}

// Upgrade installs the release at manifestURL into u.Dir, if Check allows
// it: it downloads every command's binary for this platform beside the
// installed one, verifies its size and sha256 against the manifest
// (ErrChecksum), and only when all are good keeps each installed binary
// as NAME.prev and renames the new one over it. A failure before the
// renames leaves the installed binaries untouched.
func (u *Upgrader) Upgrade(ctx context.Context, manifestURL string) (Result, error) {
	m, upToDate, err := u.Check(ctx, manifestURL)
	if err != nil {
		return Result{}, err
	}
	res := Result{From: u.Version, To: m.Version, UpToDate: upToDate}
	if upToDate {
		return res, nil
	}
	base, err := url.Parse(manifestURL)
	if err != nil {
		return res, err
	}
	goos, goarch := u.platform()
	type staged struct{ tmp, dst string }
	var ready []staged
	defer func() {
		for _, s := range ready {
			os.Remove(s.tmp) // gone already once renamed
		}
	}()
	for _, command := range Commands {
		f, ok := m.Find(command, goos, goarch)
		if !ok {
			return res, fmt.Errorf("%w: release %s has no %s for %s/%s", ErrNoBinary, m.Version, command, goos, goarch)
		}
		ref, err := url.Parse(f.Name)
		if err != nil {
			return res, err
		}
		dst := filepath.Join(u.Dir, exeName(command, goos))
		tmp, err := u.download(ctx, base.ResolveReference(ref).String(), f, dst)
		if err != nil {
			return res, err
		}
		ready = append(ready, staged{tmp, dst})
	}
	for _, s := range ready {
		if err := keepPrevious(s.dst); err != nil {
			return res, err
		}
		if err := os.Rename(s.tmp, s.dst); err != nil {
			return res, fmt.Errorf("install %s: %w", s.dst, err)
		}
		res.Installed = append(res.Installed, s.dst)
	}
	return res, syncDir(u.Dir)
}

// Rollback swaps each command's binary in dir with its NAME.prev, so that
// a second rollback undoes the first. Without any NAME.prev it returns
// ErrNothingToUndo.
func Rollback(dir, goos string) ([]string, error) {
	if goos == "" {
		goos = runtime.GOOS
	}
	var swapped []string
	for _, command := range Commands {
		cur := filepath.Join(dir, exeName(command, goos))
		prev := cur + PrevSuffix
		if _, err := os.Stat(prev); errors.Is(err, os.ErrNotExist) {
			continue
		}
		// cur -> tmp (a hard link: cur stays in place), prev -> cur,
		// tmp -> prev: cur is never missing.
		tmp := cur + ".rollback"
		os.Remove(tmp)
		if err := os.Link(cur, tmp); err != nil {
			return swapped, fmt.Errorf("rollback %s: %w", cur, err)
		}
		if err := os.Rename(prev, cur); err != nil {
			os.Remove(tmp)
			return swapped, fmt.Errorf("rollback %s: %w", cur, err)
		}
		if err := os.Rename(tmp, prev); err != nil {
			return swapped, fmt.Errorf("rollback %s: %w", cur, err)
		}
		swapped = append(swapped, cur)
	}
	if len(swapped) == 0 {
		return nil, fmt.Errorf("%w: no %s%s in %s: nothing to roll back to (cue upgrade keeps the replaced binaries there)", ErrNothingToUndo, Commands[0], PrevSuffix, dir)
	}
	return swapped, syncDir(dir)
}

func (u *Upgrader) platform() (string, string) {
	goos, goarch := u.GOOS, u.GOARCH
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos, goarch
}

func (u *Upgrader) client() *http.Client {
	if u.Client != nil {
		return u.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone() // Proxy: http.ProxyFromEnvironment
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t}
}

func (u *Upgrader) get(ctx context.Context, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := u.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w (behind a proxy? set HTTPS_PROXY or HTTP_PROXY)", rawURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: %s", rawURL, resp.Status)
	}
	return resp, nil
}

func (u *Upgrader) fetchManifest(ctx context.Context, manifestURL string) (*Manifest, error) {
	resp, err := u.get(ctx, manifestURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m, err := Decode(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifestURL, err)
	}
	return m, nil
}

// download fetches f into a temporary file beside dst, checks its size
// and sha256, syncs it and makes it executable; it returns the file's
// path. Nothing is left behind on error.
func (u *Upgrader) download(ctx context.Context, rawURL string, f File, dst string) (path string, err error) {
	resp, err := u.get(ctx, rawURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".upgrade-*")
	if err != nil {
		return "", fmt.Errorf("cannot write beside %s (%w): reinstall as the user who owns it", dst, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	p := &progress{w: u.Progress, name: f.Name, total: f.Size}
	// One byte over the size is enough to tell a longer file.
	n, err := io.Copy(io.MultiWriter(tmp, h, p), io.LimitReader(resp.Body, f.Size+1))
	p.done()
	if err != nil {
		return "", fmt.Errorf("download %s: %w", rawURL, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != f.Size || got != f.SHA256 {
		return "", fmt.Errorf("%w: %s is %d bytes with sha256 %s; the manifest says %d bytes, %s: the download is corrupt or was tampered with; the installed binaries are unchanged, try again later", ErrChecksum, rawURL, n, got, f.Size, f.SHA256)
	}
	if err := tmp.Chmod(0o755); err != nil {
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tmp.Name(), nil
}

// keepPrevious makes dst's current content dst.prev without ever
// removing dst: a hard link, else a copy, renamed into place.
func keepPrevious(dst string) error {
	if _, err := os.Stat(dst); errors.Is(err, os.ErrNotExist) {
		return nil // first install of this command
	}
	prev := dst + PrevSuffix
	tmp := prev + ".tmp"
	os.Remove(tmp)
	if err := os.Link(dst, tmp); err != nil {
		if err := copyFile(dst, tmp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("keep %s: %w", prev, err)
		}
	}
	if err := os.Rename(tmp, prev); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("keep %s: %w", prev, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func exeName(command, goos string) string {
	if goos == "windows" {
		return command + ".exe"
	}
	return command
}

// progress writes "NAME  1.2 / 45.6 MB" lines to w, redrawn in place, at
// most once per percent.
type progress struct {
	w           io.Writer
	name        string
	total, n    int64
	lastPercent int64
	started     bool
}

func (p *progress) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.w == nil {
		return len(b), nil
	}
	pct := int64(100)
	if p.total > 0 {
		pct = p.n * 100 / p.total
	}
	if !p.started || pct != p.lastPercent {
		p.started, p.lastPercent = true, pct
		fmt.Fprintf(p.w, "\rdownloading %s  %d / %d bytes (%d%%)", p.name, p.n, p.total, pct)
	}
	return len(b), nil
}

func (p *progress) done() {
	if p.w != nil && p.started {
		fmt.Fprintln(p.w)
	}
}
