package bus

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// KV is the handle of the key-value bucket named bucket. The first call
// looks it up and the connection keeps it: JetStream.KeyValue is a
// stream-info request, which takes the stream's lock on the server, so a
// lookup per message was a round trip per file indexed and held up the
// bucket's writes (a third of indexing's CPU went away with it). A failed
// lookup is not kept. A handle names the bucket's stream and subjects, so
// it outlives the bucket being re-created.
func (c *Conn) KV(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	return kept(&c.kvs, bucket, func() (jetstream.KeyValue, error) { return c.JS.KeyValue(ctx, bucket) })
}

// Objects is the handle of the object store named bucket, kept as KV
// keeps a bucket's.
func (c *Conn) Objects(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	return kept(&c.objects, bucket, func() (jetstream.ObjectStore, error) { return c.JS.ObjectStore(ctx, bucket) })
}

// kept is the handle handles keeps for bucket, looked up first if it has
// none. Keyed by the bucket's name alone, a call on the hot path builds no
// string.
func kept[H any](handles *sync.Map, bucket string, lookup func() (H, error)) (H, error) {
	if h, ok := handles.Load(bucket); ok {
		return h.(H), nil
	}
	h, err := lookup()
	if err != nil {
		return h, err
	}
	handles.Store(bucket, h)
	return h, nil
}
