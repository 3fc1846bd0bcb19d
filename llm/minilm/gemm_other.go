//go:build !amd64

package minilm

// hasSIMD is false: only amd64 has assembly kernels.
const hasSIMD = false

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
