package builtin

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

//go:embed model/model.json model/vocab.json model/LICENSE model/NOTICE model/PROVENANCE.md
var modelFS embed.FS

// The weight shards are embedded as strings rather than in modelFS so the
// tensors are decoded from the executable's pages in place, without a
// 28 MB copy of the shards on the heap, and so those pages can be handed
// back once decoded (releasePages).
var (
	//go:embed model/group1-shard1of7
	shard1 string
	//go:embed model/group1-shard2of7
	shard2 string
	//go:embed model/group1-shard3of7
	shard3 string
	//go:embed model/group1-shard4of7
	shard4 string
	//go:embed model/group1-shard5of7
	shard5 string
	//go:embed model/group1-shard6of7
	shard6 string
	//go:embed model/group1-shard7of7
	shard7 string
)

var shards = map[string]string{
	"group1-shard1of7": shard1, "group1-shard2of7": shard2, "group1-shard3of7": shard3,
	"group1-shard4of7": shard4, "group1-shard5of7": shard5, "group1-shard6of7": shard6,
	"group1-shard7of7": shard7,
}

// readTensors decodes the weight shards into named float32 tensors, in
// the order and shapes the TF.js manifest gives, releasing each shard's
// pages as soon as it is decoded: released only once all were, the 27 MB
// of shards stayed resident beside the tensors while the model loaded,
// just after a repository is indexed, when the daemon holds the most.
// Integer tensors (graph constants) are skipped.
func readTensors() (map[string]tensor, error) {
	manifestJSON, err := modelFS.ReadFile("model/model.json")
	if err != nil {
		return nil, err
	}
	var m struct {
		WeightsManifest []struct {
			Paths   []string `json:"paths"`
			Weights []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
				Dtype string `json:"dtype"`
			} `json:"weights"`
		} `json:"weightsManifest"`
	}
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	out := make(map[string]tensor)
	for _, group := range m.WeightsManifest {
		parts := make([]string, len(group.Paths))
		for i, p := range group.Paths {
			s, ok := shards[p]
			if !ok {
				return nil, fmt.Errorf("manifest names shard %s, which is not embedded", p)
			}
			if len(s)%4 != 0 {
				return nil, fmt.Errorf("shard %s: %d bytes, not whole 32-bit values", p, len(s))
			}
			parts[i] = s
		}
		data := shardReader{parts: parts, done: releasePages}
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("tensor %s: unsupported dtype %s", w.Name, w.Dtype)
			}
			var v []float32
			if w.Dtype == "float32" {
				v = make([]float32, n)
			}
			if !data.read(n, v) {
				return nil, fmt.Errorf("tensor %s: shards too short", w.Name)
			}
			if v != nil {
				out[w.Name] = tensor{shape: w.Shape, data: v}
			}
		}
		if rest := data.remaining(); rest != 0 {
			return nil, fmt.Errorf("manifest leaves %d shard bytes unread", rest)
		}
	}
	return out, nil
}

// shardReader reads little-endian 32-bit values from shards that are, end
// to end, one buffer. Every shard holds whole values, so none straddles two.
type shardReader struct {
	parts []string
	part  int // the shard being read
	off   int // the byte offset in it
	// done, if set, is called with each shard once its last value is read.
	done func(shard string)
}

// read consumes n values, decoding them into into when it is not nil; it
// reports false if fewer than n remain.
func (r *shardReader) read(n int, into []float32) bool {
	if r.remaining() < 4*n {
		return false
	}
	for done := 0; done < n; {
		for r.off == len(r.parts[r.part]) {
			r.part, r.off = r.part+1, 0
		}
		s := r.parts[r.part]
		take := min(n-done, (len(s)-r.off)/4)
		if into != nil {
			for i := range take {
				o := r.off + 4*i
				into[done+i] = math.Float32frombits(uint32(s[o]) | uint32(s[o+1])<<8 | uint32(s[o+2])<<16 | uint32(s[o+3])<<24)
			}
		}
		done += take
		r.off += 4 * take
		if r.off == len(s) && r.done != nil {
			r.done(s)
		}
	}
	return true
}

func (r *shardReader) remaining() int {
	n := 0
	for i := r.part; i < len(r.parts); i++ {
		n += len(r.parts[i])
	}
	return n - r.off
}

type tensor struct {
	shape []int
	data  []float32
}

// tensorSet looks tensors up by the distinctive tail of their names.
type tensorSet struct {
	all map[string]tensor
	err error
}

// get returns the one tensor whose name ends in suffix and has shape.
func (s *tensorSet) get(suffix string, shape ...int) []float32 {
	if s.err != nil {
		return nil
	}
	var found []string
	var t tensor
	for name, v := range s.all {
		if strings.HasSuffix(name, suffix) {
			found = append(found, name)
			t = v
		}
	}
	if len(found) != 1 {
		s.err = fmt.Errorf("tensor *%s: %d matches", suffix, len(found))
		return nil
	}
	if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
		s.err = fmt.Errorf("tensor *%s: shape %v, want %v", suffix, t.shape, shape)
		return nil
	}
	return t.data
}
