package minilm

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"unsafe"
)

// The model's data, written by generate/generate.py (see its README for
// the source and the format). As strings, they stay in the binary's
// read-only data: a program that never embeds a text pages none of it in.
var (
	//go:embed data/minilm.bin
	weightsFile string
	//go:embed data/vocab.txt
	vocabFile string
)

// fileConfig is the header's config: the model's hyperparameters.
type fileConfig struct {
	VocabSize        int     `json:"vocab_size"`
	HiddenSize       int     `json:"hidden_size"`
	Layers           int     `json:"num_hidden_layers"`
	Heads            int     `json:"num_attention_heads"`
	IntermediateSize int     `json:"intermediate_size"`
	MaxPositions     int     `json:"max_position_embeddings"`
	LayerNormEps     float64 `json:"layer_norm_eps"`
	MaxSeqLength     int     `json:"max_seq_length"`
	Source           string  `json:"source"`
	SourceSHA256     string  `json:"source_sha256"`
}

// tensor is one tensor of the file, its data still in the file's bytes.
type tensor struct {
	Name           string `json:"name"`
	DType          string `json:"dtype"`  // f32 or i8
	Layout         string `json:"layout"` // i8: "" row-major, "panels24" in panels of 24 rows
	Shape          []int  `json:"shape"`
	Offset         int    `json:"offset"`
	RowScaleOffset *int   `json:"row_scale_offset"` // i8: float32 × rows
	ColScaleOffset *int   `json:"col_scale_offset"` // i8, optional: float32 × columns

	f32      []float32 // f32: the values
	q        []int8    // i8: the quantized values, in Layout
	rowScale []float32
	colScale []float32 // nil when the columns have no scale
}

func (t *tensor) size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// weightsMagic starts a weights file; its last byte is the format's version.
const weightsMagic = "MINILMQ1"

// readWeights parses a weights file: the magic, a little-endian uint32
// header length, the JSON header, then the data, to which the header's
// offsets are relative. The tensors' values are views of data, which must
// stay unchanged. It checks every offset and size against data.
func readWeights(data string) (fileConfig, map[string]*tensor, error) {
	var cfg fileConfig
	if len(data) < len(weightsMagic)+4 || data[:len(weightsMagic)] != weightsMagic {
		return cfg, nil, fmt.Errorf("not a weights file")
	}
	n := int(binary.LittleEndian.Uint32([]byte(data[8:12])))
	if 12+n > len(data) {
		return cfg, nil, fmt.Errorf("header of %d bytes beyond the end", n)
	}
	var h struct {
		Config  fileConfig `json:"config"`
		Tensors []*tensor  `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(data[12:12+n]), &h); err != nil {
		return cfg, nil, fmt.Errorf("header: %w", err)
	}
	body := data[12+n:]
	ts := make(map[string]*tensor, len(h.Tensors))
	for _, t := range h.Tensors {
		var err error
		switch t.DType {
		case "f32":
			t.f32, err = floats(body, t.Offset, t.size())
		case "i8":
			if len(t.Shape) != 2 || t.RowScaleOffset == nil {
				return cfg, nil, fmt.Errorf("%s: an i8 tensor needs 2 dimensions and row scales", t.Name)
			}
			if t.Offset < 0 || t.Offset+t.size() > len(body) {
				return cfg, nil, fmt.Errorf("%s: data beyond the end", t.Name)
			}
			t.q = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.StringData(body[t.Offset:]))), t.size())
			t.rowScale, err = floats(body, *t.RowScaleOffset, t.Shape[0])
			if err == nil && t.ColScaleOffset != nil {
				t.colScale, err = floats(body, *t.ColScaleOffset, t.Shape[1])
			}
		default:
			err = fmt.Errorf("unknown dtype %q", t.DType)
		}
		if err != nil {
			return cfg, nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		ts[t.Name] = t
	}
	return h.Config, ts, nil
}

// floats returns n little-endian float32 at off of s, copied: s need not
// be aligned for float32.
func floats(s string, off, n int) ([]float32, error) {
	if off < 0 || n < 0 || off+4*n > len(s) {
		return nil, fmt.Errorf("%d floats at %d beyond the end", n, off)
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32([]byte(s[off+4*i : off+4*i+4])))
	}
	return f, nil
}
