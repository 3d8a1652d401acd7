package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client on the process's stdin and stdout, the way
// an agent runs `cue mcp`. Stdout carries only protocol messages: the
// server's logger must write elsewhere (stderr). It returns nil when the
// client closes stdin or ctx is cancelled, and the session's error
// otherwise.
func ServeStdio(ctx context.Context, server *mcp.Server) error {
	return ServeLines(ctx, server, os.Stdin, os.Stdout)
}

// MaxLineBytes bounds one message on stdio (the SDK's own bound): a call
// whose arguments are over MaxArgumentBytes but whose line is within it
// gets -32602 with its id, naming the limit.
const MaxLineBytes = 16 << 20

// MaxNesting bounds how deeply a message's arrays and objects nest.
const MaxNesting = 64

// ServeLines serves server on newline-delimited JSON-RPC 2.0 read from in
// and written to out, checking every line on its own before the SDK sees
// it: a line that is not JSON gets -32700 with id null; one that is not a
// JSON-RPC 2.0 request, notification or response, a batch, one longer
// than MaxLineBytes or nested deeper than MaxNesting get -32600; and the
// session goes on with the next line. (The SDK alone ends the session at
// the first bad line, and a truncated one swallows the lines after it.)
func ServeLines(ctx context.Context, server *mcp.Server, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(filterLines(in, pw, w)) }()
	return Serve(ctx, server, &mcp.IOTransport{Reader: pr, Writer: w})
}

// Serve serves one client session on t until the client disconnects or ctx
// is cancelled, with ServeStdio's results. Tests and embedders use it with
// mcp.IOTransport or mcp.InMemoryTransport.
func Serve(ctx context.Context, server *mcp.Server, t mcp.Transport) error {
	err := server.Run(ctx, t)
	switch {
	case err == nil, ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil
	}
	return err
}

// lineWriter writes whole messages to w, one at a time: the SDK's and the
// filter's answers never interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error { return nil }

// filterLines passes the valid lines of in to sdk and answers the others
// on out. It returns nil at the end of in.
func filterLines(in io.Reader, sdk io.Writer, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case tooLong:
			// Skipping the rest of a line already answered.
		case len(line)+len(chunk) > MaxLineBytes+1:
			tooLong = true
			line = line[:0]
			if werr := writeError(out, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: the message is longer than %d bytes", MaxLineBytes)); werr != nil {
				return werr
			}
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong && len(bytes.TrimSpace(line)) > 0 {
			msg := bytes.TrimSpace(line)
			if code, why, id := checkLine(msg); code != 0 {
				if werr := writeError(out, id, code, why); werr != nil {
					return werr
				}
			} else if _, werr := sdk.Write(append(msg, '\n')); werr != nil {
				return werr
			}
		}
		line, tooLong = line[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// checkLine returns 0 for a line that is one JSON-RPC 2.0 message, else
// the error code, its message and the id to answer with (nil: null).
func checkLine(msg []byte) (code int64, why string, id json.RawMessage) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		return jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a NUL byte at offset %d", i), nil
	}
	if depth := nesting(msg); depth > MaxNesting {
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: nested %d deep, at most %d", depth, MaxNesting), nil
	}
	if !json.Valid(msg) {
		return jsonrpc.CodeParseError, "Parse error: the line is not valid JSON (each message is one line of JSON)", nil
	}
	switch msg[0] {
	case '[':
		return jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not supported (MCP has no JSON-RPC batching since 2025-06-18): send one message per line", nil
	case '{':
	default:
		return jsonrpc.CodeInvalidRequest, "Invalid Request: a message must be a JSON object", nil
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error(), nil
	}
	validID := len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || (m.ID[0] >= '0' && m.ID[0] <= '9'))
	if validID {
		id = m.ID
	}
	switch {
	case len(m.ID) > 0 && !validID && string(m.ID) != "null":
		return jsonrpc.CodeInvalidRequest, "Invalid Request: id must be a string or a number", nil
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`, id
	case m.Method != nil && *m.Method == "":
		return jsonrpc.CodeInvalidRequest, "Invalid Request: method is empty", id
	case m.Method == nil && (!validID || (m.Result == nil) == (m.Error == nil)):
		return jsonrpc.CodeInvalidRequest, "Invalid Request: neither a request (method) nor a response (id with result or error)", id
	}
	return 0, "", nil
}

// nesting is how deeply msg's arrays and objects nest, outside strings.
func nesting(msg []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range msg {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// writeError answers one bad line.
func writeError(out io.Writer, id json.RawMessage, code int64, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, message}})
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
