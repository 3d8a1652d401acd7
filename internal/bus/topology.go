package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Settings are the knobs of the topology that differ between a laptop and a
// team cluster. The zero value is a valid single-node configuration.
type Settings struct {
	// Replicas of every stream and bucket: 1 on one node, 3 in a cluster.
	Replicas int
	// IngestMaxBytes caps CUE_INGEST; when full, publishes are refused
	// (discard new) and ingest backs off, rather than old events vanishing.
	IngestMaxBytes int64
	// DuplicateWindow is how long JetStream remembers message ids. It must
	// outlast the longest publish retry (PublishRetryHorizon).
	DuplicateWindow time.Duration
	// AckWait is how long a worker may hold a message before redelivery.
	AckWait time.Duration
	// MaxDeliver is how many deliveries a message gets before it is
	// dead-lettered.
	MaxDeliver int
	// DeadLetterMaxAge is how long dead letters are kept.
	DeadLetterMaxAge time.Duration
}

// PublishRetryHorizon is the longest a publisher keeps retrying one message.
// DuplicateWindow defaults to three times this, so a retry is always
// recognised as a duplicate.
const PublishRetryHorizon = 5 * time.Minute

func (s *Settings) setDefaults() {
	if s.Replicas == 0 {
		s.Replicas = 1
	}
	if s.IngestMaxBytes == 0 {
		s.IngestMaxBytes = 2 << 30
	}
	if s.DuplicateWindow == 0 {
		s.DuplicateWindow = 3 * PublishRetryHorizon
	}
	if s.AckWait == 0 {
		s.AckWait = 30 * time.Second
	}
	if s.MaxDeliver == 0 {
		s.MaxDeliver = 5
	}
	if s.DeadLetterMaxAge == 0 {
		s.DeadLetterMaxAge = 30 * 24 * time.Hour
	}
}

// Validate reports settings that cannot work together.
func (s Settings) Validate() error {
	s.setDefaults()
	if s.Replicas < 1 || s.Replicas > 5 {
		return fmt.Errorf("bus: replicas %d: use 1 (single node) to 5", s.Replicas)
	}
	if s.DuplicateWindow < PublishRetryHorizon {
		return fmt.Errorf("bus: duplicate window %s is shorter than the publish retry horizon %s: a retried publish could be stored twice", s.DuplicateWindow, PublishRetryHorizon)
	}
	if s.MaxDeliver < 1 {
		return errors.New("bus: max deliver must be at least 1")
	}
	return nil
}

// Topology is every JetStream asset CueDeck uses, declared in one place.
type Topology struct {
	Streams   []jetstream.StreamConfig
	Buckets   []jetstream.KeyValueConfig
	Objects   []jetstream.ObjectStoreConfig
	Consumers []ConsumerSpec
}

// ConsumerSpec is a durable consumer on a stream.
type ConsumerSpec struct {
	Stream string
	Config jetstream.ConsumerConfig
}

