package minilm

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the CPU (and the OS) run AVX2 and FMA, which the
// kernels of gemm_amd64.s need.
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasVNNI reports whether the CPU (and the OS, which must save the
// AVX-512 registers) run AVX-512 F, BW, VL and VNNI, which the kernels of
// gemm_u8_amd64.s need.
var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

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

// kernU8 computes a block of rows (4 or 8) × vpanel of gemmU8 (see
// kernU8Go): the sums of the quantized rows x[r×ldx…] (k4 groups of 4
// bytes each) with the panel w, corrected by corr and scaled by rs[r],
// plus the m outliers of each row (off and val, m a row), then scale and
// bias.
//
//go:noescape
func kernU8(k4 int, x *uint8, ldx int, w *int8, corr *int32, rs *float32, off *int32, val *float32, m int,
	scale *float32, bias *float32, y *float32, ldy int, rows int)

// absMaxAVX512 returns max |x[i]| for i < n, a multiple of 16.
//
//go:noescape
func absMaxAVX512(x *float32, n int) float32

// absIndexAVX512 returns the first i < n (a multiple of 16) with
// |x[i]| = v, or n.
//
//go:noescape
func absIndexAVX512(x *float32, n int, v float32) int

// quantAVX512 sets u[i] = round(x[i] × inv) + 128 for i < n, a multiple of
// 16 (rounded to nearest even, saturated to 255).
//
//go:noescape
func quantAVX512(u *uint8, x *float32, n int, inv float32)
