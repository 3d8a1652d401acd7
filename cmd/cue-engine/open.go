package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/cuedeck/cuedeck/internal/finder"
)

func cmdOpen(args []string) error {
	fs, c := newFlags("open")
	list := fs.Bool("list", false, "print the matches (path:line, label) instead of the interactive finder")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(ws.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	entries, err := finder.Entries(root.FS())
	if err != nil {
		return err
	}
	in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if *list || !term.IsTerminal(in) || !term.IsTerminal(out) {
		// Off a terminal (a pipe, a script) the finder cannot run: print
		// what it would offer.
		if finder.List(os.Stdout, entries, query, 20) == 0 {
			return fmt.Errorf("nothing matches %q among %d docs, headings and cards", query, len(entries))
		}
		return nil
	}
	saved, err := term.MakeRaw(in)
	if err != nil {
		return fmt.Errorf("open: put the terminal in raw mode: %w (use --list)", err)
	}
	chosen, ok, err := finder.Interactive(os.Stdin, os.Stdout, entries, query, 15)
	term.Restore(in, saved)
	if err != nil || !ok {
		return err
	}
	return openInEditor(filepath.Join(ws.Root, filepath.FromSlash(chosen.Path)), chosen.Line)
}

// openInEditor runs $VISUAL, else $EDITOR, else vi, on path at line (the
// "+N" argument every common terminal editor understands).
func openInEditor(path string, line int) error {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	fields := strings.Fields(editor)
	cmd := exec.Command(fields[0], append(fields[1:], fmt.Sprintf("+%d", line), path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("open %s with %q: %w (set $EDITOR)", path, editor, err)
	}
	return nil
}
