// Package cpumeter adds up the CPU time that chosen pieces of work take,
// whichever goroutines run them: the process's CPU time counts every
// role of the laptop daemon at once, and the Go runtime keeps no clock
// per goroutine. A piece of work is run on a thread of its own for its
// duration (runtime.LockOSThread), and the thread's CPU clock is read
// before and after it.
//
// The embed workers meter the model's work so that `cue status` can say
// what embedding cost; the model passes the Meter it finds in its context
// to every goroutine it fans out to.
package cpumeter

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Meter is the CPU time of the work run through it. Its methods are safe
// for concurrent use, and on a nil *Meter Do just runs the work.
type Meter struct {
	nanos    atomic.Int64
	measured atomic.Bool
}

// Do runs work and adds the CPU time it took to m. Work that starts other
// goroutines must meter them too (pass m along); only the calling
// goroutine's time is read here. Calls must not nest on one goroutine: the
// inner call's time would be counted twice.
func (m *Meter) Do(work func()) {
	if m == nil || !Supported {
		work()
		return
	}
	runtime.LockOSThread()
	start, ok := threadTime()
	work()
	end, ok2 := threadTime()
	runtime.UnlockOSThread()
	if ok && ok2 && end >= start {
		m.nanos.Add(int64(end - start))
		m.measured.Store(true)
	}
}

// Total is the CPU time metered so far.
func (m *Meter) Total() time.Duration {
	if m == nil {
		return 0
	}
	return time.Duration(m.nanos.Load())
}

// Measured reports whether any work was metered: false while nothing ran
// through Do, on a platform without thread clocks, and for work done
// elsewhere (a model on its own server never calls Do).
func (m *Meter) Measured() bool { return m != nil && m.measured.Load() }

type meterKey struct{}

// With returns ctx carrying m, for the work a call does on its behalf.
func With(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// From is the Meter ctx carries, nil if none (Do on nil just runs the
// work).
func From(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}
