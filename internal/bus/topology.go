package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/version"
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
				Description: "file and transcript events from ingest, consumed once by workers, who trim what they acknowledged",
				Subjects:    []string{events.SubjectFilePrefix + ">", events.SubjectTranscriptPrefix + ">"},
				// Not a work queue: there every ack removes its message,
				// one more write synced to disk per event; the workers
				// trim acknowledged events in ranges instead (Worker.trim).
				Retention:  jetstream.LimitsPolicy,
				Discard:    jetstream.DiscardNew,
				MaxBytes:   s.IngestMaxBytes,
				Duplicates: s.DuplicateWindow,
				Storage:    jetstream.FileStorage,
				Replicas:   s.Replicas,
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
				// Many writes queued at once on one edge go as one batch.
				AllowAtomicPublish: true,
			},
			{
				Name:        events.EmbedStream,
				Description: "embed requests from indexers, consumed once by embed workers, who trim what they acknowledged",
				Subjects:    []string{events.SubjectEmbedPrefix + ">"},
				Retention:   jetstream.LimitsPolicy, // trimmed, as CUE_INGEST
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
				// Records carry the files' text: S2 halves what they
				// take on disk for a few percent of a core.
				Compression: true,
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
				Bucket:      events.ScansBucket,
				Description: "ingest's scan progress per repo: files found and handed to the bus, read by edges and cue status",
				History:     1,
				Storage:     jetstream.FileStorage,
				Replicas:    s.Replicas,
			},
			{
				Bucket:      events.TaskWritersBucket,
				Description: "which edge writes each repo's tasks: a lease the holder renews, so the edges of a team forward task writes to one writer instead of racing",
				History:     1,
				TTL:         events.TaskWriterLease,
				// A lease outlives nothing: when the server that held it
				// restarts, the edges elect a writer again.
				Storage:  jetstream.MemoryStorage,
				Replicas: s.Replicas,
			},
			{
				Bucket:      events.EmbedCostBucket,
				Description: "what embedding has cost per model: chunks, CPU seconds, time waiting on the model; added to by embed workers with compare-and-set, read by cue status",
				History:     1,
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
				Compression: true,
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

// FormatKey is the metadata key, on every stream, bucket, object store and
// consumer Provision creates, holding the data format
// (version.DataFormat) of what it stores.
const FormatKey = "cuedeck_format"

// NewerFormatError means a JetStream asset was provisioned by a newer
// CueDeck, whose data this binary may misread. Provision changes nothing
// when it returns one.
type NewerFormatError struct {
	Asset  string // "stream CUE_INGEST", "bucket cue_docs"
	Format int
}

func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("bus: %s: this workspace was written by a newer CueDeck (data format %d, this binary knows %d); upgrade cue (cue upgrade) or use a newer binary", e.Asset, e.Format, version.DataFormat)
}

// AssetFormat reads the data format from an asset's metadata: 0 when it
// has none (provisioned before formats were recorded).
func AssetFormat(metadata map[string]string) (int, error) {
	v, ok := metadata[FormatKey]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("metadata %s=%q is not a data format number", FormatKey, v)
	}
	return n, nil
}

func withFormat(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[FormatKey] = strconv.Itoa(version.DataFormat)
	return out
}

// assetStream names the stream behind each asset of t, with what to call
// the asset in messages.
func (t Topology) assetStreams() [][2]string {
	var out [][2]string
	for _, sc := range t.Streams {
		out = append(out, [2]string{sc.Name, "stream " + sc.Name})
	}
	for _, kc := range t.Buckets {
		out = append(out, [2]string{"KV_" + kc.Bucket, "bucket " + kc.Bucket})
	}
	for _, oc := range t.Objects {
		out = append(out, [2]string{"OBJ_" + oc.Bucket, "object store " + oc.Bucket})
	}
	return out
}

