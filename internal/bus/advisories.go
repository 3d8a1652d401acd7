package bus

import (
	"fmt"
	"strings"

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
