package main

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cuedeck/cuedeck/internal/workspace"
)

func TestWatchLoopDebouncesBursts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		events := make(chan fsnotify.Event)
		var renders atomic.Int32
		done := make(chan error)
		go func() {
			done <- watchLoop(ctx, events, nil, watchDebounce,
				func(ev fsnotify.Event) bool { return ev.Name != "ignored" },
				func(string) {}, func() { renders.Add(1) }, io.Discard)
		}()
		for range 5 { // a burst of saves 100 ms apart
			events <- fsnotify.Event{Name: "/ws/a.md", Op: fsnotify.Write}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(399 * time.Millisecond)
		synctest.Wait()
		if renders.Load() != 0 {
			t.Fatalf("rendered %d times before the burst settled", renders.Load())
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if renders.Load() != 1 {
			t.Fatalf("renders = %d after the burst, want 1", renders.Load())
		}
		events <- fsnotify.Event{Name: "ignored", Op: fsnotify.Write}
		time.Sleep(time.Second)
		synctest.Wait()
		if renders.Load() != 1 {
			t.Fatalf("an ignored event rendered (renders = %d)", renders.Load())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestWatchIgnoresItsOwnOutput(t *testing.T) {
	ws := &workspace.Workspace{Root: "/ws"}
	for name, want := range map[string]bool{
		"/ws/.cuedeck/cards/a.md":         true,
		"/ws/docs/api.md":                 true,
		"/ws/.cuedeck/SCENE.md":           false,
		"/ws/.cuedeck/.scene-123":         false,
		"/ws/.cuedeck/.cache/nats/x":      false,
		"/ws/.git/index":                  false,
		"/ws/web/node_modules/x/index.js": false,
	} {
		if got := relevant(ws, fsnotify.Event{Name: name, Op: fsnotify.Write}); got != want {
			t.Errorf("relevant(%s) = %v, want %v", name, got, want)
		}
	}
}