// DeclaredTopology returns the topology for s.
func DeclaredTopology(s Settings) Topology {
	s.setDefaults()
	return Topology{
		Streams: []jetstream.StreamConfig{
			{
				Name:        events.IngestStream,
				Description: "file and transcript events from ingest, consumed once by workers",
				Subjects:    []string{events.SubjectFilePrefix + ">", events.SubjectTranscriptPrefix + ">"},
				Retention:   jetstream.WorkQueuePolicy,
				Discard:     jetstream.DiscardNew,
				MaxBytes:    s.IngestMaxBytes,
				Duplicates:  s.DuplicateWindow,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Name:        events.TasksStream,
				Description: "task log, one subject per repo, written with expected last subject sequence",
				Subjects:    []string{events.SubjectTaskPrefix + ">"},
				Retention:   jetstream.LimitsPolicy,
				Discard:     jetstream.DiscardNew,
				Duplicates:  s.DuplicateWindow,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Name:        events.EmbedStream,
				Description: "embed requests from indexers, consumed once by embed workers",
				Subjects:    []string{events.SubjectEmbedPrefix + ">"},
				Retention:   jetstream.WorkQueuePolicy,
				Discard:     jetstream.DiscardNew,
				MaxBytes:    s.IngestMaxBytes,
				Duplicates:  s.DuplicateWindow,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Name:        events.DeadLetterStream,
				Description: "events workers gave up on, with the error in headers",
				Subjects:    []string{events.SubjectDeadLetterPrefix + ">"},
				Retention:   jetstream.LimitsPolicy,
				MaxAge:      s.DeadLetterMaxAge,
				Duplicates:  s.DuplicateWindow,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
		},
		Buckets: []jetstream.KeyValueConfig{
			{
				Bucket:      events.DocsBucket,
				Description: "one DocRecord per file, written by indexers, watched by edges",
				History:     1,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Bucket:      events.VectorsBucket,
				Description: "chunk vectors per model and file, written by embed workers, watched by edges",
				History:     1,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Bucket:      events.MemoriesBucket,
				Description: "memories per repo and dedup hash, written by extractors with compare-and-set, watched by edges",
				History:     1,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Bucket:      events.ExtractionsBucket,
				Description: "what extraction made of each transcript batch, so a redelivered batch is not extracted twice",
				History:     1,
				TTL:         events.ExtractionsMaxAge,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Bucket:      events.BudgetBucket,
				Description: "the extractors' shared daily LLM spend and token usage, updated with compare-and-set",
				History:     1,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
		},
		Objects: []jetstream.ObjectStoreConfig{
			{
				Bucket:      events.BlobsBucket,
				Description: "file contents too large to travel inline, named by sha256",
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
		},
		Consumers: []ConsumerSpec{
			{
				Stream: events.IngestStream,
				Config: jetstream.ConsumerConfig{
					Durable:       events.IndexerConsumer,
					Description:   "indexer workers: file events to DocRecords",
					FilterSubject: events.SubjectFilePrefix + ">",
					AckPolicy:     jetstream.AckExplicitPolicy,
					AckWait:       s.AckWait,
					MaxDeliver:    s.MaxDeliver,
					MaxAckPending: 1024,
					DeliverPolicy: jetstream.DeliverAllPolicy,
				},
			},
			{
				Stream: events.IngestStream,
				Config: jetstream.ConsumerConfig{
					Durable:       events.ExtractorConsumer,
					Description:   "extractor workers: transcript batches to memories",
					FilterSubject: events.SubjectTranscriptPrefix + ">",
					AckPolicy:     jetstream.AckExplicitPolicy,
					// An LLM call may take minutes on a laptop; workers
					// also report progress while they wait on it.
					AckWait:       max(s.AckWait, 5*time.Minute),
					MaxDeliver:    s.MaxDeliver,
					MaxAckPending: 64,
					DeliverPolicy: jetstream.DeliverAllPolicy,
				},
			},
			{
				Stream: events.EmbedStream,
				Config: jetstream.ConsumerConfig{
					Durable:     events.EmbedderConsumer,
					Description: "embed workers: DocRecords to VectorRecords",
					AckPolicy:   jetstream.AckExplicitPolicy,
					AckWait:     s.AckWait,
					// An unavailable model is transient: workers nak with a
					// delay until it answers, and dead-letter only requests
					// that can never succeed, so no delivery cap applies.
					MaxDeliver:    -1,
					MaxAckPending: 256,
					DeliverPolicy: jetstream.DeliverAllPolicy,
				},
			},
		},
	}
}

// Provision creates or updates every asset of t. It is idempotent, so every
// role calls it at start: the first one up creates, the rest confirm.
func Provision(ctx context.Context, js jetstream.JetStream, t Topology) error {
	for _, sc := range t.Streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
		}
	}
	for _, kc := range t.Buckets {
		if _, err := js.CreateOrUpdateKeyValue(ctx, kc); err != nil {
			return fmt.Errorf("bus: provision bucket %s: %w", kc.Bucket, err)
		}
	}
	for _, oc := range t.Objects {
		if _, err := js.CreateOrUpdateObjectStore(ctx, oc); err != nil {
			return fmt.Errorf("bus: provision object store %s: %w", oc.Bucket, err)
		}
	}
	for _, cs := range t.Consumers {
		if _, err := js.CreateOrUpdateConsumer(ctx, cs.Stream, cs.Config); err != nil {
			return fmt.Errorf("bus: provision consumer %s on %s: %w", cs.Config.Durable, cs.Stream, err)
		}
	}
	return nil
}

// ConsumerConfig returns the declared config of a durable consumer.
func (t Topology) ConsumerConfig(stream, durable string) (jetstream.ConsumerConfig, bool) {
	for _, cs := range t.Consumers {
		if cs.Stream == stream && cs.Config.Durable == durable {
			return cs.Config, true
		}
	}
	return jetstream.ConsumerConfig{}, false
}
