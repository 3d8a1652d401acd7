package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// post sends one JSON-RPC message and returns the status and the message
// answered, from a JSON or an event-stream body.
func post(t *testing.T, url, host, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(data)
				break
			}
		}
	} else if raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("response %q: %v", raw, err)
	}
	return resp.StatusCode, msg
}

func initialize(version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, version)
}

// TestInitializeNegotiation checks the handshake on the wire: a version the
// server knows is echoed, an unknown one answered with the newest version
// the handshake can speak.
func TestInitializeNegotiation(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		url := serveHTTP(t, mcpserver.HTTPOptions{Stateless: stateless})
		for propose, want := range map[string]string{
			"2024-11-05": "2024-11-05",
			"2025-03-26": "2025-03-26",
			"2025-11-25": "2025-11-25",
			"2099-01-01": "2025-11-25",
		} {
			status, msg := post(t, url, "", initialize(propose))
			result, _ := msg["result"].(map[string]any)
			if status != http.StatusOK || result["protocolVersion"] != want {
				t.Errorf("stateless=%v propose %s: %d %v, want %s", stateless, propose, status, msg, want)
			}
		}
	}
}

func TestDNSRebindingProtection(t *testing.T) {
	url := serveHTTP(t, mcpserver.HTTPOptions{})
	if status, _ := post(t, url, "evil.example:80", initialize("2025-11-25")); status != http.StatusForbidden {
		t.Errorf("foreign Host: status %d, want 403", status)
	}
	if status, _ := post(t, url, "localhost", initialize("2025-11-25")); status != http.StatusOK {
		t.Errorf("localhost Host: status %d, want 200", status)
	}
}

func TestBodyLimit(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		url := serveHTTP(t, mcpserver.HTTPOptions{Stateless: stateless, MaxBodyBytes: 1024})
		big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
		if status, _ := post(t, url, "", big); status != http.StatusRequestEntityTooLarge {
			t.Errorf("stateless=%v: status %d, want 413", stateless, status)
		}
		if status, _ := post(t, url, "", initialize("2025-11-25")); status != http.StatusOK {
			t.Errorf("stateless=%v: small body: status %d", stateless, status)
		}
	}
}

// TestListenAndServe serves on a kernel-picked loopback port, and shuts
// down promptly on cancel although a client still holds a session with an
// open event stream.
func TestListenAndServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	h := mcpserver.HTTPHandler(mcpserver.New(testCaller(), mcpserver.Options{}), mcpserver.HTTPOptions{})
	go func() { done <- mcpserver.ListenAndServe(ctx, "", h, func(a net.Addr) { addrs <- a }) }()

	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(addr.String()); host != "127.0.0.1" {
		t.Fatalf("bound %s, want loopback", addr)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr.String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/api.md"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}

	start := time.Now()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("shutdown took %s: the open event stream held it up", took)
	}
}

func TestListenAndServeBindError(t *testing.T) {
	err := mcpserver.ListenAndServe(context.Background(), "256.0.0.1:0", http.NotFoundHandler(), nil)
	if err == nil {
		t.Fatal("bound an invalid address")
	}
}
