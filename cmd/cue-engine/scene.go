package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// sceneFlags are `cue scene`'s own flags.
type sceneFlags struct {
	limit  int
	dryRun bool
}

func (f *sceneFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.limit, "token-limit", 0, "token budget (default: [scene] token_limit in config.toml, else 32000)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the scene to stdout instead of writing SCENE.md and the clipboard")
	fs.BoolVar(&f.dryRun, "d", false, "short for --dry-run")
}

// parseInterspersed parses flags that may come before or after positional
// arguments (`cue scene abc12 -d` as well as `cue scene -d abc12`).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func cmdScene(args []string) error {
	fs, c := newFlags("scene")
	var sf sceneFlags
	sf.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("scene takes at most one CARD_ID, got %d", len(pos))
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	opts := scenes.Options{Budget: sceneBudget(ws, sf.limit, os.Stderr)}
	if len(pos) == 1 {
		opts.CardID = pos[0]
	}
	return renderScene(ws, opts, sf.dryRun, os.Stdout, os.Stderr)
}

// sceneBudget is the flag's limit, else the config's, else the default.
func sceneBudget(ws *workspace.Workspace, flagLimit int, stderr io.Writer) int {
	if flagLimit > 0 {
		return flagLimit
	}
	cfg, err := ws.LoadConfig()
	if err != nil {
		fmt.Fprintf(stderr, "cue: warning: %v; using the default token limit\n", err)
		return 0
	}
	return cfg.Scene.TokenLimit
}

// renderScene builds the scene and prints it (dry run) or writes SCENE.md
// and copies it to the clipboard; notes go to stderr.
func renderScene(ws *workspace.Workspace, opts scenes.Options, dryRun bool, stdout, stderr io.Writer) error {
	root, err := os.OpenRoot(ws.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	res, err := scenes.Build(root.FS(), opts)
	if err != nil {
		return err
	}
	for _, d := range res.Dead {
		fmt.Fprintf(stderr, "cue: warning: dead reference skipped: %s\n", d)
	}
	if res.OverBudget {
		fmt.Fprintf(stderr, "cue: warning: card %s alone has %d tokens, over the %d budget; it is included whole\n", res.Root.ID, res.Tokens, res.Budget)
	}
	summary := fmt.Sprintf("scene for %s: %d of %d nodes, %d/%d tokens", res.Root.ID, res.Included, res.Nodes, res.Tokens, res.Budget)
	if res.Truncated {
		summary += ", truncated"
	}
	if res.Redacted > 0 {
		summary += fmt.Sprintf(", %d secrets redacted", res.Redacted)
	}
	if dryRun {
		_, err := io.WriteString(stdout, res.Markdown)
		fmt.Fprintln(stderr, summary)
		return err
	}
	dst := ws.Path(scenes.SceneFile)
	if err := writeAtomic(dst, []byte(res.Markdown)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\nwrote %s\n", summary, scenes.SceneFile)
	if tool, err := copyToClipboard(res.Markdown); err != nil {
		fmt.Fprintf(stderr, "cue: warning: not copied to the clipboard: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "copied to the clipboard (%s)\n", tool)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".scene-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// clipboardTools are tried in order; the first that runs wins.
var clipboardTools = [][]string{
	{"wl-copy"},
	{"xclip", "-selection", "clipboard"},
	{"xsel", "--clipboard", "--input"},
	{"pbcopy"},
}

// errNoClipboard means no clipboard tool is installed.
var errNoClipboard = errors.New("no clipboard tool found (install wl-copy, xclip, xsel or pbcopy)")

// copyToClipboard pipes text to the first clipboard tool that succeeds and
// returns its name.
func copyToClipboard(text string) (string, error) {
	var failures []error
	for _, argv := range clipboardTools {
		bin, err := exec.LookPath(argv[0])
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		cmd := exec.CommandContext(ctx, bin, argv[1:]...)
		cmd.Stdin = bytes.NewReader([]byte(text))
		// No pipes for output: xclip and xsel leave a child serving the
		// selection, which would hold a pipe open and make Run wait.
		err = cmd.Run()
		cancel()
		if err == nil {
			return argv[0], nil
		}
		failures = append(failures, fmt.Errorf("%s: %w", argv[0], err))
	}
	if len(failures) == 0 {
		return "", errNoClipboard
	}
	return "", errors.Join(failures...)
}
