package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func BenchmarkStorePut(b *testing.B) {
	conn, _ := bustest.StartDurable(b, bus.Settings{})
	kv, err := conn.JS.KeyValue(context.Background(), events.MemoriesBucket)
	if err != nil {
		b.Fatal(err)
	}
	s := NewStore(kv, clock.System{})
	s.SetDurable(conn.Durable)
	now := time.Now()
	b.Run("insert", func(b *testing.B) {
		i := 0
		for b.Loop() {
			put(b, s, candidate(fmt.Sprintf("Memory number %d", i), 0.5, "b", now))
			i++
		}
	})
	b.Run("seen-again", func(b *testing.B) {
		put(b, s, candidate("A memory said in every batch", 0.5, "b0", now))
		i := 0
		for b.Loop() {
			i++
			put(b, s, candidate("A memory said in every batch", 0.5, fmt.Sprint("b", i), now))
		}
	})
}
