package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/role"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// common are the flags every command takes.
type common struct {
	workspace string
	logLevel  string
}

func newFlags(name string) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("cue "+name, flag.ContinueOnError)
	c := &common{}
	fs.StringVar(&c.workspace, "workspace", "", "workspace root (default: the repository around the current directory)")
	fs.StringVar(&c.logLevel, "log-level", envOr("CUE_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	return fs, c
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (c *common) findWorkspace() (*workspace.Workspace, error) {
	if c.workspace != "" {
		return workspace.Find(c.workspace, true)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return workspace.Find(wd, false)
}

// logger writes to stderr: stdout belongs to command output (and, for
// `cue mcp`, to the protocol alone).
func (c *common) logger() (*slog.Logger, error) { return role.NewLogger(c.logLevel, false) }

// frontPath is the `cue` binary the user ran, as the front passes it in
// hook.FrontEnv, for the commands printed for people and agents to run;
// this binary's own path when run directly.
func frontPath() string {
	if p := os.Getenv(hook.FrontEnv); p != "" {
		return p
	}
	self, _ := os.Executable()
	return self
}

func cmdVersion(args []string) error {
	return version.Print(os.Stdout, "cue", args)
}

func cmdInit(args []string) error {
	fs, c := newFlags("init")
	force := fs.Bool("force", false, "overwrite an existing config.toml")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	res, err := ws.Init(*force)
	if err != nil {
		return err
	}
	fmt.Printf("Workspace %s\n", ws.Root)
	for _, p := range res.Created {
		fmt.Printf("  created  %s\n", p)
	}
	for _, p := range res.Kept {
		fmt.Printf("  kept     %s\n", p)
	}
	fmt.Printf("  .gitignore %s\n", res.Gitignore)
	fmt.Println("Next: `cue setup claude` registers CueDeck with Claude Code (cursor, codex, json: other clients); `cue up` indexes now.")
	return nil
}
