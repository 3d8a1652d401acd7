package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Progress is how far a process has materialised one feed (a bucket or
// stream it follows) at one moment.
type Progress struct {
	// Feed names the bucket or stream: cue_docs, cue_memories,
	// cue_vectors, CUE_TASKS.
	Feed string
	// Applied is the last applied revision (stream sequence).
	Applied uint64
	// LastApplied is when the feed last applied a batch or finished its
	// replay; zero before either.
	LastApplied time.Time
	// Replayed is true once the initial replay is done; GatesReady says
	// whether readiness waits for it.
	Replayed   bool
	GatesReady bool
	// Head reads the feed's current head from the cluster. Nil when it
	// cannot be read cheaply (a feed filtered to some keys): the feed then
	// reports no lag.
	Head func(ctx context.Context) (uint64, error)
}

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Interval between reads of the heads; default 2s. It bounds how stale
	// a lag report is.
	Interval time.Duration
	// Timeout bounds one read of a head; default 2s.
	Timeout time.Duration
	// Logger hears when heads become unreadable and readable again; nil
	// discards.
	Logger *slog.Logger
}

// Monitor compares a process's progress with the heads of its feeds. Run
// reads the heads in the background, so /readyz and /metrics answer from
// memory even when the cluster is unreachable.
type Monitor struct {
	progress func() []Progress
	opts     MonitorOptions

	mu    sync.Mutex
	heads map[string]head
}

// head is the last reading of a feed's head.
type head struct {
	rev uint64
	// at is when rev was read; zero if never.
	at time.Time
	// err is the last reading's failure, nil after a success.
	err error
}

// NewMonitor monitors the feeds progress reports; it is called on every
// check and report, so it must be cheap and safe for concurrent use.
func NewMonitor(progress func() []Progress, opts MonitorOptions) *Monitor {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Monitor{progress: progress, opts: opts, heads: make(map[string]head)}
}

// Run reads the heads now and then every Interval until ctx ends; it
// returns nil.
func (m *Monitor) Run(ctx context.Context) error {
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		m.CheckHeads(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// CheckHeads reads the head of every feed that has one, once.
func (m *Monitor) CheckHeads(ctx context.Context) {
	for _, p := range m.progress() {
		if p.Head == nil {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
		rev, err := p.Head(hctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		h := m.heads[p.Feed]
		was := h.err
		if err != nil {
			h.err = err
		} else {
			h = head{rev: rev, at: time.Now()}
		}
		m.heads[p.Feed] = h
		m.mu.Unlock()
		switch {
		case err != nil && was == nil:
			m.opts.Logger.Warn("cannot read the head of a feed; its lag is unknown until it can", "feed", p.Feed, "err", err, "applied", p.Applied)
		case err == nil && was != nil:
			m.opts.Logger.Info("reading the head of a feed again", "feed", p.Feed, "head", rev, "applied", p.Applied)
		}
	}
}

// Report is what /readyz answers.
type Report struct {
	// Ready is true once every feed that gates readiness has replayed.
	// It stays true afterwards: see Lagging.
	Ready bool `json:"ready"`
	// Lagging is true when a feed is behind its last read head or its
	// head cannot be read (the edge may be cut off from the cluster).
	Lagging bool         `json:"lagging"`
	Feeds   []FeedReport `json:"feeds"`
}

// FeedReport is one feed's line of a Report.
type FeedReport struct {
	Feed    string `json:"feed"`
	Applied uint64 `json:"applied"`
	// Head is the last head read from the cluster, Behind how many
	// revisions Applied trails it (an upper bound on the entries still to
	// apply: superseded values are skipped). HeadKnown is false before
	// the first reading and for feeds without a head (Behind is then 0).
	Head      uint64 `json:"head"`
	Behind    uint64 `json:"behind"`
	HeadKnown bool   `json:"head_known"`
	// HeadAgeSeconds is how old the last reading of Head is; it grows
	// while HeadError says why the head cannot be read.
	HeadAgeSeconds float64 `json:"head_age_seconds,omitempty"`
	HeadError      string  `json:"head_error,omitempty"`
	// LastAppliedAgeSeconds is the time since the feed last applied a
	// batch or finished its replay; absent before either.
	LastAppliedAgeSeconds *float64 `json:"last_applied_age_seconds,omitempty"`
	Replayed              bool     `json:"replayed"`
	GatesReady            bool     `json:"gates_ready"`
}

// Report compares the progress now with the last heads read.
func (m *Monitor) Report() Report {
	now := time.Now()
	ps := m.progress()
	r := Report{Ready: true, Feeds: make([]FeedReport, 0, len(ps))}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		f := FeedReport{Feed: p.Feed, Applied: p.Applied, Replayed: p.Replayed, GatesReady: p.GatesReady}
		if p.GatesReady && !p.Replayed {
			r.Ready = false
		}
		if !p.LastApplied.IsZero() {
			age := now.Sub(p.LastApplied).Seconds()
			f.LastAppliedAgeSeconds = &age
		}
		if h, ok := m.heads[p.Feed]; ok && p.Head != nil {
			if !h.at.IsZero() {
				f.HeadKnown, f.Head = true, h.rev
				f.HeadAgeSeconds = now.Sub(h.at).Seconds()
				if h.rev > p.Applied {
					f.Behind = h.rev - p.Applied
				}
			}
			if h.err != nil {
				f.HeadError = h.err.Error()
				r.Lagging = true
			}
		}
		if f.Behind > 0 {
			r.Lagging = true
		}
		r.Feeds = append(r.Feeds, f)
	}
	return r
}
