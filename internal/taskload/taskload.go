// Package taskload is many agents writing tasks at once: each client, a
// NATS connection of its own as each agent's `cue mcp` is, creates a task
// and moves it to active and then done, again and again, through the
// edges' query services. `cue bench --tasks` runs it against daemons in
// their own processes, as users run them; the daemon package's benchmark
// and tests run it against daemons in the test's process. Afterwards the
// task log is read whole: every write a client saw acknowledged must be
// in it exactly once.
package taskload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Options configure Run. Clients connect to URLs[i%len(URLs)] and call
// the query service at Prefixes[i%len(Prefixes)].
type Options struct {
	URLs, Prefixes []string
	Clients        int
	Duration       time.Duration
	// CallTimeout bounds each call (the query client's default when zero).
	CallTimeout time.Duration
}

// Result is what the clients of one run saw.
type Result struct {
	Duration       time.Duration
	Create, Update []time.Duration
	// Failures counts the failed calls by tool, error code and the
	// error's start.
	Failures map[string]int
	// Created are the acknowledged tasks; Updates the request ids of the
	// acknowledged updates.
	Created, Updates []string

	mu sync.Mutex
}

// Run has o.Clients clients write tasks for o.Duration.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Clients < 1 || len(o.URLs) == 0 || len(o.Prefixes) == 0 {
		return nil, errors.New("taskload: give at least one client, NATS URL and query prefix")
	}
	r := &Result{Duration: o.Duration, Failures: map[string]int{}}
	callers := make([]tools.Caller, o.Clients)
	for c := range o.Clients {
		conn, err := bus.Connect(ctx, o.URLs[c%len(o.URLs)], bus.ConnectOptions{Name: fmt.Sprintf("task-load-%d", c)})
		if err != nil {
			return nil, fmt.Errorf("taskload: client %d: %w", c, err)
		}
		defer conn.Close()
		caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: o.Prefixes[c%len(o.Prefixes)], Timeout: o.CallTimeout})
		if err != nil {
			return nil, fmt.Errorf("taskload: client %d: %w", c, err)
		}
		callers[c] = caller
	}
	deadline := time.Now().Add(o.Duration)
	var wg sync.WaitGroup
	errs := make(chan error, o.Clients)
	for c, caller := range callers {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				if err := r.round(ctx, caller, fmt.Sprintf("c%d-%d", c, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return r, ctx.Err()
}

// round creates a task and updates it twice; err is an answer that does
// not decode (a failed call is counted, not returned).
func (r *Result) round(ctx context.Context, caller tools.Caller, req string) error {
	args, _ := json.Marshal(map[string]any{"title": "Load task " + req, "request_id": req + "-create"})
	start := time.Now()
	out, err := caller.Call(ctx, tools.CreateTask, args)
	took := time.Since(start)
	if err != nil {
		r.failed(tools.CreateTask, err)
		return nil
	}
	var res tools.CreateTaskResult
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("taskload: create_task answered %.80q: %w", out, err)
	}
	r.mu.Lock()
	r.Create = append(r.Create, took)
	r.Created = append(r.Created, res.ID)
	r.mu.Unlock()
	for j, status := range []string{"active", "done"} {
		up := fmt.Sprintf("%s-update%d", req, j)
		args, _ := json.Marshal(map[string]any{"id": res.ID, "updates": map[string]any{"status": status}, "request_id": up})
		start := time.Now()
		_, err := caller.Call(ctx, tools.UpdateTask, args)
		took := time.Since(start)
		if err != nil {
			r.failed(tools.UpdateTask, err)
			continue
		}
		r.mu.Lock()
		r.Update = append(r.Update, took)
		r.Updates = append(r.Updates, up)
		r.mu.Unlock()
	}
	return nil
}

func (r *Result) failed(tool string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	code := "other"
	var te *tools.Error
	if errors.As(err, &te) {
		code = strconv.Itoa(te.Code)
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	r.Failures[tool+" "+code+": "+s]++
}

// Summary is a run's figures.
type Summary struct {
	Clients         int            `json:"clients"`
	Edges           int            `json:"edges"`
	Seconds         float64        `json:"seconds"`
	Creates         int            `json:"creates"`
	Updates         int            `json:"updates"`
	CreateP50Ms     float64        `json:"create_p50_ms"`
	CreateP99Ms     float64        `json:"create_p99_ms"`
	UpdateP50Ms     float64        `json:"update_p50_ms"`
	UpdateP99Ms     float64        `json:"update_p99_ms"`
	WritesPerSecond float64        `json:"writes_per_second"`
	Failures        int            `json:"failures"`
	FailureKinds    map[string]int `json:"failure_kinds,omitempty"`
	// Lost and Duplicated are acknowledged writes missing from the task
	// log, and held there more than once (Check).
	Lost       int `json:"lost"`
	Duplicated int `json:"duplicated"`
}

// Summary summarises r; Lost and Duplicated are Check's to fill in.
func (r *Result) Summary() Summary {
	p := func(lat []time.Duration, q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		s := slices.Clone(lat)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	failures := 0
	for _, n := range r.Failures {
		failures += n
	}
	return Summary{
		Seconds: r.Duration.Seconds(), Creates: len(r.Create), Updates: len(r.Update),
		CreateP50Ms: p(r.Create, 0.5), CreateP99Ms: p(r.Create, 0.99),
		UpdateP50Ms: p(r.Update, 0.5), UpdateP99Ms: p(r.Update, 0.99),
		WritesPerSecond: float64(len(r.Create)+len(r.Update)) / r.Duration.Seconds(),
		Failures:        failures, FailureKinds: r.Failures,
	}
}

// Check reads the whole task log and counts the acknowledged creates and
// updates it lacks (lost) and holds more than once (dup), and the events
// made for one request id more than once.
func (r *Result) Check(ctx context.Context, js jetstream.JetStream) (lost, dup int, err error) {
	creates, requests := map[string]int{}, map[string]int{}
	err = readLog(ctx, js, func(ev events.Event) {
		if te, ok := ev.(events.TaskEvent); ok {
			if te.Op == events.TaskCreated {
				creates[te.Task.ID]++
			}
			if te.RequestID != "" {
				requests[te.RequestID]++
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	count := func(k int) {
		switch k {
		case 0:
			lost++
		case 1:
		default:
			dup += k - 1
		}
	}
	acked := make(map[string]bool, len(r.Updates))
	for _, id := range r.Created {
		count(creates[id])
	}
	for _, req := range r.Updates {
		acked[req] = true
		count(requests[req])
	}
	for req, k := range requests {
		if k > 1 && !acked[req] {
			dup += k - 1
		}
	}
	return lost, dup, nil
}

// readLog hands every event of the task log to each, oldest first.
func readLog(ctx context.Context, js jetstream.JetStream, each func(events.Event)) error {
	cons, err := js.OrderedConsumer(ctx, events.TasksStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("taskload: read the task log: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("taskload: read the task log: %w", err)
	}
	for n := info.NumPending; n > 0; {
		batch, err := cons.Fetch(int(min(n, 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return fmt.Errorf("taskload: read the task log: %w", err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			ev, err := events.Decode(msg.Data())
			if err != nil {
				return fmt.Errorf("taskload: %s holds a message that does not decode: %w", events.TasksStream, err)
			}
			each(ev)
		}
		if got == 0 {
			return fmt.Errorf("taskload: %s stopped with %d messages unread: %v", events.TasksStream, n, batch.Error())
		}
		n -= uint64(got)
	}
	return nil
}
