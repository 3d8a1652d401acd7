package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// The capped work queues (CUE_INGEST, CUE_EMBED) reserve their MaxBytes in
// JetStream, which grants an embedded server 75 % of the disk space free
// when it starts. A laptop's queues are sized from that space.
const (
	// DefaultQueueMaxBytes caps each queue when space allows (and on a
	// cluster, whose operators size its disks).
	DefaultQueueMaxBytes = 2 << 30
	// MinQueueMaxBytes is the smallest cap sized from free space; below it
	// a burst of edits could fill a queue while its workers catch up.
	MinQueueMaxBytes = 32 << 20
	// MinConfiguredQueueMaxBytes is the smallest cap [nats] queue_max_bytes
	// may set: one large file's event must fit.
	MinConfiguredQueueMaxBytes = 16 << 20
	// queueShareOfFree is the part of the free space each queue may
	// reserve: the two together a quarter, leaving the rest for the
	// buckets, which reserve nothing but grow with the repository.
	queueShareOfFree = 8
	// errCodeStorageExceeded is JetStream's "insufficient storage
	// resources available" (nats-server's JSStorageResourcesExceededErr).
	errCodeStorageExceeded jetstream.ErrorCode = 10047
)

// ErrLowDisk is wrapped by the errors of a disk too full to start on.
var ErrLowDisk = errors.New("not enough free disk space")

// QueueMaxBytesFor sizes each capped queue for an embedded server whose
// store has free bytes available: an eighth of them, at most
// DefaultQueueMaxBytes. When that is under MinQueueMaxBytes the error
// wraps ErrLowDisk and says how much free space is needed and which
// setting lowers it; dir names the store in it.
func QueueMaxBytesFor(dir string, free uint64) (int64, error) {
	size := min(free/queueShareOfFree, DefaultQueueMaxBytes)
	if size < MinQueueMaxBytes {
		return 0, fmt.Errorf("%w: %s has %s free and CueDeck's queues need %s there; free some space, or set [nats] queue_max_bytes (at least %s) in .cuedeck/config.toml",
			ErrLowDisk, dir, mib(free), mib(MinQueueMaxBytes*queueShareOfFree), mib(MinConfiguredQueueMaxBytes))
	}
	return int64(size), nil
}

// IsInsufficientStorage reports whether err is JetStream's "insufficient
// storage resources available" (10047).
func IsInsufficientStorage(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeStorageExceeded
}

// ExplainInsufficientStorage rewrites JetStream's "insufficient storage
// resources" error (10047), which names neither the disk nor a remedy; any
// other error is returned as it is.
func ExplainInsufficientStorage(err error, dir string, free uint64, queueMaxBytes int64) error {
	if !IsInsufficientStorage(err) {
		return err
	}
	return fmt.Errorf("%w: JetStream cannot reserve %s for each of its two queues on %s, which has %s free (it grants 75 %% of that); free some space, or lower [nats] queue_max_bytes in .cuedeck/config.toml (at least %s): %v",
		ErrLowDisk, mib(uint64(queueMaxBytes)), dir, mib(free), mib(MinConfiguredQueueMaxBytes), err)
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// cappedQueues are the streams whose MaxBytes the settings' IngestMaxBytes
// sets.
var cappedQueues = []string{events.IngestStream, events.EmbedStream}

// ShrinkEmptyQueues deletes each capped queue that reserves more than
// maxBytes and holds no message, so that provisioning recreates it at
// maxBytes. It is for an embedded server only: a queue created larger (by
// an earlier release, or with more free space) keeps its reservation when
// the disk fills, and JetStream then refuses to lower either of two such
// queues while the other still holds its share. A queue holding messages
// is left alone. It returns the queues it deleted.
func ShrinkEmptyQueues(ctx context.Context, js jetstream.JetStream, maxBytes int64, log *slog.Logger) ([]string, error) {
	return deleteEmptyQueues(ctx, js, log, func(info *jetstream.StreamInfo) (string, []any) {
		if info.Config.MaxBytes <= maxBytes {
			return "", nil
		}
		return "queue reserved more disk than is free; recreating it empty, smaller", []any{"reserved_mib", info.Config.MaxBytes >> 20, "new_mib", maxBytes >> 20}
	})
}

// deleteEmptyQueues deletes each capped queue that holds no message and
// that recreate finds a reason to create again: a message to log, with
// its attributes ("" keeps the queue). It returns the queues it deleted.
func deleteEmptyQueues(ctx context.Context, js jetstream.JetStream, log *slog.Logger, recreate func(*jetstream.StreamInfo) (string, []any)) ([]string, error) {
	var deleted []string
	for _, name := range cappedQueues {
		s, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("bus: read stream %s: %w", name, err)
		}
		info := s.CachedInfo()
		if info.State.Msgs > 0 {
			continue
		}
		why, attrs := recreate(info)
		if why == "" {
			continue
		}
		if err := js.DeleteStream(ctx, name); err != nil {
			return deleted, fmt.Errorf("bus: delete stream %s: %w", name, err)
		}
		if log != nil {
			log.Info(why, append([]any{"stream", name}, attrs...)...)
		}
		deleted = append(deleted, name)
	}
	return deleted, nil
}
