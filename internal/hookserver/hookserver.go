// Package hookserver is the daemon's side of `cue hook`: it listens on the
// workspace's hook socket for the signals the hooks send, keeps the cached
// project context that SessionStart and UserPromptSubmit inject fresh (at
// start, when the indexed documents or memories change, and on the hooks'
// signals), and flushes an agent's transcript when it stops or compacts.
// internal/daemon runs it; internal/hook defines the paths, the cache file
// and the signal it shares with the hook binary.
package hookserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// DefaultTokenLimit bounds the cached context: enough for the rules, the
// active task and ten decisions, small enough to inject on every session.
const DefaultTokenLimit = 1500

// Flusher publishes what an agent's transcript holds that is not published
// yet; a *transcripts.Tailer is one.
type Flusher interface {
	Flush(ctx context.Context, path string) error
}

// Options configure a Server. Root is required; the rest are optional.
type Options struct {
	// Root is the workspace root; the socket and cache file are derived
	// from it by package hook.
	Root string
	// Files reads the workspace's rules and task cards (an os.Root's FS).
	Files fs.FS
	// Tasks, when set, gives the repo's active tasks from the task board
	// (ok false until the board has replayed the log, when the cards are
	// read from Files instead). The board holds what the cards say, hand
	// edits included once indexed; reading the cards' heads at every
	// refresh parsed each card written since the one before, 14 % of what
	// a daemon allocated while 64 agents wrote tasks.
	Tasks func() (active []scenes.Card, ok bool)
	// Decisions gives the context its "Recent Decisions" for Repo.
	Decisions scenes.DecisionSource
	Repo      string
	// Revision changes whenever what the context is made of may have
	// changed (indexed documents, memories); polled every Debounce.
	Revision func() uint64
	// Flusher, when set, flushes transcripts on Stop, SubagentStop and
	// PreCompact.
	Flusher Flusher
	// TokenLimit bounds the context (DefaultTokenLimit when ≤ 0).
	TokenLimit int
	// Debounce is how often Revision is polled, and the least time
	// between refreshes asked for by signals, so a burst of changes or
	// prompts rewrites the cache once (default 2s).
	Debounce time.Duration
	Logger   *slog.Logger
	// Now is the clock for decisions' ages (default time.Now).
	Now func() time.Time
	// Ready, when set, delays the first cache write until it is closed
	// (the edge has replayed what was indexed), so the first context is
	// not an empty one. Signals wait meanwhile.
	Ready <-chan struct{}
}

// Server listens for hook signals and keeps the cache file fresh.
type Server struct {
	o         Options
	log       *slog.Logger
	malformed atomic.Uint64
	dropped   atomic.Uint64
	refreshes atomic.Uint64
	cards     scenes.CardHeads
}

// New returns a Server for o.
func New(o Options) *Server {
	if o.TokenLimit <= 0 {
		o.TokenLimit = DefaultTokenLimit
	}
	if o.Debounce <= 0 {
		o.Debounce = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{o: o, log: log}
}

// activeCards are the cards the active task is picked from: the active
// ones from Tasks, or every card of Files.
func (s *Server) activeCards() ([]scenes.Card, error) {
	if s.o.Tasks != nil {
		if active, ok := s.o.Tasks(); ok {
			return active, nil
		}
	}
	return s.cards.Cards(s.o.Files)
}

// Malformed counts datagrams that were not a hook signal.
func (s *Server) Malformed() uint64 { return s.malformed.Load() }

// Refreshes counts cache file writes.
func (s *Server) Refreshes() uint64 { return s.refreshes.Load() }

// Listen binds the workspace's hook socket, replacing a stale one: the
// caller holds the workspace lock, so no other daemon owns it. Serve it
// with Serve.
func (s *Server) Listen() (*net.UnixConn, error) {
	path := hook.SocketPath(s.o.Root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("hook socket %s: %w", path, err)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("hook socket %s: %w", path, err)
	}
	conn.SetReadBuffer(1 << 20)
	return conn, nil
}

// Run listens on the hook socket, writes the cache file once, and serves
// until ctx is cancelled; then it removes the socket.
func (s *Server) Run(ctx context.Context) error {
	conn, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, conn)
}

