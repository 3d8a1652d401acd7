package transcripts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// RepoRoot is a repository a transcript can belong to: the one whose Root
// is the longest path prefix of the working directory the transcript's
// lines report.
type RepoRoot struct {
	Name string
	Root string
}

// ChatSource is a set of generic chat-jsonl transcripts
// (events.TranscriptChatJSONL). Repo, when set, is their repo; otherwise
// each file is mapped by the cwd field of its lines, as Claude Code's are.
type ChatSource struct {
	Glob string
	Repo string
}

// Config configures a Tailer. Its zero value, with Repos and StateDir set,
// tails ~/.claude/projects with the defaults below.
type Config struct {
	Repos []RepoRoot
	// ClaudeDirs are Claude Code's project directories, holding
	// <dir>/<project>/<session>.jsonl and
	// <dir>/<project>/<session>/subagents/agent-<id>.jsonl. nil means
	// DefaultClaudeDir under the home directory; an empty, non-nil slice
	// means none.
	ClaudeDirs  []string
	ChatSources []ChatSource
	// StateDir is the Badger directory holding, per transcript, the offset
	// published up to. Required; not shared with any other Badger.
	StateDir string
	// MaxBatchLines and MaxBatchBytes bound one batch. MaxBatchBytes must
	// leave room under the server's max payload for the event's envelope;
	// a single line longer than it is skipped with a warning.
	MaxBatchLines int
	MaxBatchBytes int
	// FlushInterval is how long a transcript must stay quiet before its
	// new lines are published; a transcript that never goes quiet is
	// published at least every MaxDelayFactor·FlushInterval.
	FlushInterval time.Duration
	// PollInterval is how often the directories are rescanned, to catch
	// what file watching missed (or everything, where watching fails).
	PollInterval time.Duration
}

// Defaults.
const (
	DefaultClaudeDir     = ".claude/projects"
	DefaultMaxBatchLines = 500
	// DefaultMaxBatchBytes keeps a batch, with its envelope and offsets,
	// under the 1 MiB max payload of a stock nats-server (the embedded
	// one allows 8 MiB).
	DefaultMaxBatchBytes = 512 << 10
	DefaultFlushInterval = 2 * time.Second
	DefaultPollInterval  = 10 * time.Second
	// MaxDelayFactor bounds how long lines wait for quiet: a session that
	// writes without pause is still published every 4 FlushIntervals.
	MaxDelayFactor = 4
)

// batchOverhead is room left under the max payload for the event envelope
// and the offsets of MaxBatchLines lines.
const batchOverhead = 64 << 10

func (c *Config) setDefaults() error {
	if c.ClaudeDirs == nil {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("transcripts: no home directory for the default Claude dir (%w): set ClaudeDirs", err)
		}
		c.ClaudeDirs = []string{filepath.Join(home, DefaultClaudeDir)}
	}
	if c.MaxBatchLines == 0 {
		c.MaxBatchLines = DefaultMaxBatchLines
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	return nil
}

// Validate reports a configuration the tailer cannot run with.
func (c Config) Validate() error {
	if c.StateDir == "" {
		return errors.New("transcripts: StateDir is empty: set it to a directory of its own, e.g. .cuedeck/.cache/transcripts")
	}
	if len(c.Repos) == 0 {
		return errors.New("transcripts: no Repos: a transcript is published only to the repo it worked in")
	}
	names := map[string]bool{}
	for _, r := range c.Repos {
		if err := events.ValidateRepo(r.Name); err != nil {
			return fmt.Errorf("transcripts: repo %q: %w", r.Name, err)
		}
		if !filepath.IsAbs(r.Root) {
			return fmt.Errorf("transcripts: repo %s: root %q is not absolute", r.Name, r.Root)
		}
		if names[r.Name] {
			return fmt.Errorf("transcripts: repo %s is listed twice", r.Name)
		}
		names[r.Name] = true
	}
	for _, d := range c.ClaudeDirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("transcripts: Claude dir %q is not absolute", d)
		}
	}
	for _, s := range c.ChatSources {
		if !filepath.IsAbs(s.Glob) {
			return fmt.Errorf("transcripts: chat glob %q is not absolute", s.Glob)
		}
		if _, err := filepath.Match(s.Glob, ""); err != nil {
			return fmt.Errorf("transcripts: chat glob %q: %w", s.Glob, err)
		}
		if s.Repo != "" && !names[s.Repo] {
			return fmt.Errorf("transcripts: chat glob %q names repo %q, which is not in Repos", s.Glob, s.Repo)
		}
	}
	if c.MaxBatchLines < 0 || c.MaxBatchBytes < 0 || c.FlushInterval < 0 || c.PollInterval < 0 {
		return errors.New("transcripts: MaxBatchLines, MaxBatchBytes, FlushInterval and PollInterval must not be negative")
	}
	return nil
}

// globBase is the directory part of a glob before its first pattern
// character: what a symlink from the glob's matches must stay in, and
// what is watched.
func globBase(glob string) string {
	i := strings.IndexAny(glob, `*?[\`)
	if i < 0 {
		return filepath.Dir(glob)
	}
	return filepath.Dir(glob[:i+1])
}
