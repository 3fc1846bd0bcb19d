package minilm

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the CPU (and the OS) run AVX2 and FMA, which the
// kernels of gemm_amd64.s need.
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernI8 computes a 4×panel block of gemmI8: y[r][j] = bias[j] + scale[j]
// × Σ_{i<k} x[r×ldx+i] × w[i×panel+j], for r < 4 and j < panel.
//
//go:noescape
func kernI8(k int, x *float32, ldx int, w *int8, scale *float32, bias *float32, y *float32, ldy int)

// kernF32x8 computes a 4×8 block of gemmF32x8: y[r×ldy+j] = Σ_{i<k}
// x[r×ldx+i] × w[i×8+j], for r < 4 and j < 8.
//
//go:noescape
func kernF32x8(k int, x *float32, ldx int, w *float32, y *float32, ldy int)

// geluAVX sets x[i] to gelu(x[i]) for i < n, a multiple of 8.
//
//go:noescape
func geluAVX(x *float32, n int)

// expAVX sets x[i] to expf((x[i] - sub) × f) for i < n, a multiple of 8.
//
//go:noescape
func expAVX(x *float32, n int, sub, f float32)

// softmaxAVX sets x[:n] to softmax(x[:n] × f), n a multiple of 8 (≥ 8).
//
//go:noescape
func softmaxAVX(x *float32, n int, f float32)

// mulAVX sets dst[i] = a[i] × b[i] for i < n, a multiple of 8.
//
//go:noescape
func mulAVX(dst, a, b *float32, n int)