// Serve serves signals from conn until ctx is cancelled, closing conn and
// removing its socket file at the end.
func (s *Server) Serve(ctx context.Context, conn *net.UnixConn) error {
	path := conn.LocalAddr().String()
	defer os.Remove(path)
	signals := make(chan hook.Signal, 64)
	done := make(chan struct{})
	go func() { // owned here: Serve waits for it below
		defer close(done)
		s.work(ctx, signals)
	}()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			close(signals)
			<-done
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("hook socket %s: %w", path, err)
		}
		var sig hook.Signal
		if err := json.Unmarshal(buf[:n], &sig); err != nil || sig.Event == "" {
			s.malformed.Add(1)
			s.log.Debug("malformed hook signal", "bytes", n, "err", err, "malformed_total", s.malformed.Load())
			continue
		}
		select {
		case signals <- sig:
		default:
			// The worker is behind: a refresh is coming anyway, and a
			// dropped flush is made up by the tailer's own timer.
			s.dropped.Add(1)
			s.log.Debug("hook signal dropped: worker busy", "event", sig.Event)
		}
	}
}

// work handles signals and refreshes on revision changes, one at a time.
func (s *Server) work(ctx context.Context, signals <-chan hook.Signal) {
	if s.o.Ready != nil {
		select {
		case <-s.o.Ready:
		case <-ctx.Done():
			for range signals { // until Serve closes it
			}
			return
		}
	}
	s.pruneSessions(7 * 24 * time.Hour)
	var last uint64
	if s.o.Revision != nil {
		last = s.o.Revision()
	}
	tick := time.NewTicker(s.o.Debounce)
	defer tick.Stop()
	// Signals ask for a refresh; one refreshes at once, those that follow
	// within a debounce period are served together at the next tick, so a
	// burst of prompts (or a hook benchmark) does not keep the daemon
	// rendering while hooks start.
	var lastRefresh time.Time
	var cost time.Duration
	refresh := func() {
		start := time.Now()
		s.refreshLogged()
		lastRefresh, cost = time.Now(), time.Since(start)
	}
	refresh()
	pending := false
	for {
		select {
		case sig, ok := <-signals:
			if !ok {
				return
			}
			if s.handle(ctx, sig) {
				if time.Since(lastRefresh) >= refreshSpacing(s.o.Debounce, cost) {
					refresh()
					pending = false
				} else {
					pending = true
				}
			}
		case <-tick.C:
			if s.o.Revision != nil {
				if rev := s.o.Revision(); rev != last {
					last, pending = rev, true
				}
			}
			// The ticks space refreshes by debounce already.
			if pending && time.Since(lastRefresh) >= refreshCostShare*cost {
				refresh()
				pending = false
			}
		}
	}
}

// refreshSpacing is the least time between two refreshes: debounce, or
// twenty times what the last one took, whichever is longer. A refresh
// lists every card; with the ~45,000 tasks of a 30 s load of 64 agents,
// refreshes every 2 s took 4.6 s of the process's CPU while agents'
// writes waited for it. Spaced so, they hold at most a twentieth of a
// core.
func refreshSpacing(debounce, cost time.Duration) time.Duration {
	return max(debounce, refreshCostShare*cost)
}

const refreshCostShare = 20

func (s *Server) refreshLogged() {
	if err := s.Refresh(); err != nil {
		s.log.Warn("writing the hook context", "path", hook.CachePath(s.o.Root), "err", err)
	}
}

