package builtin

import (
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
)

//go:embed model/model.json model/vocab.json model/group1-shard*of7 model/LICENSE model/NOTICE model/PROVENANCE.md
var modelFS embed.FS

// readTensors slices the concatenated weight shards into named float32
// tensors, in the order and shapes the TF.js manifest gives. Integer
// tensors (graph constants) are skipped.
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
		data, err := readShards(group.Paths)
		if err != nil {
			return nil, err
		}
		off := 0
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("tensor %s: unsupported dtype %s", w.Name, w.Dtype)
			}
			if off+4*n > len(data) {
				return nil, fmt.Errorf("tensor %s: shards too short", w.Name)
			}
			if w.Dtype == "float32" {
				v := make([]float32, n)
				for i := range v {
					v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
				out[w.Name] = tensor{shape: w.Shape, data: v}
			}
			off += 4 * n
		}
		if off != len(data) {
			return nil, fmt.Errorf("manifest covers %d of %d shard bytes", off, len(data))
		}
	}
	return out, nil
}

// readShards concatenates the shard files into one buffer, read in place
// rather than copied file by file: the weights are 28 MB.
func readShards(paths []string) ([]byte, error) {
	files := make([]fs.File, len(paths))
	size := int64(0)
	for i, p := range paths {
		f, err := modelFS.Open("model/" + p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return nil, err
		}
		files[i] = f
		size += info.Size()
	}
	data := make([]byte, size)
	off := 0
	for _, f := range files {
		n, err := io.ReadFull(f, data[off:])
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		off += n
	}
	if off != len(data) {
		return nil, fmt.Errorf("read %d of %d shard bytes", off, len(data))
	}
	return data, nil
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
