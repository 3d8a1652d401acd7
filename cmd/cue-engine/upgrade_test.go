package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cuedeck/cuedeck/internal/release"
	"github.com/cuedeck/cuedeck/internal/version"
)

// versioned are cue and cue-engine built with -X versions, for the
// upgrade tests: versioned(t)["v0.1.0"]["cue"] is a path.
var versioned = sync.OnceValues(func() (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	for _, v := range []string{"v0.1.0", "v0.2.0"} {
		dir := filepath.Join(binDir, v)
		build := exec.Command("go", "build", "-ldflags", "-X github.com/cuedeck/cuedeck/internal/version.Version="+v, "-o", dir+"/", "./cmd/cue", "./cmd/cue-engine")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "HOME="+goHome)
		if b, err := build.CombinedOutput(); err != nil {
			return nil, &buildError{err, string(b)}
		}
		out[v] = map[string]string{"cue": filepath.Join(dir, "cue"), "cue-engine": filepath.Join(dir, "cue-engine")}
	}
	return out, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// releaseServer serves releases as `make release` lays them out:
// /VERSION/manifest.json beside the binaries.
type releaseServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newReleaseServer(t *testing.T) *releaseServer {
	s := &releaseServer{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// publish serves a release of the binaries of built under name v with
// data formats df and minDF; corrupt flips a byte of cue-engine as
// served, after its checksum was taken. It returns the manifest's path.
func (s *releaseServer) publish(t *testing.T, built map[string]string, v string, df, minDF int, corrupt bool) string {
	t.Helper()
	m := release.Manifest{Version: v, Commit: "test", Date: "2026-11-25T00:00:00Z", DataFormat: df, MinDataFormat: minDF}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, command := range release.Commands {
		b, err := os.ReadFile(built[command])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		name := release.FileName(command, v, runtime.GOOS, runtime.GOARCH)
		m.Files = append(m.Files, release.File{Name: name, OS: runtime.GOOS, Arch: runtime.GOARCH, Command: command, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
		if corrupt && command == "cue-engine" {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0xff
		}
		s.files["/"+v+"/"+name] = b
	}
	mb, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s.files["/"+v+"/"+release.ManifestFile] = mb
	return "/" + v + "/" + release.ManifestFile
}

// install copies the cue and cue-engine of built into a new directory,
// as a user's installation.
func install(t *testing.T, built map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, command := range release.Commands {
		b, err := os.ReadFile(built[command])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, command), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runIn runs dir/name with args in cwd (a directory outside any
// workspace when ""), with env added; it returns stdout, stderr and
// whether it succeeded.
func runIn(t *testing.T, dir, name, cwd string, env []string, args ...string) (string, string, bool) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, name), args...)
	if cwd == "" {
		cwd = t.TempDir()
	}
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err == nil
}

// installedVersions runs `version --json` on both binaries in dir.
func installedVersions(t *testing.T, dir string) (front, engine string) {
	t.Helper()
	for _, command := range release.Commands {
		out, stderr, ok := runIn(t, dir, command, "", nil, "version", "--json")
		var info version.Info
		if !ok || json.Unmarshal([]byte(out), &info) != nil {
			t.Fatalf("%s version --json: %s %s", command, out, stderr)
		}
		if command == "cue" {
			front = info.Version
		} else {
			engine = info.Version
		}
	}
	return front, engine
}

func wantInstalled(t *testing.T, dir, want string) {
	t.Helper()
	if front, engine := installedVersions(t, dir); front != want || engine != want {
		t.Errorf("installed cue %s, cue-engine %s; want both %s", front, engine, want)
	}
	// The front still reaches the engine.
	if out, stderr, ok := runIn(t, dir, "cue", "", nil, "help"); !ok || !strings.Contains(out, "cue upgrade") {
		t.Errorf("cue help after the upgrade: %s %s", out, stderr)
	}
}

func TestUpgrade(t *testing.T) {
	builds, err := versioned()
	if err != nil {
		t.Fatal(err)
	}
	old, newer := builds["v0.1.0"], builds["v0.2.0"]
	srv := newReleaseServer(t)
	v2 := srv.URL + srv.publish(t, newer, "v0.2.0", version.DataFormat, version.DataFormat, false)

	t.Run("a newer release installs and rolls back", func(t *testing.T) {
		dir := install(t, old)
		out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--manifest", v2)
		if !ok || !strings.Contains(out, "upgraded cue v0.1.0 -> v0.2.0") {
			t.Fatalf("upgrade: %s %s", out, stderr)
		}
		size := func(command string) string {
			st, err := os.Stat(newer[command])
			if err != nil {
				t.Fatal(err)
			}
			return " / " + strconv.FormatInt(st.Size(), 10) + " bytes (100%)"
		}
		if !strings.Contains(stderr, size("cue-engine")) || !strings.Contains(stderr, size("cue")) {
			t.Errorf("no progress to 100%% of each binary on stderr: %q", stderr)
		}
		wantInstalled(t, dir, "v0.2.0")
		// Up to date: nothing replaced.
		if out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--manifest", v2); !ok || !strings.Contains(out, "up to date") {
			t.Errorf("second upgrade: %s %s", out, stderr)
		}
		if out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--rollback"); !ok || !strings.Contains(out, "rolled back") {
			t.Fatalf("rollback: %s %s", out, stderr)
		}
		wantInstalled(t, dir, "v0.1.0")
		// A rollback of the rollback returns to the upgrade.
		if out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--rollback"); !ok {
			t.Fatalf("second rollback: %s %s", out, stderr)
		}
		wantInstalled(t, dir, "v0.2.0")
	})

	t.Run("a corrupt download is refused", func(t *testing.T) {
		bad := srv.URL + srv.publish(t, newer, "v0.2.1", version.DataFormat, version.DataFormat, true)
		dir := install(t, old)
		out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--manifest", bad)
		if ok || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "unchanged") {
			t.Fatalf("corrupt upgrade: ok=%v %s %s", ok, out, stderr)
		}
		wantInstalled(t, dir, "v0.1.0")
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("left in the install directory: %v", names)
		}
		if _, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--rollback"); ok || !strings.Contains(stderr, "nothing to roll back") {
			t.Errorf("rollback with nothing kept: %s", stderr)
		}
	})

	t.Run("a data format change needs --force", func(t *testing.T) {
		// The binaries are v0.2.0's; the manifest says that they store a
		// newer format and read no older one.
		bump := srv.URL + srv.publish(t, newer, "v0.3.0", version.DataFormat+1, version.DataFormat+1, false)
		dir := install(t, old)
		// The workspace's config names the release.
		ws := t.TempDir()
		writeFile(t, ws, ".cuedeck/config.toml", "[release]\nmanifest_url = \""+bump+"\"\n")
		out, stderr, ok := runIn(t, dir, "cue", ws, nil, "upgrade")
		if ok || !strings.Contains(stderr, "data format change refused") || !strings.Contains(stderr, "--force") {
			t.Fatalf("upgrade across a data format change: ok=%v %s %s", ok, out, stderr)
		}
		wantInstalled(t, dir, "v0.1.0")
		if out, stderr, ok := runIn(t, dir, "cue", ws, nil, "upgrade", "--force"); !ok || !strings.Contains(out, "-> v0.3.0") {
			t.Fatalf("upgrade --force: %s %s", out, stderr)
		}
		wantInstalled(t, dir, "v0.2.0")
	})

	t.Run("a downgrade is refused", func(t *testing.T) {
		v1 := srv.URL + srv.publish(t, old, "v0.1.0", version.DataFormat, version.DataFormat, false)
		dir := install(t, newer)
		out, stderr, ok := runIn(t, dir, "cue", "", []string{"CUE_RELEASE_URL=" + v1}, "upgrade")
		if ok || !strings.Contains(stderr, "downgrade refused") {
			t.Fatalf("downgrade: ok=%v %s %s", ok, out, stderr)
		}
		wantInstalled(t, dir, "v0.2.0")
	})

	t.Run("a dev build needs --force", func(t *testing.T) {
		dir := install(t, map[string]string{"cue": bin("cue"), "cue-engine": bin("cue-engine")})
		if _, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--manifest", v2); ok || !strings.Contains(stderr, "--force") {
			t.Fatalf("upgrade of a dev build: %s", stderr)
		}
		if out, stderr, ok := runIn(t, dir, "cue", "", nil, "upgrade", "--manifest", v2, "--force"); !ok {
			t.Fatalf("upgrade --force of a dev build: %s %s", out, stderr)
		}
		wantInstalled(t, dir, "v0.2.0")
	})

	t.Run("through a proxy", func(t *testing.T) {
		target, _ := url.Parse(srv.URL)
		var requests atomic.Int64
		forward := httputil.NewSingleHostReverseProxy(target)
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Host != "releases.cuedeck.test" {
				http.Error(w, "unexpected host "+r.URL.Host, http.StatusBadGateway)
				return
			}
			requests.Add(1)
			forward.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		// A name only the proxy resolves: Go never proxies loopback
		// addresses, and the upgrade fails without the proxy.
		via := strings.Replace(v2, target.Host, "releases.cuedeck.test", 1)
		dir := install(t, old)
		env := []string{"HTTP_PROXY=" + proxy.URL, "http_proxy=" + proxy.URL, "NO_PROXY=", "no_proxy="}
		if out, stderr, ok := runIn(t, dir, "cue", "", env, "upgrade", "--manifest", via); !ok {
			t.Fatalf("upgrade through the proxy: %s %s", out, stderr)
		}
		if n := requests.Load(); n != 3 {
			t.Errorf("the proxy forwarded %d requests; want 3 (the manifest and two binaries)", n)
		}
		wantInstalled(t, dir, "v0.2.0")
	})

	t.Run("through an HTTPS proxy", func(t *testing.T) {
		// The release over TLS, as example.com (a name in httptest's
		// certificate), reached only by CONNECT through the proxy.
		var origin atomic.Int64
		tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "example.com" {
				origin.Add(1)
			}
			srv.Config.Handler.ServeHTTP(w, r)
		}))
		defer tlsSrv.Close()
		certFile := filepath.Join(t.TempDir(), "cert.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
		if err := os.WriteFile(certFile, pemBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		var connects atomic.Int64
		var tunnels sync.WaitGroup
		defer tunnels.Wait()
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect || r.Host != "example.com:443" {
				http.Error(w, "want CONNECT example.com:443, got "+r.Method+" "+r.Host, http.StatusBadGateway)
				return
			}
			connects.Add(1)
			up, err := net.Dial("tcp", tlsSrv.Listener.Addr().String())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			down, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				up.Close()
				return
			}
			down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
			tunnels.Add(2)
			pipe := func(dst, src net.Conn) {
				defer tunnels.Done()
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(up, down)
			go pipe(down, up)
		}))
		defer proxy.Close()
		dir := install(t, old)
		env := []string{"HTTPS_PROXY=" + proxy.URL, "https_proxy=" + proxy.URL, "NO_PROXY=", "no_proxy=", "SSL_CERT_FILE=" + certFile}
		manifest := "https://example.com" + strings.TrimPrefix(v2, srv.URL)
		if out, stderr, ok := runIn(t, dir, "cue", "", env, "upgrade", "--manifest", manifest); !ok {
			t.Fatalf("upgrade through the HTTPS proxy: %s %s", out, stderr)
		}
		if connects.Load() == 0 || origin.Load() != 3 {
			t.Errorf("%d CONNECTs through the proxy, %d requests at the release server; want some, and 3", connects.Load(), origin.Load())
		}
		wantInstalled(t, dir, "v0.2.0")
	})
}
