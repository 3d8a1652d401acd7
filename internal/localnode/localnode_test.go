package localnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// A call after the daemon stopped on its own says why it stopped, not to
// start a daemon: a measurement's daemon is not the user's to start.
func TestACallAfterTheDaemonStoppedSaysWhy(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# Alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), root, Options{Model: "none", Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	bustest.Eventually(t, 30*time.Second, "a.md indexed", func() bool {
		ok, err := n.HasDoc(context.Background(), "a.md")
		return err == nil && ok
	})
	store := n.WS.NATSStoreDir()
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	// Calls answer until the daemon sees the deletion; the first that
	// fails names the stop.
	var last error
	bustest.Eventually(t, 30*time.Second, "a call failing", func() bool {
		_, last = n.HasDoc(context.Background(), "a.md")
		return last != nil
	})
	if !strings.Contains(last.Error(), store) || strings.Contains(last.Error(), "No edge is serving") {
		t.Errorf("the error %q should name %s, not ask for a daemon", last, store)
	}
	if err := n.Stop(); err == nil || !strings.Contains(err.Error(), store) {
		t.Errorf("Stop: %v, want the daemon's own error", err)
	}
}
