package extractor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// maxCASAttempts bounds a compare-and-set loop. Every round some writer
// wins, so a writer loses at most as many rounds as there are writers
// racing it; the bound only stops a loop against a bucket that keeps
// failing in some other way.
const maxCASAttempts = 1000

// errCASExhausted is returned when a key stayed contended past
// maxCASAttempts; the caller's batch is retried later.
var errCASExhausted = errors.New("extractor: key too contended; will retry the batch")

// updateJSON applies fn to the JSON value of key and writes the result with
// compare-and-set (Create when the key is absent), retrying on conflict.
// fn gets the current value (the zero value when absent) and returns
// whether to write; it may run several times, so it must not have effects
// outside the value.
func updateJSON[T any](ctx context.Context, kv jetstream.KeyValue, key string, fn func(v *T) (write bool, err error)) (T, error) {
	for range maxCASAttempts {
		var v T
		var rev uint64
		e, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
			if e != nil {
				rev = e.Revision() // a delete marker: update over it
			}
		case err != nil:
			return v, fmt.Errorf("get %s: %w", key, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &v); err != nil {
				return v, fmt.Errorf("%s holds %q, not JSON: %w (delete the key to start it again)", key, truncate(string(e.Value()), 80), err)
			}
		}
		write, err := fn(&v)
		if err != nil || !write {
			return v, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return v, fmt.Errorf("encode %s: %w", key, err)
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, data)
		} else {
			_, err = kv.Update(ctx, key, data, rev)
		}
		if isConflict(err) {
			continue
		}
		if err != nil {
			return v, fmt.Errorf("put %s: %w", key, err)
		}
		return v, nil
	}
	var zero T
	return zero, fmt.Errorf("%w: %s", errCASExhausted, key)
}

// isConflict reports a compare-and-set that lost to another writer.
func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func isNotFound(err error) bool {
	return errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

func jsonUnmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("not JSON (%q): %w; delete the key to start it again", truncate(string(b), 80), err)
	}
	return nil
}
