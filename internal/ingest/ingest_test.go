package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func config(t *testing.T, repos ...ingest.RepoConfig) ingest.Config {
	return ingest.Config{Repos: repos, StateDir: t.TempDir(), Debounce: 100 * time.Millisecond}
}

func TestInitialScanPublishesEachFileOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	want := map[string]string{
		"README.md":       "# hello\n",
		"docs/guide.md":   "guide ü\n",
		"src/main.go":     "package main\n",
		".gitignore":      "*.log\nbuild/\n!keep.log\n",
		"sub/.gitignore":  "secret.txt\n",
		"sub/keep.txt":    "kept\n",
		"keep.log":        "re-included by !keep.log\n",
		"deep/a/b/c/d.md": "deep\n",
	}
	ignored := map[string]string{
		"debug.log":               "ignored by *.log",
		"build/out.txt":           "ignored directory",
		"src/build/x.txt":         "ignored directory at depth",
		"sub/secret.txt":          "ignored by a nested .gitignore",
		"node_modules/m/index.js": "default exclude",
		"vendor/v.go":             "default exclude",
		".cuedeck/.cache/x":       "default exclude",
		".cuedeck/config.toml":    "query_token = \"secret\"\n",
		".git/HEAD":               "ref: refs/heads/main\n",
		".git/info/exclude":       "excluded.md\n",
		"excluded.md":             "ignored by .git/info/exclude",
	}
	writeTree(t, dir, want)
	writeTree(t, dir, ignored)

	run := start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	got.waitCount(t, len(want))

	st := repoStats(t, run.svc, "app")
	if st.Published != int64(len(want)) || st.Upserted != int64(len(want)) || !st.ScanDone || st.FilesSeen != len(want) {
		t.Errorf("stats = %+v, want %d files seen and upserted", st, len(want))
	}
	run.stop()
	for _, r := range got.all() {
		up, ok := r.Event.(events.FileUpserted)
		if !ok {
			t.Errorf("unexpected %T %+v", r.Event, r.Event)
			continue
		}
		content, ok := want[up.Path]
		if !ok {
			t.Errorf("published %s, which should have been ignored", up.Path)
			continue
		}
		if up.Repo != "app" || up.Content != content || up.Size != int64(len(content)) ||
			up.SHA256 != events.SHA256Hex([]byte(content)) || up.Blob != "" || up.UTF8Repaired {
			t.Errorf("upsert of %s = %+v", up.Path, up)
		}
		if r.MsgID != events.FileUpsertedMsgID("app", up.Path, up.SHA256, up.ModTime) {
			t.Errorf("%s: msg id %q", up.Path, r.MsgID)
		}
		if n := len(got.matching(up.Path, "")); n != 1 {
			t.Errorf("%s published %d times", up.Path, n)
		}
	}
}

func TestRestartWithUnchangedFilesPublishesNothing(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	files := map[string]string{"a.md": "a", "b/c.md": "c", "bin.dat": "\x00\x01"}
	writeTree(t, dir, files)
	// Old enough that size and mtime alone prove a file unchanged.
	old := time.Now().Add(-time.Hour)
	for p := range files {
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})

	first := start(t, conn, cfg)
	got.waitCount(t, len(files))
	first.stop()
	seq := lastSeq(t, conn)

	second := start(t, conn, cfg)
	st := repoStats(t, second.svc, "app")
	if st.Published != 0 || st.FilesRead != 0 {
		t.Errorf("restart: published %d, read %d files; want nothing", st.Published, st.FilesRead)
	}
	if now := lastSeq(t, conn); now != seq {
		t.Errorf("restart published: stream last seq %d → %d", seq, now)
	}
}

func TestRestartRecentFilesRereadButNotPublished(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "a", "b.md": "b"})
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	first := start(t, conn, cfg)
	got.waitCount(t, 2)
	first.stop()
	seq := lastSeq(t, conn)
	second := start(t, conn, cfg)
	if st := repoStats(t, second.svc, "app"); st.Published != 0 {
		t.Errorf("restart published %d events", st.Published)
	}
	if now := lastSeq(t, conn); now != seq {
		t.Errorf("restart published: stream last seq %d → %d", seq, now)
	}
}