// checkFormats refuses, before anything is changed, a topology in which
// an asset has a newer data format, and returns the existing assets of an
// older one.
func checkFormats(ctx context.Context, js jetstream.JetStream, t Topology) (older []string, err error) {
	for _, a := range t.assetStreams() {
		s, err := js.Stream(ctx, a[0])
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bus: provision %s: %w", a[1], err)
		}
		f, err := AssetFormat(s.CachedInfo().Config.Metadata)
		if err != nil {
			return nil, fmt.Errorf("bus: provision %s: %v; set it to %d or remove it", a[1], err, version.DataFormat)
		}
		switch {
		case f > version.DataFormat:
			return nil, &NewerFormatError{Asset: a[1], Format: f}
		case f < version.DataFormat:
			older = append(older, fmt.Sprintf("%s (format %d)", a[1], f))
		}
	}
	return older, nil
}

// Provision creates or updates every asset of t, recording the data format
// in each one's metadata. It is idempotent, so every role calls it at
// start: the first one up creates, the rest confirm. If any existing asset
// has a newer data format, a *NewerFormatError is returned and nothing is
// changed; assets of an older format whose config is otherwise compatible
// are updated to this one, and log says so. log may be nil.
func Provision(ctx context.Context, js jetstream.JetStream, t Topology, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	older, err := checkFormats(ctx, js, t)
	if err != nil {
		return err
	}
	for _, sc := range t.Streams {
		sc.Metadata = withFormat(sc.Metadata)
		for attempt := 1; ; attempt++ {
			cfg, err := withFirstSeq(ctx, js, sc)
			if err != nil {
				return err
			}
			cfg, kept, err := keepWorkQueue(ctx, js, cfg)
			if err != nil {
				return err
			}
			if kept && attempt == 1 {
				log.Info("queue stays a work queue (an earlier CueDeck created it so, and JetStream cannot change a stream's retention): cue up recreates it once it starts with the queue empty; on a cluster, delete it while empty and start a role", "stream", sc.Name)
			}
			_, err = js.CreateOrUpdateStream(ctx, cfg)
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) && attempt < 3 {
				// Another role created it, at its own first sequence,
				// since withFirstSeq looked: take that one.
				continue
			}
			if err != nil {
				return fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
			}
			break
		}
	}
	for _, kc := range t.Buckets {
		kc.Metadata = withFormat(kc.Metadata)
		if _, err := js.CreateOrUpdateKeyValue(ctx, kc); err != nil {
			return fmt.Errorf("bus: provision bucket %s: %w", kc.Bucket, err)
		}
	}
	for _, oc := range t.Objects {
		oc.Metadata = withFormat(oc.Metadata)
		if _, err := js.CreateOrUpdateObjectStore(ctx, oc); err != nil {
			return fmt.Errorf("bus: provision object store %s: %w", oc.Bucket, err)
		}
	}
	for _, cs := range t.Consumers {
		cs.Config.Metadata = withFormat(cs.Config.Metadata)
		if _, err := js.CreateOrUpdateConsumer(ctx, cs.Stream, cs.Config); err != nil {
			return fmt.Errorf("bus: provision consumer %s on %s: %w", cs.Config.Durable, cs.Stream, err)
		}
	}
	if len(older) > 0 {
		log.Warn("JetStream assets of an older data format were updated to this one (their config was otherwise compatible)", "assets", strings.Join(older, ", "), "data_format", version.DataFormat)
	}
	return nil
}

// PlacementRefused reports whether err is JetStream refusing a replicated
// asset for want of peers (a node still joining, or counted offline until
// the leader hears from it), which asking again once it is up cures.
func PlacementRefused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jsErrNoSuitablePeers || apiErr.ErrorCode == jsErrClusterUnavailable)
}

// JetStream error codes nats.go does not name.
const (
	jsErrNoSuitablePeers    jetstream.ErrorCode = 10005
	jsErrClusterUnavailable jetstream.ErrorCode = 10008
)

// ConsumerConfig returns the declared config of a durable consumer.
func (t Topology) ConsumerConfig(stream, durable string) (jetstream.ConsumerConfig, bool) {
	for _, cs := range t.Consumers {
		if cs.Stream == stream && cs.Config.Durable == durable {
			return cs.Config, true
		}
	}
	return jetstream.ConsumerConfig{}, false
}
