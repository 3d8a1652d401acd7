package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// stdioPeer talks raw newline-delimited JSON-RPC to a real `cue mcp`.
type stdioPeer struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan map[string]any
}

func startStdioPeer(t *testing.T, root string) *stdioPeer {
	t.Helper()
	cmd := exec.Command(bin("cue"), "mcp", "--workspace", root)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("cue mcp did not exit when its stdin closed")
		}
	})
	p := &stdioPeer{t: t, in: in, msgs: make(chan map[string]any, 64)}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					m = map[string]any{"unparseable": string(line)}
				}
				p.msgs <- m
			}
			if err != nil {
				close(p.msgs)
				return
			}
		}
	}()
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("cue mcp stopped reading: %v", err)
	}
}

// until reads messages until the one with id, returning the others.
func (p *stdioPeer) until(id float64) (reply map[string]any, before []map[string]any) {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("cue mcp closed stdout before answering %v; it had sent %v", id, before)
			}
			if m["id"] == id {
				return m, before
			}
			before = append(before, m)
		case <-timeout:
			p.t.Fatalf("no answer to %v within 30s; got %v", id, before)
		}
	}
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// Every malformed input an agent's client can send over stdio is answered
// as JSON-RPC 2.0 says, and the next valid call is served.
func TestStdioSurvivesMalformedInput(t *testing.T) {
	root := sampleWorkspace(t)
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", root).Run() })
	p := startStdioPeer(t, root)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m, _ := p.until(1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	readDoc := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_doc","arguments":{"path":"docs/api.md"}}}`, id)
	}
	served := func(m map[string]any) bool {
		b, _ := json.Marshal(m["result"])
		return strings.Contains(string(b), "1001 means file not found")
	}
	for id := 2; ; id++ {
		p.send(readDoc(id))
		if m, _ := p.until(float64(id)); served(m) {
			break
		}
		if id > 300 {
			t.Fatal("docs/api.md never served")
		}
		time.Sleep(200 * time.Millisecond)
	}

	deep := `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"read_doc","arguments":{"path":` +
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}}`
	huge := `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read_context","arguments":{"query":"` +
		strings.Repeat("q", 10<<20) + `"}}}`
	cases := []struct {
		name, line string
		wantID     any // nil: id null
		wantCode   float64
	}{
		{"not JSON", "this is not json", nil, -32700},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":11,"method":"tools/list"}`, float64(11), -32600},
		{"a NUL byte", "{\"jsonrpc\":\"2.0\",\"id\":12,\x00\"method\":\"tools/list\"}", nil, -32700},
		{"no method, no result", `{"jsonrpc":"2.0","id":13}`, float64(13), -32600},
		{"nested 1001 deep", deep, nil, -32600},
		{"a batch", `[{"jsonrpc":"2.0","id":15,"method":"tools/list"}]`, nil, -32600},
		{"a truncated line", `{"jsonrpc":"2.0","id":16,"method":"tools/li`, nil, -32700},
		{"a 10 MB query", huge, float64(17), -32602},
		{"not an object", `42`, nil, -32600},
	}
	next := 100
	for _, c := range cases {
		p.send(c.line)
		next++
		p.send(readDoc(next))
		reply, before := p.until(float64(next))
		if !served(reply) {
			t.Errorf("%s: the valid call after it was not served: %v", c.name, reply)
		}
		var answer map[string]any
		for _, m := range before {
			if m["id"] == c.wantID {
				answer = m
			}
		}
		if answer == nil && c.wantID != nil {
			// Calls are answered concurrently: it may come after.
			answer, _ = p.until(c.wantID.(float64))
		}
		if answer == nil {
			t.Errorf("%s: no answer with id %v; got %v", c.name, c.wantID, before)
			continue
		}
		if got := errorCode(answer); got != c.wantCode || answer["jsonrpc"] != "2.0" {
			t.Errorf("%s: answered %v; want code %v", c.name, answer, c.wantCode)
		}
		if b, _ := json.Marshal(answer); len(b) > 4096 {
			t.Errorf("%s: the answer is %d bytes: it echoes what it was sent", c.name, len(b))
		}
	}
}