func TestBurstOfWritesPublishesOnceAfterDebounce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"notes.md": "v0"})
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	cfg.Debounce = 300 * time.Millisecond
	start(t, conn, cfg)
	first := got.waitFor(t, "initial upsert", isKind(events.KindFileUpserted))

	var last string
	for i := 1; i <= 20; i++ {
		last = fmt.Sprintf("version %d\n", i)
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(last), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	final := got.waitFor(t, "upsert of the last write", func(r received) bool {
		up, ok := r.Event.(events.FileUpserted)
		return ok && up.Content == last
	})
	var after []received
	for _, r := range got.matching("notes.md", events.KindFileUpserted) {
		if r.Seq > first.Seq && r.Seq <= final.Seq {
			after = append(after, r)
		}
	}
	if len(after) != 1 {
		t.Fatalf("20 writes published %d upserts, want 1", len(after))
	}
	if up := final.Event.(events.FileUpserted); up.SHA256 != events.SHA256Hex([]byte(last)) {
		t.Errorf("sha %s is not of the last write", up.SHA256)
	}
}

func TestDeleteAndRename(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"gone.md": "bye", "old.md": "moving", "keep.md": "k"})
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	got.waitCount(t, 3)
	prev := got.matching("gone.md", events.KindFileUpserted)[0].Event.(events.FileUpserted)

	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	del := got.waitFor(t, "delete of gone.md", func(r received) bool {
		return r.path() == "gone.md" && r.Event.EventKind() == events.KindFileDeleted
	}).Event.(events.FileDeleted)
	if del.PrevSHA256 != prev.SHA256 || !del.PrevMod.Equal(prev.ModTime) {
		t.Errorf("delete = %+v, want prev sha %s mtime %s", del, prev.SHA256, prev.ModTime)
	}

	if err := os.Rename(filepath.Join(dir, "old.md"), filepath.Join(dir, "new.md")); err != nil {
		t.Fatal(err)
	}
	got.waitFor(t, "delete of old.md", func(r received) bool {
		return r.path() == "old.md" && r.Event.EventKind() == events.KindFileDeleted
	})
	up := got.waitFor(t, "upsert of new.md", func(r received) bool {
		return r.path() == "new.md" && r.Event.EventKind() == events.KindFileUpserted
	}).Event.(events.FileUpserted)
	if up.Content != "moving" {
		t.Errorf("renamed content %q", up.Content)
	}
}

func TestDirectoriesComeAndGo(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "a"})
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	got.waitCount(t, 1)

	// A directory tree moved in at once: no watch existed while it was built.
	staging := t.TempDir()
	writeTree(t, staging, map[string]string{"tree/x.md": "x", "tree/sub/y.md": "y"})
	if err := os.Rename(filepath.Join(staging, "tree"), filepath.Join(dir, "tree")); err != nil {
		t.Fatal(err)
	}
	got.waitFor(t, "upsert of tree/sub/y.md", func(r received) bool { return r.path() == "tree/sub/y.md" })
	// And a file created later in the new directory is watched.
	writeTree(t, dir, map[string]string{"tree/sub/z.md": "z"})
	got.waitFor(t, "upsert of tree/sub/z.md", func(r received) bool { return r.path() == "tree/sub/z.md" })

	// Moving the tree out deletes everything in it.
	if err := os.Rename(filepath.Join(dir, "tree"), filepath.Join(staging, "tree")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tree/x.md", "tree/sub/y.md", "tree/sub/z.md"} {
		got.waitFor(t, "delete of "+p, func(r received) bool {
			return r.path() == p && r.Event.EventKind() == events.KindFileDeleted
		})
	}
}

