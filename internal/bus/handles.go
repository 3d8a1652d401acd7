package bus

import (
	"context"

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
	if h, ok := c.handles.Load("kv:" + bucket); ok {
		return h.(jetstream.KeyValue), nil
	}
	kv, err := c.JS.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	c.handles.Store("kv:"+bucket, kv)
	return kv, nil
}

// Objects is the handle of the object store named bucket, kept as KV
// keeps a bucket's.
func (c *Conn) Objects(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	if h, ok := c.handles.Load("obj:" + bucket); ok {
		return h.(jetstream.ObjectStore), nil
	}
	obs, err := c.JS.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	c.handles.Store("obj:"+bucket, obs)
	return obs, nil
}
