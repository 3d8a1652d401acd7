package transcripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// chunk is the whole lines of a transcript from start to end.
type chunk struct {
	start, end int64
	lines      []json.RawMessage
	offsets    []int64
	size       int
	// bad counts lines that are not JSON; tooLong lines over the byte
	// limit. Neither is sent, both are passed.
	bad, tooLong int
	// full is set when a limit ended the chunk, so that more whole lines
	// may follow.
	full bool
}

// readChunk reads whole lines of r from start, not past limit: up to
// maxLines lines and maxBytes bytes of lines, or, when exact, everything up
// to limit (a batch being published again must be the same batch). A last
// line without its newline is left for later. Each line over maxBytes is
// skipped and counted, never sent.
func readChunk(r io.ReaderAt, start, limit int64, maxLines, maxBytes int, exact bool) (chunk, error) {
	c := chunk{start: start, end: start}
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, limit-start), 64<<10)
	var line []byte
	for {
		if !exact && len(c.lines) >= maxLines {
			c.full = true
			return c, nil
		}
		lineStart := c.end
		line = line[:0]
		over := false
		complete := false
		n := int64(0)
		for {
			frag, err := br.ReadSlice('\n')
			n += int64(len(frag))
			if !over {
				if len(line)+len(frag) > maxBytes+2 { // + "\r\n"
					over, line = true, line[:0]
				} else {
					line = append(line, frag...)
				}
			}
			if err == nil {
				complete = true
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return c, err
		}
		if !complete {
			// A partial last line, or nothing: wait for its newline.
			return c, nil
		}
		if over {
			c.tooLong++
			c.end = lineStart + n
			continue
		}
		body := bytes.TrimRight(line, "\r\n")
		if len(body) > maxBytes {
			c.tooLong++
			c.end = lineStart + n
			continue
		}
		if len(bytes.TrimSpace(body)) == 0 {
			c.end = lineStart + n
			continue
		}
		if !json.Valid(body) {
			c.bad++
			c.end = lineStart + n
			continue
		}
		if !exact && len(c.lines) > 0 && c.size+len(body) > maxBytes {
			// The line opens the next batch.
			c.full = true
			return c, nil
		}
		c.lines = append(c.lines, json.RawMessage(bytes.Clone(body)))
		c.offsets = append(c.offsets, lineStart)
		c.size += len(body)
		c.end = lineStart + n
	}
}

// header is what the first lines of a transcript say about where it runs.
type header struct {
	cwd, session, agent string
}

// headerLine is the fields a header is read from, in either format.
// Fields of another type leave the line out rather than fail the read.
type headerLine struct {
	Cwd         string `json:"cwd"`
	SessionID   string `json:"sessionId"`
	Session     string `json:"session"`
	AgentID     string `json:"agentId"`
	IsSidechain bool   `json:"isSidechain"`
}

// maxHeaderScan bounds how far into a transcript its cwd is looked for.
const maxHeaderScan = 8 << 20

// readHeader finds the first line of r (up to limit) with a cwd, and the
// session and agent ids beside it. ok is false when no complete line has
// a cwd yet.
func readHeader(r io.ReaderAt, limit int64) (h header, ok bool, err error) {
	limit = min(limit, maxHeaderScan)
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, limit), 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return h, false, nil
			}
			return h, false, err
		}
		var l headerLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		if h.session == "" {
			h.session = l.SessionID
			if h.session == "" {
				h.session = l.Session
			}
		}
		if l.IsSidechain && h.agent == "" {
			h.agent = l.AgentID
		}
		if l.Cwd != "" {
			h.cwd = l.Cwd
			return h, true, nil
		}
	}
}