func TestGitignoreEditDeletesNowIgnoredFiles(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "a", "tmp/t.md": "t", ".gitignore": "*.log\n", "x.log": "x"})
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	got.waitCount(t, 3)

	writeTree(t, dir, map[string]string{".gitignore": "tmp/\n"})
	got.waitFor(t, "delete of tmp/t.md", func(r received) bool {
		return r.path() == "tmp/t.md" && r.Event.EventKind() == events.KindFileDeleted
	})
	got.waitFor(t, "x.log no longer ignored", func(r received) bool {
		return r.path() == "x.log" && r.Event.EventKind() == events.KindFileUpserted
	})
	// A file in the now ignored directory is not published.
	writeTree(t, dir, map[string]string{"tmp/new.md": "n", "b.md": "b"})
	got.waitFor(t, "upsert of b.md", func(r received) bool { return r.path() == "b.md" })
	if n := len(got.matching("tmp/new.md", "")); n != 0 {
		t.Errorf("ignored tmp/new.md published %d times", n)
	}
	if n := len(got.matching("a.md", "")); n != 1 {
		t.Errorf("a.md published %d times, want 1", n)
	}
}

func TestSkippedFilesArePublishedOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTree(t, dir, map[string]string{
		"img.png":    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"noise.bin":  string(bytes.Repeat([]byte{0x01, 0x02, 0x81, 0xfe}, 100)),
		"target.md":  "inside",
		"ok.md":      "fine",
		"linkdir/.k": "",
	})
	writeTree(t, filepath.Dir(outside), map[string]string{"secret.txt": "outside"})
	big, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(50 << 20); err != nil { // sparse: fast
		t.Fatal(err)
	}
	big.Close()
	for link, target := range map[string]string{
		"passwd":      "/etc/passwd",
		"escape.txt":  outside,
		"rel-escape":  "../../../../../../../../etc/hostname",
		"inside.md":   "target.md",
		"dirlink":     "linkdir",
		"dangling.md": "nothere.md",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	wantSkips := map[string]events.SkipReason{
		"img.png":    events.SkipBinary,
		"noise.bin":  events.SkipBinary,
		"huge.txt":   events.SkipTooLarge,
		"passwd":     events.SkipSymlinkEscapes,
		"escape.txt": events.SkipSymlinkEscapes,
		"rel-escape": events.SkipSymlinkEscapes,
	}
	if made, err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Fatal(err)
	} else if made {
		wantSkips["pipe"] = events.SkipNotRegular
	}
	wantUpserts := map[string]string{"target.md": "inside", "ok.md": "fine", "inside.md": "inside", "linkdir/.k": ""}
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	run := start(t, conn, cfg)
	got.waitCount(t, len(wantSkips)+len(wantUpserts))
	st := repoStats(t, run.svc, "app")
	run.stop()

	for p, reason := range wantSkips {
		rs := got.matching(p, "")
		if len(rs) != 1 {
			t.Errorf("%s: %d events, want one skip", p, len(rs))
			continue
		}
		sk, ok := rs[0].Event.(events.FileSkipped)
		if !ok || sk.Reason != reason || sk.Detail == "" || !sk.First {
			t.Errorf("%s: %+v, want a first skip %s with a detail", p, rs[0].Event, reason)
			continue
		}
		t.Logf("%s: %s: %s", p, sk.Reason, sk.Detail)
		if reason == events.SkipTooLarge && (sk.Size != 50<<20 || !strings.Contains(sk.Detail, "MaxFileBytes")) {
			t.Errorf("too large skip %+v should carry the size and name MaxFileBytes", sk)
		}
	}
	for p, content := range wantUpserts {
		rs := got.matching(p, events.KindFileUpserted)
		if len(rs) != 1 || rs[0].Event.(events.FileUpserted).Content != content {
			t.Errorf("%s: %+v, want one upsert of %q", p, rs, content)
		}
	}
	for _, p := range []string{"dirlink/.k", "dangling.md", "dirlink"} {
		if rs := got.matching(p, ""); len(rs) != 0 {
			t.Errorf("%s: published %+v", p, rs)
		}
	}
	if st.Skipped[events.SkipBinary] != 2 || st.Skipped[events.SkipSymlinkEscapes] != 3 || st.Skipped[events.SkipTooLarge] != 1 {
		t.Errorf("skip stats %v", st.Skipped)
	}

	// Skips are reported once per (path, size, mtime): a restart is silent.
	seq := lastSeq(t, conn)
	again := start(t, conn, cfg)
	if st := repoStats(t, again.svc, "app"); st.Published != 0 {
		t.Errorf("restart re-published %d events (skips %v)", st.Published, st.Skipped)
	}
	if now := lastSeq(t, conn); now != seq {
		t.Errorf("restart published: stream last seq %d → %d", seq, now)
	}
}

