package transcript

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// claudeCodeLines generates n lines of a Claude Code session in the shape
// 2.1 writes: prompts, assistant text, Read/Edit/Bash calls and their
// results, with the attachments and bookkeeping lines in between.
func claudeCodeLines(n int) ([]json.RawMessage, []int64) {
	const head = `"parentUuid":null,"isSidechain":false,"userType":"external","entrypoint":"cli","cwd":"/home/dev/src/app","sessionId":"bench-session","version":"2.1.330","gitBranch":"main"`
	const usage = `"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":48000,"output_tokens":210,"service_tier":"standard"}`
	lines := make([]json.RawMessage, 0, n)
	offsets := make([]int64, 0, n)
	var off int64
	for i := 0; len(lines) < n; i++ {
		id := fmt.Sprintf("toolu_%06d", i)
		file := fmt.Sprintf("/home/dev/src/app/internal/pkg%d/file%d.go", i%17, i%5)
		ts := fmt.Sprintf(`"timestamp":"2026-03-02T10:%02d:%02d.000Z"`, i/60%60, i%60)
		var tool, input, result string
		switch i % 3 {
		case 0:
			tool, input, result = "Read", `{"file_path":"`+file+`"}`, `"1\tpackage pkg\n2\t\n3\tfunc F() error {\n4\t\treturn nil\n5\t}\n"`
		case 1:
			tool, input, result = "Edit", `{"file_path":"`+file+`","old_string":"return nil","new_string":"return errors.New(\"x\")"}`, `"The file `+file+` has been updated."`
		default:
			tool, input, result = "Bash", `{"command":"go test ./internal/...","description":"Run tests"}`, `"ok  \tapp/internal/pkg\t0.4s"`
		}
		block := []string{
			`{"type":"attachment",` + head + `,"uuid":"a` + id + `",` + ts + `,"attachment":{"type":"todo_reminder","content":[]}}`,
			`{` + head + `,"type":"assistant","uuid":"t` + id + `",` + ts + `,"message":{"id":"msg_` + id + `","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"I'll change ` + file + ` because the error path was never tested; running the tests afterwards."}],"stop_reason":null,` + usage + `}}`,
			`{` + head + `,"type":"assistant","uuid":"c` + id + `",` + ts + `,"message":{"id":"msg_` + id + `","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"` + id + `","name":"` + tool + `","input":` + input + `}],"stop_reason":"tool_use",` + usage + `}}`,
			`{` + head + `,"type":"user","uuid":"r` + id + `",` + ts + `,"message":{"role":"user","content":[{"tool_use_id":"` + id + `","type":"tool_result","content":` + result + `}]},"toolUseResult":{"type":"text"}}`,
		}
		if i%10 == 0 {
			block = append([]string{`{` + head + `,"type":"user","uuid":"p` + id + `",` + ts + `,"message":{"role":"user","content":"Now handle the error in ` + file + ` instead of ignoring it."},"promptSource":"cli"}`}, block...)
		}
		for _, l := range block {
			if len(lines) == n {
				break
			}
			lines = append(lines, json.RawMessage(l))
			offsets = append(offsets, off)
			off += int64(len(l)) + 1
		}
	}
	return lines, offsets
}

func BenchmarkParse(b *testing.B) {
	lines, offsets := claudeCodeLines(10_000)
	var size int64
	for _, l := range lines {
		size += int64(len(l)) + 1
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(events.TranscriptClaudeCode, lines, offsets); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(lines)*b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkSignals(b *testing.B) {
	lines, offsets := claudeCodeLines(10_000)
	c, err := Parse(events.TranscriptClaudeCode, lines, offsets)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Signals(c)
	}
	b.ReportMetric(float64(len(c.Messages)*b.N)/b.Elapsed().Seconds(), "messages/s")
}
