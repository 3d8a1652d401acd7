package ingest

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// RepoConfig is one repository to ingest: the name its events carry and the
// directory it lives in.
type RepoConfig struct {
	// Name becomes the subject token and key prefix of the repo's events; it
	// must pass events.ValidateRepo.
	Name string
	// Root is the repository's top directory.
	Root string
}

// Config configures a Service. The zero value of every field but Repos and
// StateDir is usable.
type Config struct {
	Repos []RepoConfig
	// Exclude holds gitignore-style patterns applied in every repo on top of
	// its .gitignore files, with the highest priority (a .gitignore cannot
	// re-include them). Nil means DefaultExclude; an empty non-nil slice
	// excludes nothing beyond the repo's own rules.
	Exclude []string
	// MaxFileBytes is the largest file whose content is sent; larger files
	// are reported as skipped (too_large). Default 8 MiB.
	MaxFileBytes int64
	// InlineBytes is the largest content sent inside the event; larger
	// content travels through the object store. Default 256 KiB.
	InlineBytes int64
	// Debounce is how long a path must stay quiet after a change before it
	// is published, so a burst of writes publishes once. Default 500 ms.
	Debounce time.Duration
	// StateDir is the Badger directory holding what was last published for
	// each file. Required.
	StateDir string
	// Publishers is how many files are read and published at once, each
	// waiting for its acknowledgement. Default 8.
	Publishers int
	// PollInterval is how often a repo is rescanned when file watching is
	// unavailable (for instance the inotify watch limit was reached).
	// Default 30 s.
	PollInterval time.Duration
	// ReconcileEvery is how often, after the one at start, ingest compares
	// its state with cue_docs and rescans what differs (a bucket that
	// lost entries under a running ingest). Default 10 minutes; a
	// comparison reads the bucket's headers only.
	ReconcileEvery time.Duration
	// Settle is how ingest waits for a replaced stream to settle before
	// comparing with it: cue_docs when the server announced it replaced
	// (StreamReplaced), the task log whenever ingest finds it another
	// incarnation; zero fields take the defaults (500 ms, 2 s, 1 min).
	Settle Settle
}

// DefaultExclude are the patterns excluded when Config.Exclude is nil. ".git"
// has no trailing slash so that the .git file of a worktree or submodule is
// excluded as well as the directory.
var DefaultExclude = []string{".git", "node_modules/", "vendor/", ".cuedeck/.cache/"}

// NeverPublished are excluded whatever Config.Exclude says, and after it,
// so that no pattern re-includes them: the workspace config holds MCP
// tokens and NATS passwords, and a laptop joined to a team as a leaf node
// would otherwise hand them to every reader of the team's edges. SCENE.md
// is what `cue scene` renders from other files: indexed, it would repeat
// them and outrank the documents it quotes.
var NeverPublished = []string{".cuedeck/config.toml", ".cuedeck/SCENE.md"}

// Defaults of Config.
const (
	DefaultMaxFileBytes = 8 << 20
	DefaultInlineBytes  = 256 << 10
	DefaultDebounce     = 500 * time.Millisecond
	DefaultPublishers   = 8
	DefaultPollInterval = 30 * time.Second
)

func (c *Config) setDefaults() {
	if c.Exclude == nil {
		c.Exclude = append([]string(nil), DefaultExclude...)
	}
	c.Exclude = append(c.Exclude, NeverPublished...)
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.InlineBytes == 0 {
		c.InlineBytes = DefaultInlineBytes
	}
	if c.Debounce == 0 {
		c.Debounce = DefaultDebounce
	}
	if c.Publishers == 0 {
		c.Publishers = DefaultPublishers
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.ReconcileEvery == 0 {
		c.ReconcileEvery = 10 * time.Minute
	}
	c.Settle.Poll = cmp.Or(c.Settle.Poll, 500*time.Millisecond)
	c.Settle.Quiet = cmp.Or(c.Settle.Quiet, 2*time.Second)
	c.Settle.Most = cmp.Or(c.Settle.Most, time.Minute)
}

// Validate reports a configuration that cannot work, saying what to change.
// It checks the values as they will be used, defaults applied.
func (c Config) Validate() error {
	c.setDefaults()
	if len(c.Repos) == 0 {
		return errors.New("ingest: no repos configured: add at least one repo (name and root directory)")
	}
	if c.StateDir == "" {
		return errors.New("ingest: StateDir is empty: set it to a directory for ingest state, e.g. .cuedeck/.cache/ingest")
	}
	if c.MaxFileBytes < 0 {
		return fmt.Errorf("ingest: MaxFileBytes %d is negative", c.MaxFileBytes)
	}
	if c.InlineBytes < 0 || c.InlineBytes > c.MaxFileBytes {
		return fmt.Errorf("ingest: InlineBytes %d must be between 0 and MaxFileBytes (%d)", c.InlineBytes, c.MaxFileBytes)
	}
	if c.Debounce < 0 || c.PollInterval < 0 || c.Publishers < 0 || c.ReconcileEvery < 0 {
		return errors.New("ingest: Debounce, PollInterval and Publishers must not be negative")
	}
	seen := make(map[string]string, len(c.Repos))
	for _, r := range c.Repos {
		if err := events.ValidateRepo(r.Name); err != nil {
			return fmt.Errorf("ingest: repo %q (root %s): %w", r.Name, r.Root, err)
		}
		if prev, dup := seen[r.Name]; dup {
			return fmt.Errorf("ingest: repo name %q is used twice (roots %s and %s): give each repo its own name", r.Name, prev, r.Root)
		}
		seen[r.Name] = r.Root
		if r.Root == "" {
			return fmt.Errorf("ingest: repo %q has no root directory", r.Name)
		}
		fi, err := os.Stat(r.Root)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("ingest: repo %q: root %s does not exist: create it or fix the path", r.Name, r.Root)
		case err != nil:
			return fmt.Errorf("ingest: repo %q: root %s: %w", r.Name, r.Root, err)
		case !fi.IsDir():
			return fmt.Errorf("ingest: repo %q: root %s is not a directory: point it at the repository's top directory", r.Name, r.Root)
		}
	}
	return nil
}
