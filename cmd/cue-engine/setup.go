package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cuedeck/cuedeck/internal/agentsetup"
	"github.com/cuedeck/cuedeck/internal/hook"
)

const setupUsage = `Usage:
  cue setup claude [--dry-run] [--http URL [--token-env NAME]]
        register CueDeck's MCP server in .mcp.json and its hooks in
        .claude/settings.json at the workspace root (Claude Code's project
        settings), keeping everything else there
  cue setup cursor|codex|json [--http URL [--token-env NAME]]
        print the MCP server's configuration for Cursor, Codex or any
        client reading mcpServers JSON, and where it goes

By default agents start ` + "`cue mcp`" + ` (stdio, the local daemon). --http
registers a team edge's Streamable HTTP endpoint instead; the bearer token
is read from the environment variable --token-env names (default
CUE_TOKEN) when the agent connects, and never written to a file.`

func cmdSetup(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Println(setupUsage)
		if len(args) == 0 {
			return errors.New("cue setup: name a client: claude, cursor, codex or json")
		}
		return nil
	}
	client := args[0]
	fs, c := newFlags("setup " + client)
	dry := fs.Bool("dry-run", false, "show the changes as a diff, write nothing (claude)")
	httpURL := fs.String("http", "", "a team edge's MCP endpoint (http(s)://host:port/mcp) instead of `cue mcp` over stdio")
	tokenEnv := fs.String("token-env", "", "environment variable holding the edge's bearer token (with --http; default CUE_TOKEN)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cue setup %s: unexpected %q", client, fs.Arg(0))
	}
	srv := agentsetup.Server{Command: mcpCommand(frontPath()), Args: []string{"mcp"}, URL: *httpURL, TokenEnv: *tokenEnv}
	if srv.URL != "" && srv.TokenEnv == "" {
		srv.TokenEnv = "CUE_TOKEN"
	}
	var snip func(agentsetup.Server) (agentsetup.Snippet, error)
	switch client {
	case "claude":
		ws, err := c.findWorkspace()
		if err != nil {
			return err
		}
		if err := setupClaude(os.Stdout, ws.Root, frontPath(), srv, *dry); err != nil {
			return err
		}
		if !ws.Initialised() {
			fmt.Printf("Note: %s has no CueDeck workspace yet; run `cue init` there.\n", ws.Root)
		}
		return nil
	case "cursor":
		snip = agentsetup.Cursor
	case "codex":
		snip = agentsetup.Codex
	case "json":
		snip = agentsetup.GenericJSON
	default:
		return fmt.Errorf("cue setup: unknown client %q: use claude, cursor, codex or json", client)
	}
	if *dry {
		return fmt.Errorf("cue setup %s only prints; --dry-run applies to claude", client)
	}
	s, err := snip(srv)
	if err != nil {
		return fmt.Errorf("cue setup %s: %w", client, err)
	}
	fmt.Printf("# %s\n%s", s.Where, s.Text)
	return nil
}

// mcpCommand is what agents run to start `cue mcp`: plain "cue" when that
// finds this very front on PATH, so a shared .mcp.json works on every
// machine, else the front's absolute path.
func mcpCommand(front string) string {
	onPath, err := exec.LookPath("cue")
	if err != nil {
		return front
	}
	a, err1 := filepath.EvalSymlinks(onPath)
	b, err2 := filepath.EvalSymlinks(front)
	if err1 == nil && err2 == nil && a == b {
		return "cue"
	}
	return front
}

// setupClaude merges the MCP server into root/.mcp.json and the hooks into
// root/.claude/settings.json, printing what changed. Both files are checked
// before either is written, so a file that cannot be merged leaves both
// as they were.
func setupClaude(w io.Writer, root, front string, srv agentsetup.Server, dryRun bool) error {
	if front == "" {
		return errors.New("cannot tell where the cue binary is; run it by its path")
	}
	mcpPath := filepath.Join(root, ".mcp.json")
	settingsPath := filepath.Join(root, ".claude", "settings.json")
	mcpOld, mcpPerm, err := hook.ReadSettingsFile(mcpPath)
	if err != nil {
		return err
	}
	mcpNew, mcpAction, err := agentsetup.MergeMCPJSON(mcpPath, mcpOld, srv)
	if err != nil {
		return err
	}
	setOld, setPerm, err := hook.ReadSettingsFile(settingsPath)
	if err != nil {
		return err
	}
	setNew, changes, err := hook.MergeSettings(settingsPath, setOld, front)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "Claude Code project settings in %s:\n", root)
	fmt.Fprintf(w, "  %-9s %-22s %s\n", mcpAction, "mcpServers."+agentsetup.ServerName, srv.Describe())
	for _, c := range changes {
		fmt.Fprintf(w, "  %-9s %-22s %s\n", c.Action, "hooks."+c.Event, c.Command)
	}
	type file struct {
		path, rel string
		old, new  []byte
		perm      os.FileMode
	}
	var changed []file
	for _, f := range []file{{mcpPath, ".mcp.json", mcpOld, mcpNew, mcpPerm}, {settingsPath, ".claude/settings.json", setOld, setNew, setPerm}} {
		if string(f.old) != string(f.new) {
			changed = append(changed, f)
		}
	}
	if len(changed) == 0 {
		fmt.Fprintln(w, "CueDeck is already set up for Claude Code here; nothing to do.")
		return nil
	}
	for _, f := range changed {
		fmt.Fprint(w, agentsetup.Diff(f.rel, f.old, f.new))
	}
	if dryRun {
		fmt.Fprintln(w, "Dry run: nothing was written. Run without --dry-run to apply.")
		return nil
	}
	for _, f := range changed {
		if err := hook.WriteSettingsFile(f.path, f.new, f.perm); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", f.path)
	}
	fmt.Fprintln(w, "Start Claude Code in this project (`claude`; restart it if it runs) and approve the cuedeck server when it asks.")
	return nil
}
