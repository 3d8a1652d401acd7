package bus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// streamAdvisoryPrefix starts the subjects on which JetStream announces
// what happens to a stream: $JS.EVENT.ADVISORY.STREAM.<kind>.<stream>.
const streamAdvisoryPrefix = "$JS.EVENT.ADVISORY.STREAM."

// replacingAdvisories are the kinds of stream advisory that can mean
// another incarnation, or a stream cut back: created, deleted, restored
// from a backup.
var replacingAdvisories = map[string]bool{"CREATED": true, "DELETED": true, "RESTORE_COMPLETE": true}

// OnStreamReplaced calls fn with the stream's name whenever the server
// announces that one of streams was created, deleted or restored. A
// reader that compares a stream with the incarnation it follows
// (bus.StreamState) then checks at once, where its periodic check would
// leave it answering from a lost stream for seconds. The calls are made
// on the connection's delivery goroutine: fn must not block. stop ends
// the subscriptions.
func OnStreamReplaced(nc *nats.Conn, fn func(stream string), streams ...string) (stop func(), err error) {
	var subs []*nats.Subscription
	stop = func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	for _, stream := range streams {
		sub, err := nc.Subscribe(streamAdvisoryPrefix+"*."+stream, func(m *nats.Msg) {
			kind, name, ok := strings.Cut(strings.TrimPrefix(m.Subject, streamAdvisoryPrefix), ".")
			if ok && replacingAdvisories[kind] {
				fn(name)
			}
		})
		if err != nil {
			stop()
			return nil, fmt.Errorf("bus: subscribe to the advisories of stream %s: %w", stream, err)
		}
		subs = append(subs, sub)
	}
	return stop, nil
}

// CheckEveryAndWhenAnnounced calls check every period, and at once each
// time announced delivers (OnStreamReplaced's word), until ctx ends or
// check returns stop. An announced check that found its stream
// unreadable is made again after AnnouncedRetryFirst, then twice as long
// each time up to AnnouncedRetryLast: the server announces a stream
// created before it answers for it (nats-server v2.15.2 told the check
// right after the announcement "stream not found"), and that one check
// passing left the reader on the old stream until its next periodic one.
func CheckEveryAndWhenAnnounced(ctx context.Context, period time.Duration, announced <-chan struct{}, check func() (stop, unreadable bool)) {
	t := time.NewTicker(period)
	defer t.Stop()
	var again <-chan time.Time
	var retryIn time.Duration // 0: no announced check awaits its stream
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-announced:
			retryIn = AnnouncedRetryFirst
		case <-again:
		}
		again = nil
		stop, unreadable := check()
		if stop {
			return
		}
		if !unreadable || retryIn == 0 || retryIn > AnnouncedRetryLast {
			retryIn = 0
			continue
		}
		again = time.After(retryIn)
		retryIn *= 2
	}
}

// AnnouncedRetryFirst and AnnouncedRetryLast bound the checks made again
// after an announced one could not read its stream
// (CheckEveryAndWhenAnnounced): about 3 s in all.
const (
	AnnouncedRetryFirst = 50 * time.Millisecond
	AnnouncedRetryLast  = 1600 * time.Millisecond
)
