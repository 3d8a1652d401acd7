package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Off a terminal, cue open prints the ranked matches; nothing matching is
// an error that says so.
func TestOpenListsMatchesOffATerminal(t *testing.T) {
	root := t.TempDir()
	for p, body := range map[string]string{
		"docs/mast.md":             "# Mast\n\n## North mast\n\ntext\n",
		".cuedeck/cards/moor01.md": "---\nid: moor01\ntitle: Moor the zeppelin\nstatus: todo\n---\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin("cue"), "open", "north", "--workspace", root).Output()
	if err != nil || !strings.HasPrefix(string(out), "docs/mast.md:3\tdocs/mast.md#North mast\n") {
		t.Fatalf("open north: %q %v", out, err)
	}
	out, _ = exec.Command(bin("cue"), "open", "--list", "--workspace", root, "zeppelin").Output()
	if !strings.Contains(string(out), ".cuedeck/cards/moor01.md:1\tmoor01 Moor the zeppelin [todo]") {
		t.Fatalf("open zeppelin: %q", out)
	}
	cmd := exec.Command(bin("cue"), "open", "qqqxxx", "--workspace", root)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), `nothing matches "qqqxxx"`) {
		t.Fatalf("no match: %q %v", msg, err)
	}
}

// The editor gets "+LINE PATH" after the words of $EDITOR.
func TestOpenInEditorPassesTheLine(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	script := filepath.Join(dir, "ed")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", script+" --wait")
	if err := openInEditor("/w/docs/mast.md", 3); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(record)
	if string(got) != "--wait +3 /w/docs/mast.md\n" {
		t.Fatalf("editor args %q", got)
	}
}
