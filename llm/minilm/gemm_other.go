//go:build !amd64

package minilm

// hasSIMD is false: only amd64 has assembly kernels.
const hasSIMD = false

// hasVNNI is false: only amd64 has the 8-bit kernels.
const hasVNNI = false

func kernI8(k int, x *float32, ldx int, w *int8, scale *float32, bias *float32, y *float32, ldy int) {
	panic("unreachable")
}

func kernF32x8(k int, x *float32, ldx int, w *float32, y *float32, ldy int) {
	panic("unreachable")
}

func geluAVX(x *float32, n int) { panic("unreachable") }

func expAVX(x *float32, n int, sub, f float32) { panic("unreachable") }

func softmaxAVX(x *float32, n int, f float32) { panic("unreachable") }

func mulAVX(dst, a, b *float32, n int) { panic("unreachable") }

func kernU8(k4 int, x *uint8, ldx int, w *int8, corr *int32, rs *float32, off *int32, val *float32, m int,
	scale *float32, bias *float32, y *float32, ldy int, rows int) {
	panic("unreachable")
}

func absMaxAVX512(x *float32, n int) float32 { panic("unreachable") }

func absIndexAVX512(x *float32, n int, v float32) int { panic("unreachable") }

func quantAVX512(u *uint8, x *float32, n int, inv float32) { panic("unreachable") }
