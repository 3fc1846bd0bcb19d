package vecenc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(d int, density float64) []float32 {
		v := make([]float32, d)
		for i := range v {
			if rng.Float64() < density {
				v[i] = float32(rng.NormFloat64())
			}
		}
		return v
	}
	for _, tc := range []struct {
		name  string
		v     []float32
		kind  byte
		bytes int // at most
	}{
		{"dense 512", random(512, 1), dense, 520},
		{"sparse 512", random(512, 0.05), sparse, 200},
		{"dense 1", []float32{-3}, dense, 9},
		{"zero", make([]float32, 8), sparse, 12},
		{"extremes", []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1.0 / 3, float32(math.Pi), 1e-40}, dense, 16},
		{"dense 4", []float32{1, 2, 3, 4}, dense, 12},    // 11 bytes + none
		{"dense 5", []float32{1, 2, 3, 4, 5}, dense, 13}, // 12 bytes + a pad
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Encode(tc.v)
			if b[0] != tc.kind {
				t.Errorf("kind %q, want %q", b[0], tc.kind)
			}
			if len(b)%4 == 0 || len(b) > tc.bytes {
				t.Errorf("%d bytes, want at most %d and not a multiple of 4", len(b), tc.bytes)
			}
			d, err := Dims(b)
			if err != nil || d != len(tc.v) {
				t.Fatalf("Dims = %d, %v; want %d", d, err, len(tc.v))
			}
			got := make([]float32, d)
			if err := Decode(got, b); err != nil {
				t.Fatal(err)
			}
			// Read gives the 8-bit values Quantise gives, and its scale.
			q, want := make([]int8, d), make([]int8, d)
			scale, err := Read(q, b)
			if wantScale := Quantise(want, tc.v); err != nil || scale != wantScale || !slices.Equal(q, want) {
				t.Fatalf("Read = %v × %g, %v; want %v × %g", q, scale, err, want, wantScale)
			}
			var peak float64
			for _, x := range tc.v {
				peak = max(peak, math.Abs(float64(x)))
			}
			for i := range got {
				if diff := math.Abs(float64(got[i]) - float64(tc.v[i])); diff > peak/254*1.0001 || math.IsInf(float64(got[i]), 0) {
					t.Fatalf("dimension %d: got %g, want %g within %g", i, got[i], tc.v[i], peak/254)
				}
			}
		})
	}
}

// Vectors stored before quantisation are float32s and still read.
func TestDecode_Float32(t *testing.T) {
	want := []float32{1.5, -2, float32(math.Pi), 0}
	b := make([]byte, 16)
	for i, x := range want {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	d, err := Dims(b)
	if err != nil || d != 4 {
		t.Fatalf("Dims = %d, %v; want 4", d, err)
	}
	got := make([]float32, 4)
	if err := Decode(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v exactly", got, want)
		}
	}
	q, wantQ := make([]int8, 4), make([]int8, 4)
	if scale, err := Read(q, b); err != nil || scale != Quantise(wantQ, want) || !slices.Equal(q, wantQ) {
		t.Fatalf("Read = %v × %g, %v; want %v", q, scale, err, wantQ)
	}
}

func TestDecode_Corrupt(t *testing.T) {
	good := Encode([]float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	if good[0] != sparse {
		t.Fatalf("kind %q, want sparse", good[0])
	}
	outOfRange := append([]byte(nil), good...)
	binary.LittleEndian.PutUint16(outOfRange[1:], 5) // dims 5, index 9
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short":        {'q', 1},
		"unknown kind": {'x', 1, 0, 0, 0, 0, 0},
		"truncated":    Encode([]float32{1, 2, 3, 4, 5, 6, 7})[:9],
		"index out":    outOfRange,
	} {
		d, err := Dims(b)
		if err == nil {
			err = Decode(make([]float32, d), b)
		}
		if err == nil {
			t.Errorf("%s: decoded %v, want an error", name, b)
		}
	}
	if err := Decode(make([]float32, 3), good); err == nil {
		t.Error("decoded 10 dimensions into 3")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode([]float32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	f.Add(Encode([]float32{1, 2, 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Dims(b)
		if err != nil || d > 1<<16 {
			return
		}
		_ = Decode(make([]float32, d), b) // no panic
	})
}

// TestList: vectors decoded into a list hold their own values, none
// sharing memory with another, with their scope, ID and the list's space;
// bad bytes are an error naming the vector.
func TestList(t *testing.T) {
	l := List{Space: "test/3"}
	for i := range 1000 {
		if err := l.Add([]string{"memories", "messages"}[i/500], fmt.Sprint(i), Encode([]float32{float32(i), 1, 2})); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range l.Vectors {
		v.Vec[2] = -1 // must not reach the next vector
		if v.Space != "test/3" || v.ID != fmt.Sprint(i) || v.Scope != []string{"memories", "messages"}[i/500] ||
			len(v.Vec) != 3 || cap(v.Vec) != 3 || math.Abs(float64(v.Vec[0])-float64(i)) > float64(max(i, 2))/254 {
			t.Fatalf("vector %d = %+v (cap %d)", i, v, cap(v.Vec))
		}
	}
	for i, v := range l.Vectors {
		if v.Vec[1] == -1 {
			t.Fatalf("vector %d = %v: written through another", i, v.Vec)
		}
	}
	if err := l.Add("memories", "bad", []byte{'x'}); err == nil || !strings.Contains(err.Error(), "memories/bad") {
		t.Fatalf("garbage: %v, want an error naming memories/bad", err)
	}
}

// BenchmarkDecode: decoding a quantised vector allocates nothing.
func BenchmarkDecode(b *testing.B) {
	v := make([]float32, 512)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	enc := Encode(v)
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(v, enc); err != nil {
			b.Fatal(err)
		}
	}
}
