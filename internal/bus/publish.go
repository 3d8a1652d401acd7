package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Publisher is the narrow part of JetStream that publishing events needs.
type Publisher interface {
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

// PublishEvent encodes ev and publishes it with msgID as Nats-Msg-Id,
// retrying with backoff for up to PublishRetryHorizon (or until ctx ends).
// A publish that timed out may still have been stored, which is why the id
// is required: the retry is then recognised as a duplicate. Errors that no
// retry fixes (an event that does not encode, a subject no stream takes)
// return at once.
func PublishEvent(ctx context.Context, p Publisher, subject, msgID string, ev events.Event) (*jetstream.PubAck, error) {
	if msgID == "" {
		return nil, errors.New("bus: publish without a message id")
	}
	data, err := events.Encode(ev)
	if err != nil {
		return nil, Permanent(err)
	}
	// A nearly full disk holds the publish back rather than failing it.
	if err := Writes.Wait(ctx); err != nil {
		return nil, err
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	msg.Header.Set(events.HeaderKind, string(ev.EventKind()))

	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 5 * time.Second
	b.MaxElapsedTime = PublishRetryHorizon
	var ack *jetstream.PubAck
	op := func() error {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		a, err := p.PublishMsg(actx, msg)
		if err == nil {
			ack = a
			return nil
		}
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, context.DeadlineExceeded) ||
			errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionReconnecting) ||
			isStreamFull(err) {
			return err
		}
		if ctx.Err() != nil {
			return backoff.Permanent(ctx.Err())
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			return backoff.Permanent(err)
		}
		return err
	}
	if err := backoff.Retry(op, backoff.WithContext(b, ctx)); err != nil {
		return nil, fmt.Errorf("bus: publish %s (%s): %w", subject, msgID, err)
	}
	return ack, nil
}

// errCodeStreamStoreFailed is nats-server's JSStreamStoreFailedF, which a
// discard-new stream answers with "maximum bytes exceeded" when full.
const errCodeStreamStoreFailed = 10077

// isStreamFull reports the discard-new refusal of a full stream: a reason to
// wait for workers to catch up, not to give up.
func isStreamFull(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == errCodeStreamStoreFailed && strings.Contains(apiErr.Description, "maximum")
	}
	return false
}

// WrongLastSequence reports a compare-and-set publish refused because the
// subject's last sequence is not the one expected. A replicated stream
// answers it with its own code (10164), a single replica with 10071: a
// check of one code alone takes every conflict on a cluster for a failure.
func WrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
