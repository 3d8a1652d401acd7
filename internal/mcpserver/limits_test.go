package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// A batch is refused with -32600 on HTTP as on stdio, whatever its size.
func TestHTTPRefusesBatches(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		url := serveHTTP(t, mcpserver.HTTPOptions{Stateless: stateless})
		batch := "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"tools/list"},`, 1000), ",") + "]"
		resp, err := http.Post(url, "application/json", strings.NewReader(batch))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msg struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &msg) != nil || msg.Error.Code != -32600 || msg.ID != nil || len(body) > 512 {
			t.Errorf("stateless=%v: a batch of 1000: %d %s", stateless, resp.StatusCode, body)
		}
	}
}

// A body sent too slowly is cut off, and the connection freed.
func TestHTTPCutsOffASlowBody(t *testing.T) {
	url := serveHTTP(t, mcpserver.HTTPOptions{BodyReadTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":", strings.TrimPrefix(url, "http://"))
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a stalled body: %d, want 400", resp.StatusCode)
	}
	t.Logf("a stalled body cut off after %s", time.Since(start).Round(time.Millisecond))
}

// A stateful session idle longer than SessionTimeout is closed: requests
// naming it get 404, and the client must initialize again.
func TestHTTPSessionsExpire(t *testing.T) {
	url := serveHTTP(t, mcpserver.HTTPOptions{SessionTimeout: 100 * time.Millisecond})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize("2025-06-18")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session still answers %d after 10s", resp.StatusCode)
		}
		// Each request would keep it alive: wait past the timeout.
		time.Sleep(300 * time.Millisecond)
	}
}

// An error quotes at most a short prefix of what it was sent.
func TestErrorsDoNotEchoLongValues(t *testing.T) {
	long := strings.Repeat("z", 900<<10)
	caller := tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &tools.Error{Code: tools.CodeInvalidParams, Message: "query is too long: " + long,
			Data: map[string]any{"value": long, "nested": map[string]any{"values": []any{long}}}}
	})
	srv := httptest.NewServer(mcpserver.HTTPHandler(mcpserver.New(caller, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "q"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != tools.CodeInvalidParams {
		t.Fatalf("the call: %v", err)
	}
	if n := len(wire.Message) + len(wire.Data); n > 4096 || !strings.Contains(wire.Message, "bytes in all") {
		t.Errorf("the error is %d bytes: %.200s", n, wire.Message)
	}
}

// A POST beyond MaxInFlight gets 503 with Retry-After at once; when the
// request holding the slot ends, the next is served.
func TestHTTPBoundsRequestsInFlight(t *testing.T) {
	url := serveHTTP(t, mcpserver.HTTPOptions{Stateless: true, JSONResponse: true, MaxInFlight: 1, BodyReadTimeout: time.Minute})
	host := strings.TrimPrefix(url, "http://")
	// A request whose body never completes holds the only slot.
	var held net.Conn
	sendHeld := func() {
		t.Helper()
		var err error
		if held, err = net.Dial("tcp", host); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(held, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":", host)
	}
	sendHeld()
	// Closed before the server is (cleanups run last first): a test that
	// fails while it holds the slot must not leave the server's Close
	// waiting on it.
	t.Cleanup(func() { held.Close() })
	// heldRefused reports whether the server answered the held request:
	// it arrived while a call below held the slot and was refused.
	heldRefused := func() bool {
		_ = held.SetReadDeadline(time.Now().Add(time.Millisecond))
		n, _ := held.Read(make([]byte, 1))
		return n > 0
	}
	list := func() (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(body)
	}
	// The held request takes its slot once the server has read its
	// headers: until then a call may still pass, and while one is served
	// the held request is refused itself and sent again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, retry, body := list()
		if code == http.StatusServiceUnavailable {
			if retry != "1" || !strings.Contains(body, "1 requests are being served") {
				t.Errorf("refused with Retry-After %q and %q", retry, body)
			}
			break
		}
		if code != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("while a request holds the only slot: %d %.300s (30 s after it was sent, if 200)", code, body)
		}
		if heldRefused() {
			held.Close()
			sendHeld()
		}
	}
	// A request refused while its body is still coming is answered at
	// once, not after the server has waited for the body it will not
	// use (the held request above was such a refusal when it came while
	// a call was served).
	second, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	fmt.Fprintf(second, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{", host)
	_ = second.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil {
		t.Fatalf("a request refused with its body unfinished was not answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
		t.Errorf("a request refused with its body unfinished: %d, connection close %v; want 503 and the connection closed", resp.StatusCode, resp.Close)
	}
	held.Close()
	for {
		code, _, body := list()
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the held request ended: %d %s", code, body)
		}
	}
}

// Sessions beyond MaxSessions are refused with 503 and Retry-After, the
// open ones keep working, and ending one makes room for a new one.
func TestHTTPBoundsOpenSessions(t *testing.T) {
	url := serveHTTP(t, mcpserver.HTTPOptions{MaxSessions: 2})
	post := func(body, session string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("503 without Retry-After: 1")
		}
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	var sessions []string
	for range 2 {
		code, id, body := post(initialize("2025-06-18"), "")
		if code != http.StatusOK || id == "" {
			t.Fatalf("opening a session within the bound: %d %q %s", code, id, body)
		}
		sessions = append(sessions, id)
	}
	code, _, body := post(initialize("2025-06-18"), "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "2 sessions are open") || !strings.Contains(body, "DELETE") {
		t.Fatalf("a third session: %d %s; want 503 naming the bound and the remedy", code, body)
	}
	if code, _, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sessions[0]); code != http.StatusOK {
		t.Fatalf("an open session while the bound is reached: %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sessions[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, id, body := post(initialize("2025-06-18"), "")
		if code == http.StatusOK && id != "" {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after ending a session: %d %s", code, body)
		}
	}
}