func TestUnreadableFileIsSkipped(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"locked.md": "x"})
	if err := os.Chmod(filepath.Join(dir, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	sk := got.waitFor(t, "skip", isKind(events.KindFileSkipped)).Event.(events.FileSkipped)
	if sk.Reason != events.SkipUnreadable {
		t.Errorf("skip %+v", sk)
	}
}

func TestInvalidUTF8IsRepaired(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	raw := "caf\xe9 cr\xe8me, na\xefve\n"
	writeTree(t, dir, map[string]string{"latin1.txt": raw})
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	up := got.waitFor(t, "upsert", isKind(events.KindFileUpserted)).Event.(events.FileUpserted)
	if !up.UTF8Repaired || up.Content != "caf\uFFFD cr\uFFFDme, na\uFFFDve\n" {
		t.Errorf("content %q repaired=%v", up.Content, up.UTF8Repaired)
	}
	if up.SHA256 != events.SHA256Hex([]byte(raw)) || up.Size != int64(len(raw)) {
		t.Errorf("sha/size %s/%d are not of the bytes on disk", up.SHA256, up.Size)
	}
}

func TestLargeContentTravelsThroughObjectStore(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	big := strings.Repeat("a line of text that is long enough\n", 200) // 7 KiB
	writeTree(t, dir, map[string]string{"big.md": big, "copy.md": big, "small.md": "s"})
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	cfg.InlineBytes = 1 << 10
	start(t, conn, cfg)
	got.waitCount(t, 3)

	sha := events.SHA256Hex([]byte(big))
	for _, p := range []string{"big.md", "copy.md"} {
		up := got.matching(p, events.KindFileUpserted)[0].Event.(events.FileUpserted)
		if up.Blob != sha || up.Content != "" || up.SHA256 != sha || up.Size != int64(len(big)) {
			t.Errorf("%s: %+v, want blob %s", p, up, sha)
		}
	}
	if up := got.matching("small.md", events.KindFileUpserted)[0].Event.(events.FileUpserted); up.Content != "s" || up.Blob != "" {
		t.Errorf("small.md: %+v", up)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := conn.JS.ObjectStore(ctx, events.BlobsBucket)
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.GetBytes(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != big {
		t.Errorf("blob holds %d bytes, want the %d of big.md", len(b), len(big))
	}
}

func TestTwoReposAtOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, map[string]string{"same.md": "from a", "only-a.md": "a"})
	writeTree(t, b, map[string]string{"same.md": "from b"})
	run := start(t, conn, config(t, ingest.RepoConfig{Name: "alpha", Root: a}, ingest.RepoConfig{Name: "beta", Root: b}))
	got.waitCount(t, 3)
	byRepo := map[string]map[string]string{}
	for _, r := range got.all() {
		up := r.Event.(events.FileUpserted)
		if byRepo[up.Repo] == nil {
			byRepo[up.Repo] = map[string]string{}
		}
		byRepo[up.Repo][up.Path] = up.Content
	}
	if byRepo["alpha"]["same.md"] != "from a" || byRepo["beta"]["same.md"] != "from b" || len(byRepo["beta"]) != 1 || len(byRepo["alpha"]) != 2 {
		t.Errorf("events by repo: %v", byRepo)
	}
	// Each repo is watched on its own.
	writeTree(t, b, map[string]string{"same.md": "b again"})
	got.waitFor(t, "beta edit", func(r received) bool {
		up, ok := r.Event.(events.FileUpserted)
		return ok && up.Repo == "beta" && up.Content == "b again"
	})
	if st := run.svc.Stats(); len(st.Repos) != 2 || st.Repos[0].Repo != "alpha" || st.Repos[1].Upserted != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestEditABAPublishesThreeTimes(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.md")
	writeTree(t, dir, map[string]string{"f.md": "A"})
	start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	for i, content := range []string{"A", "B", "A"} {
		if i > 0 {
			if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bustest.Eventually(t, within, fmt.Sprintf("upsert %d", i+1), func() bool {
			return len(got.matching("f.md", events.KindFileUpserted)) == i+1
		})
	}
	ups := got.matching("f.md", events.KindFileUpserted)
	ids := map[string]bool{}
	for i, want := range []string{"A", "B", "A"} {
		ev := ups[i].Event.(events.FileUpserted)
		if ev.Content != want {
			t.Errorf("upsert %d content %q, want %q", i+1, ev.Content, want)
		}
		// Only the first publish of a path tells the indexer it is new.
		if ev.First != (i == 0) {
			t.Errorf("upsert %d First = %v", i+1, ev.First)
		}
		ids[ups[i].MsgID] = true
	}
	if len(ids) != 3 {
		t.Errorf("message ids not distinct: %v", ids)
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeTree(t, dir, map[string]string{"file": "x"})
	cases := []struct {
		name string
		cfg  ingest.Config
		want string
	}{
		{"no repos", ingest.Config{StateDir: dir}, "no repos"},
		{"no state dir", ingest.Config{Repos: []ingest.RepoConfig{{Name: "a", Root: dir}}}, "StateDir"},
		{"missing root", ingest.Config{StateDir: dir, Repos: []ingest.RepoConfig{{Name: "a", Root: filepath.Join(dir, "nope")}}}, "does not exist"},
		{"root is a file", ingest.Config{StateDir: dir, Repos: []ingest.RepoConfig{{Name: "a", Root: file}}}, "not a directory"},
		{"duplicate", ingest.Config{StateDir: dir, Repos: []ingest.RepoConfig{{Name: "a", Root: dir}, {Name: "a", Root: dir}}}, "used twice"},
		{"bad name", ingest.Config{StateDir: dir, Repos: []ingest.RepoConfig{{Name: "a.b", Root: dir}}}, "invalid repo name"},
		{"inline above max", ingest.Config{StateDir: dir, MaxFileBytes: 10, InlineBytes: 20, Repos: []ingest.RepoConfig{{Name: "a", Root: dir}}}, "InlineBytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error mentioning %q", err, c.want)
			}
		})
	}
	ok := ingest.Config{StateDir: dir, Repos: []ingest.RepoConfig{{Name: "a", Root: dir}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTouchWithoutChangePublishesNothing(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.md")
	writeTree(t, dir, map[string]string{"f.md": "same"})
	run := start(t, conn, config(t, ingest.RepoConfig{Name: "app", Root: dir}))
	got.waitCount(t, 1)

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, within, "touched file re-read", func() bool { return repoStats(t, run.svc, "app").FilesRead == 2 })
	// Events of one path keep their order, so a publish for the touch would
	// arrive before the one for this edit.
	writeTree(t, dir, map[string]string{"f.md": "different"})
	got.waitFor(t, "edit", func(r received) bool {
		up, ok := r.Event.(events.FileUpserted)
		return ok && up.Content == "different"
	})
	if n := len(got.matching("f.md", "")); n != 2 {
		t.Errorf("%d events for f.md, want the initial upsert and the edit", n)
	}
}

func TestStateDirInsideRepoIsNotIngested(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	got := collect(t, conn)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "a"})
	cfg := config(t, ingest.RepoConfig{Name: "app", Root: dir})
	cfg.StateDir = filepath.Join(dir, "state", "ingest")
	start(t, conn, cfg)
	got.waitCount(t, 1)
	writeTree(t, dir, map[string]string{"b.md": "b"})
	got.waitFor(t, "upsert of b.md", func(r received) bool { return r.path() == "b.md" })
	for _, r := range got.all() {
		if strings.HasPrefix(r.path(), "state/") {
			t.Errorf("published the ingest's own state file %s", r.path())
		}
	}
}
