// Package vecenc is the byte format of stored vectors, shared by the
// SQLite and PostgreSQL stores: each dimension quantised to 8 bits
// against the vector's largest magnitude, and written sparse (index and
// value of each dimension that is not zero) when that is shorter.
//
// A 512-dimension vector takes 519 bytes dense instead of the 2,048 of
// float32, and a lexical one (package llm/lexical: a few dozen words
// hashed into 512 dimensions) a few hundred sparse. Each dimension comes
// back within half a step (max|v|/254) of what was encoded, so a cosine
// between unit vectors moves by about 1/254 of its size at most; search
// over them ranks as over the float32s (docs/benchmarks.md).
//
// Layout, little-endian:
//
//	dense:  'q' dims:uint16 scale:float32 value:int8 × dims
//	sparse: 's' dims:uint16 scale:float32 n:uint16 (index:uint16 value:int8) × n
//
// then one zero byte when the length would be a multiple of four: older
// databases hold vectors as plain float32s (4 bytes per dimension), whose
// length always is, and Decode reads those too.
package vecenc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/agentmem/agentmem"
)

const (
	dense  = 'q'
	sparse = 's'
	header = 7 // kind, dims, scale
)

// Encode returns v quantised. v has at most 65,535 dimensions, each
// finite.
func Encode(v []float32) []byte {
	q := make([]int8, len(v))
	scale := Quantise(q, v)
	nonzero := 0
	for _, x := range q {
		if x != 0 {
			nonzero++
		}
	}
	var b []byte
	if 3*nonzero+2 < len(v) {
		b = make([]byte, header+2, header+2+3*nonzero+1)
		b[0] = sparse
		binary.LittleEndian.PutUint16(b[header:], uint16(nonzero))
		for i, x := range q {
			if x != 0 {
				b = binary.LittleEndian.AppendUint16(b, uint16(i))
				b = append(b, byte(x))
			}
		}
	} else {
		b = make([]byte, header, header+len(v)+1)
		b[0] = dense
		for _, x := range q {
			b = append(b, byte(x))
		}
	}
	binary.LittleEndian.PutUint16(b[1:], uint16(len(v)))
	binary.LittleEndian.PutUint32(b[3:], math.Float32bits(scale))
	if len(b)%4 == 0 {
		b = append(b, 0)
	}
	return b
}

// Quantise writes v, of len(q) dimensions, into q as 8-bit values and
// returns their scale: v ≈ q × scale, the largest magnitude 127. A vector
// quantised before comes out as it was.
func Quantise(q []int8, v []float32) float32 {
	var peak float32
	for _, x := range v {
		peak = max(peak, x, -x)
	}
	scale := float32(float64(peak) / 127)
	if scale == 0 {
		clear(q)
		return 0
	}
	inv := float32(127 / float64(peak))
	q = q[:len(v)]
	for i, x := range v {
		if y := x * inv; y >= 0 {
			q[i] = int8(min(y+0.5, 127))
		} else {
			q[i] = int8(max(y-0.5, -127))
		}
	}
	return scale
}

// Dims returns the dimensions of the vector b encodes.
func Dims(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty vector")
	}
	if len(b)%4 == 0 {
		return len(b) / 4, nil // float32s
	}
	if len(b) < header || (b[0] != dense && b[0] != sparse) {
		return 0, fmt.Errorf("vector of %d bytes: not an encoded vector", len(b))
	}
	return int(binary.LittleEndian.Uint16(b[1:])), nil
}

// Decode fills v, of Dims(b) dimensions, with the vector b encodes.
func Decode(v []float32, b []byte) error {
	d, err := Dims(b)
	if err != nil {
		return err
	}
	if len(v) != d {
		return fmt.Errorf("vector of %d dimensions decoded into %d", d, len(v))
	}
	if len(b)%4 == 0 {
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return nil
	}
	scale := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[3:])))
	clear(v)
	return values(b, d, func(i int, x int8) {
		v[i] = float32(max(-math.MaxFloat32, min(math.MaxFloat32, float64(x)*scale)))
	})
}

// Read fills q, of Dims(b) dimensions, with the 8-bit values of the
// vector b encodes and returns their scale (the vector is q × scale), as
// Quantise would: what a search scans, without a float32 in between. A
// vector of float32s is quantised.
func Read(q []int8, b []byte) (scale float32, err error) {
	d, err := Dims(b)
	if err != nil {
		return 0, err
	}
	if len(q) != d {
		return 0, fmt.Errorf("vector of %d dimensions read into %d", d, len(q))
	}
	if len(b)%4 == 0 {
		v := make([]float32, d)
		if err := Decode(v, b); err != nil {
			return 0, err
		}
		return Quantise(q, v), nil
	}
	scale = math.Float32frombits(binary.LittleEndian.Uint32(b[3:]))
	if body := b[header:]; b[0] == dense && len(body) >= d && len(body) <= d+1 {
		// Most of a cold cache load: a plain loop, not values' callback.
		for i, x := range body[:d] {
			q[i] = int8(x)
		}
		return scale, nil
	}
	clear(q)
	if err := values(b, d, func(i int, x int8) { q[i] = x }); err != nil {
		return 0, err
	}
	return scale, nil
}

// values checks the quantised vector b of d dimensions and calls set with
// each of its 8-bit values: every dimension of a dense vector, those not
// zero of a sparse one (the caller zeroes the others).
func values(b []byte, d int, set func(i int, x int8)) error {
	body := b[header:]
	if b[0] == dense {
		if len(body) < d || len(body) > d+1 {
			return fmt.Errorf("dense vector of %d dimensions in %d bytes", d, len(b))
		}
		for i := range d {
			set(i, int8(body[i]))
		}
		return nil
	}
	if len(body) < 2 {
		return fmt.Errorf("sparse vector of %d bytes", len(b))
	}
	n := int(binary.LittleEndian.Uint16(body))
	body = body[2:]
	if len(body) < 3*n || len(body) > 3*n+1 {
		return fmt.Errorf("sparse vector of %d values in %d bytes", n, len(b))
	}
	for j := range n {
		i := int(binary.LittleEndian.Uint16(body[3*j:]))
		if i >= d {
			return fmt.Errorf("sparse vector of %d dimensions has dimension %d", d, i)
		}
		set(i, int8(body[3*j+2]))
	}
	return nil
}

// List collects the vectors of one space as a store reads them (scope, ID
// and bytes), decoded, as FindVectors returns them. They are decoded into
// shared slabs of up to 512 vectors, each as large as the vectors decoded
// so far, so that 100,000 vectors cost a few hundred allocations rather
// than 100,000 and a few vectors do not cost a large slab; a run of
// vectors of one scope shares one copy of its name.
type List struct {
	Space   string
	Vectors []agentmem.Vector
	free    []float32
}

// Add decodes the vector b of scope and id into l.
func (l *List) Add(scope, id string, b []byte) error {
	d, err := Dims(b)
	if err != nil {
		return fmt.Errorf("vector %s/%s: %w", scope, id, err)
	}
	if len(l.free) < d {
		l.free = make([]float32, d*min(max(len(l.Vectors), 16), 512))
	}
	v := l.free[:d:d]
	l.free = l.free[d:]
	if err := Decode(v, b); err != nil {
		return fmt.Errorf("vector %s/%s: %w", scope, id, err)
	}
	if n := len(l.Vectors); n > 0 && l.Vectors[n-1].Scope == scope {
		scope = l.Vectors[n-1].Scope
	}
	l.Vectors = append(l.Vectors, agentmem.Vector{Scope: scope, ID: id, Space: l.Space, Vec: v})
	return nil
}
