package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/cuedeck/cuedeck/internal/release"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// releaseURLEnv overrides the configured release manifest.
const releaseURLEnv = "CUE_RELEASE_URL"

// cmdUpgrade replaces cue and cue-engine, side by side in this binary's
// directory, with the release a manifest describes, or with the binaries
// the last upgrade replaced (--rollback).
func cmdUpgrade(args []string) error {
	fs, c := newFlags("upgrade")
	manifest := fs.String("manifest", "", "URL of the release's manifest.json (default: $"+releaseURLEnv+", then [release] manifest_url in the workspace's, then the user's config.toml)")
	force := fs.Bool("force", false, "install a downgrade, a release across a data-format change, or any release over a dev build")
	rollback := fs.Bool("rollback", false, "swap the binaries back with those the last upgrade replaced")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("upgrade: unexpected %q; see `cue help`", fs.Arg(0))
	}
	dir, err := installDir()
	if err != nil {
		return err
	}
	if *rollback {
		swapped, err := release.Rollback(dir, "")
		if err != nil {
			return err
		}
		for _, p := range swapped {
			fmt.Printf("rolled back %s (the replaced one is %s%s)\n", p, p, release.PrevSuffix)
		}
		return nil
	}
	url := *manifest
	if url == "" {
		url = manifestURL(c)
	}
	if url == "" {
		return fmt.Errorf("no release manifest to upgrade from: pass --manifest URL, set %s, or set [release] manifest_url in .cuedeck/config.toml", releaseURLEnv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	info := version.Get()
	u := &release.Upgrader{Dir: dir, Version: info.Version, DataFormat: version.DataFormat, Force: *force, Progress: os.Stderr}
	res, err := u.Upgrade(ctx, url)
	if err != nil {
		return err
	}
	if res.UpToDate {
		fmt.Printf("cue %s is up to date (%s)\n", res.From, url)
		return nil
	}
	for _, p := range res.Installed {
		fmt.Printf("installed %s (the previous one is %s%s)\n", p, p, release.PrevSuffix)
	}
	fmt.Printf("upgraded cue %s -> %s; `cue upgrade --rollback` goes back\n", res.From, res.To)
	return nil
}

// installDir is where this cue-engine lives, symlinks resolved; the cue
// front is installed beside it.
func installDir() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the installed binaries: %w", err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	return filepath.Dir(self), nil
}

// manifestURL is the release manifest from the environment, the
// workspace's config, or the user's config, in that order. Only the
// [release] table is read, so that a config with a mistake elsewhere
// does not keep a fixed release from being installed.
func manifestURL(c *common) string {
	if v := os.Getenv(releaseURLEnv); v != "" {
		return v
	}
	var paths []string
	if ws, err := c.findWorkspace(); err == nil {
		paths = append(paths, ws.Path(workspace.ConfigFile))
	}
	if dir, err := os.UserConfigDir(); err == nil {
		paths = append(paths, filepath.Join(dir, "cuedeck", "config.toml"))
	}
	for _, p := range paths {
		var cfg struct {
			Release workspace.ReleaseConfig `toml:"release"`
		}
		if _, err := toml.DecodeFile(p, &cfg); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "cue: skipping %s: %v\n", p, err)
			continue
		}
		if cfg.Release.ManifestURL != "" {
			return cfg.Release.ManifestURL
		}
	}
	return ""
}