// handle acts on a signal and reports whether it asks for a refresh of
// the context.
func (s *Server) handle(ctx context.Context, sig hook.Signal) (refresh bool) {
	s.log.Debug("hook signal", "event", sig.Event, "session", sig.SessionID)
	switch sig.Event {
	case hook.SessionStart, hook.UserPromptSubmit:
		return true
	case hook.Stop, hook.SubagentStop:
		s.flush(ctx, sig)
	case hook.PreCompact:
		s.flush(ctx, sig)
		return true
	}
	return false
}

// flush publishes the transcript the signal names: a subagent's own
// transcript when it has one, else the session's.
func (s *Server) flush(ctx context.Context, sig hook.Signal) {
	if s.o.Flusher == nil {
		return
	}
	path := sig.TranscriptPath
	if sig.Event == hook.SubagentStop && sig.AgentTranscriptPath != "" {
		path = sig.AgentTranscriptPath
	}
	if path == "" {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.o.Flusher.Flush(fctx, path); err != nil {
		// Transcripts of other projects, or not yet seen, are normal.
		s.log.Debug("flushing a transcript on a hook", "event", sig.Event, "path", path, "err", err)
	}
}

// Refresh renders the context and replaces the cache file with it.
func (s *Server) Refresh() error {
	c := s.Render()
	if err := hook.WriteCache(s.o.Root, c); err != nil {
		return err
	}
	s.refreshes.Add(1)
	return nil
}

// pruneSessions removes markers of sessions idle for longer than age.
func (s *Server) pruneSessions(age time.Duration) {
	dir := hook.SessionsDir(s.o.Root)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := s.o.Now().Add(-age)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Render builds the cached context: the project's rules, the active task
// card, and the recent decisions, in that order, each line kept only while
// the whole stays within the token limit, and redacted by the guard.
func (s *Server) Render() hook.CacheFile {
	now := s.o.Now()
	c := hook.CacheFile{Timestamp: now.Unix(), ProjectHash: hook.ProjectHash(s.o.Root), NodesIncluded: []string{}}
	var b strings.Builder
	budget := s.o.TokenLimit
	used := 0
	// add appends text when it fits; it reports whether it did.
	add := func(text string) bool {
		text, _ = guard.Redact(text)
		n := tokens.Count(text)
		if used+n > budget {
			return false
		}
		b.WriteString(text)
		used += n
		return true
	}
	// head is a section heading, under the page's title for the first.
	head := func(title string) string {
		if b.Len() == 0 {
			return "# Project context (CueDeck)\n\n## " + title + "\n"
		}
		return "\n## " + title + "\n"
	}
	if s.o.Files != nil {
		if rules, file := scenes.Rules(s.o.Files); len(rules) > 0 {
			if add(head("Rules")) {
				c.NodesIncluded = append(c.NodesIncluded, file)
				for _, r := range rules {
					if !add("- " + strings.ReplaceAll(r, "\n", "\n  ") + "\n") {
						break
					}
				}
			}
		}
		if cards, err := s.activeCards(); err == nil {
			if card, err := scenes.Root(cards, ""); err == nil {
				title := card.Title
				if title == "" {
					title = card.ID
				}
				line := fmt.Sprintf("- %s: %s (%s)\n", card.ID, title, card.Path)
				if len(card.DependsOn) > 0 {
					line += "  depends on: " + strings.Join(card.DependsOn, ", ") + "\n"
				}
				if add(head("Active Task") + line) {
					c.NodesIncluded = append(c.NodesIncluded, card.Path)
				}
			}
		}
	}
	if s.o.Decisions != nil {
		ds := s.o.Decisions.RecentDecisions(s.o.Repo, nil, now, scenes.MaxDecisions)
		if len(ds) > 0 && add(head("Recent Decisions")) {
			for _, d := range ds {
				if !add("- " + scenes.DecisionLine(d, now) + "\n") {
					break
				}
				c.ExperienceCount++
			}
		}
	}
	c.Context = strings.TrimRight(b.String(), "\n")
	return c
}
