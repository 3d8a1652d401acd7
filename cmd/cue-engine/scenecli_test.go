package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func sceneWorkspace(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, ".cuedeck/cards/a.md", "---\nid: a\ntitle: A\nstatus: active\n---\n\nDo it. See @docs/api.md#Login.\n")
	writeFile(t, dir, "docs/api.md", "# API\n\n## Login\n\nPOST /login with password: \"Xk9mP2qR7vL4\"\n")
	return dir
}

func TestSceneDryRunPrintsAndWritesNothing(t *testing.T) {
	dir := sceneWorkspace(t)
	cmd := exec.Command(bin("cue"), "scene", "--workspace", dir, "a", "-d", "--token-limit", "4000")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("cue scene -d: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "Do it.") || !strings.Contains(out.String(), "POST /login") {
		t.Errorf("stdout lacks the scene:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Xk9mP2qR7vL4") {
		t.Errorf("scene leaks the password")
	}
	if _, err := os.Stat(filepath.Join(dir, ".cuedeck", "SCENE.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run wrote SCENE.md (err %v)", err)
	}
}

func TestSceneWritesFileAndWarnsWithoutClipboard(t *testing.T) {
	dir := sceneWorkspace(t)
	cmd := exec.Command(bin("cue"), "scene", "--workspace", dir)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir()) // no clipboard tool
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("cue scene: %v\n%s", err, errOut.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, ".cuedeck", "SCENE.md"))
	if err != nil || !strings.Contains(string(got), "Do it.") {
		t.Fatalf("SCENE.md: %v\n%s", err, got)
	}
	if !strings.Contains(errOut.String(), "clipboard") {
		t.Errorf("stderr does not warn about the clipboard:\n%s", errOut.String())
	}
}

func TestSceneCycleFails(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".cuedeck/cards/a.md", "---\nid: a\nstatus: active\ndepends_on: [b]\n---\n")
	writeFile(t, dir, ".cuedeck/cards/b.md", "---\nid: b\nstatus: todo\ndepends_on: [a]\n---\n")
	out, err := exec.Command(bin("cue"), "scene", "--workspace", dir, "-d").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("exit: %v, want code 2", err)
	}
	if !strings.Contains(string(out), "1002") || !strings.Contains(string(out), "a -> b -> a") {
		t.Errorf("cue scene on a cycle: err %v, output:\n%s", err, out)
	}
}

func TestDoctorReportsSeededProblemsAndFails(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".cuedeck/cards/a.md", "---\nid: a\ntitle: A\nstatus: active\ndepends_on: [b]\n---\n\nSee [gone](../../docs/gone.md).\n")
	writeFile(t, dir, ".cuedeck/cards/b.md", "---\nid: b\ntitle: B\nstatus: todo\ndepends_on: [a]\n---\n")
	writeFile(t, dir, ".cuedeck/cards/bad.md", "---\nid: bad\ntitle: oops: colon\n---\n")
	cmd := exec.Command(bin("cue"), "doctor", "--workspace", dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("cue doctor: err %v, want a non-zero exit\n%s", err, out.String())
	}
	for _, s := range []string{
		"--> .cuedeck/cards/bad.md:3:12", "title: oops: colon", "           ^",
		"dead link", "--> .cuedeck/cards/a.md:8:",
		"a -> b -> a", "--> .cuedeck/cards/a.md:5:",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("doctor output lacks %q:\n%s", s, out.String())
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("colour codes written to a pipe")
	}
}

func TestCleanRemovesCacheAndSaysWhat(t *testing.T) {
	ws := &workspace.Workspace{Root: t.TempDir()}
	writeFile(t, ws.Root, ".cuedeck/.cache/nats/stream.dat", strings.Repeat("x", 3000))
	writeFile(t, ws.Root, ".cuedeck/.cache/state/indexer/db", "abc")
	var out bytes.Buffer
	if err := cleanCache(ws, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Cache()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache still there (err %v)", err)
	}
	for _, s := range []string{".cuedeck/.cache/nats", "2.9 KiB", ".cuedeck/.cache/state", "3 B", "removed .cuedeck/.cache ("} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestCleanRefusesWhileDaemonHoldsLock(t *testing.T) {
	ws := &workspace.Workspace{Root: t.TempDir()}
	writeFile(t, ws.Root, ".cuedeck/.cache/nats/stream.dat", "x")
	lock, err := ws.AcquireLock() // stands in for the daemon
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	var out bytes.Buffer
	err = cleanCache(ws, &out)
	var le *workspace.LockError
	if !errors.As(err, &le) || le.HolderPID != os.Getpid() {
		t.Fatalf("err = %v, want a LockError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), "1007") || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q lacks the code or the pid", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Cache(), "nats", "stream.dat")); err != nil {
		t.Errorf("refused clean removed files: %v", err)
	}
}

// SCENE.md repeats the documents it packs: indexed, it outranked them
// (issue 18). `cue init` keeps it out of git, and the daemon never
// publishes it, whatever the excludes say.
func TestSceneFileIsIgnoredAndNeverIndexed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	dir := sceneWorkspace(t)
	cue(t, "init", "--workspace", dir)
	gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if !slices.Contains(strings.Split(string(gi), "\n"), "/"+scenes.SceneFile) {
		t.Fatalf(".gitignore does not ignore %s:\n%s", scenes.SceneFile, gi)
	}
	// A workspace initialised before that line existed, or whose
	// .gitignore lost it, still keeps the scene out of the index.
	writeFile(t, dir, ".gitignore", "/.cuedeck/.cache/\n")
	cmd := exec.Command(bin("cue"), "scene", "--workspace", dir, "a")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir()) // no clipboard tool
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cue scene: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(scenes.SceneFile))); err != nil {
		t.Fatal(err)
	}

	d := startUp(t, dir)
	defer d.interrupt(t)
	conn := connect(t, d.info.NATSURL)
	caller := queryClient(t, conn, d.info.QueryPrefix)
	// Ingest walks in path order: .cuedeck/SCENE.md comes before the
	// card and docs/api.md, so once those are found it was passed over.
	bustest.Eventually(t, 60*time.Second, "card and doc searchable", func() bool {
		p := contextPaths(t, caller, "login")
		return slices.Contains(p, "docs/api.md") && slices.Contains(p, ".cuedeck/cards/a.md")
	})
	if p := contextPaths(t, caller, "login"); slices.Contains(p, scenes.SceneFile) {
		t.Fatalf("read_context found the scene: %v", p)
	}
	kv, err := conn.JS.KeyValue(context.Background(), events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var published []string
	for k := range keys.Keys() {
		e, err := kv.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := events.DecodeDocRecord(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		published = append(published, rec.Path)
	}
	slices.Sort(published)
	if want := []string{".cuedeck/cards/a.md", ".gitignore", "docs/api.md"}; !slices.Equal(published, want) {
		t.Fatalf("published %v, want %v", published, want)
	}
}
