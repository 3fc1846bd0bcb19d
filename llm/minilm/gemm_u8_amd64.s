#include "textflag.h"

// The kernels of gemm_u8.go, for AVX-512 (F, BW, VL) and VNNI. Strides are
// in bytes for the quantized rows, in floats for y.

// func kernU8(k4 int, x *uint8, ldx int, w *int8, corr *int32, rs *float32, off *int32, val *float32, m int, scale *float32, bias *float32, y *float32, ldy int)
//
// A 4×48 block: twelve int32 accumulators (4 rows × 3 vectors of 16), three
// registers for a group of the panel (48 columns × 4 int8) and four for
// the rows' broadcast groups of 4 uint8. Then, row after row (its
// accumulators moved down into Z0-Z2): the offset's correction, the row's
// scale, the m outliers' products (each outlier's weights, one byte of each
// 32-bit lane of its group, sign-extended in place), and scale and bias.
TEXT ·kernU8(SB), NOSPLIT, $0-104
	MOVQ k4+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), R8
	MOVQ w+24(FP), DI
	MOVQ DI, BX
	LEAQ (SI)(R8*1), R11
	LEAQ (SI)(R8*2), R12
	LEAQ (R11)(R8*2), R13
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
u8loop:
	VMOVDQU32 (DI), Z12
	VMOVDQU32 64(DI), Z13
	VMOVDQU32 128(DI), Z14
	VPBROADCASTD (SI), Z15
	VPBROADCASTD (R11), Z16
	VPBROADCASTD (R12), Z17
	VPBROADCASTD (R13), Z18
	VPDPBUSD Z12, Z15, Z0
	VPDPBUSD Z13, Z15, Z1
	VPDPBUSD Z14, Z15, Z2
	VPDPBUSD Z12, Z16, Z3
	VPDPBUSD Z13, Z16, Z4
	VPDPBUSD Z14, Z16, Z5
	VPDPBUSD Z12, Z17, Z6
	VPDPBUSD Z13, Z17, Z7
	VPDPBUSD Z14, Z17, Z8
	VPDPBUSD Z12, Z18, Z9
	VPDPBUSD Z13, Z18, Z10
	VPDPBUSD Z14, Z18, Z11
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	ADDQ $192, DI
	DECQ CX
	JNZ u8loop

	MOVQ corr+32(FP), AX
	VMOVDQU32 (AX), Z21
	VMOVDQU32 64(AX), Z22
	VMOVDQU32 128(AX), Z23
	MOVQ scale+72(FP), AX
	VMOVUPS (AX), Z24
	VMOVUPS 64(AX), Z25
	VMOVUPS 128(AX), Z26
	MOVQ bias+80(FP), AX
	VMOVUPS (AX), Z27
	VMOVUPS 64(AX), Z28
	VMOVUPS 128(AX), Z29
	MOVQ rs+40(FP), R9
	MOVQ off+48(FP), R10
	MOVQ val+56(FP), R11
	MOVQ m+64(FP), DI
	MOVQ y+88(FP), R12
	MOVQ ldy+96(FP), R13
	SHLQ $2, R13
	MOVQ $4, SI
u8row:
	VPSUBD Z21, Z0, Z0
	VPSUBD Z22, Z1, Z1
	VPSUBD Z23, Z2, Z2
	VCVTDQ2PS Z0, Z0
	VCVTDQ2PS Z1, Z1
	VCVTDQ2PS Z2, Z2
	VBROADCASTSS (R9), Z20
	VMULPS Z20, Z0, Z0
	VMULPS Z20, Z1, Z1
	VMULPS Z20, Z2, Z2
	MOVQ DI, CX
	TESTQ CX, CX
	JZ u8store
u8outlier:
	MOVLQSX (R10), AX
	VMOVDQU32 (BX)(AX*1), Z12
	VMOVDQU32 64(BX)(AX*1), Z13
	VMOVDQU32 128(BX)(AX*1), Z14
	VPSLLD $24, Z12, Z12
	VPSLLD $24, Z13, Z13
	VPSLLD $24, Z14, Z14
	VPSRAD $24, Z12, Z12
	VPSRAD $24, Z13, Z13
	VPSRAD $24, Z14, Z14
	VCVTDQ2PS Z12, Z12
	VCVTDQ2PS Z13, Z13
	VCVTDQ2PS Z14, Z14
	VBROADCASTSS (R11), Z20
	VFMADD231PS Z20, Z12, Z0
	VFMADD231PS Z20, Z13, Z1
	VFMADD231PS Z20, Z14, Z2
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ u8outlier
u8store:
	VFMADD213PS Z27, Z24, Z0
	VFMADD213PS Z28, Z25, Z1
	VFMADD213PS Z29, Z26, Z2
	VMOVUPS Z0, (R12)
	VMOVUPS Z1, 64(R12)
	VMOVUPS Z2, 128(R12)
	ADDQ R13, R12
	ADDQ $4, R9
	VMOVDQA32 Z3, Z0
	VMOVDQA32 Z4, Z1
	VMOVDQA32 Z5, Z2
	VMOVDQA32 Z6, Z3
	VMOVDQA32 Z7, Z4
	VMOVDQA32 Z8, Z5
	VMOVDQA32 Z9, Z6
	VMOVDQA32 Z10, Z7
	VMOVDQA32 Z11, Z8
	DECQ SI
	JNZ u8row
	VZEROUPPER
	RET

// func absMaxAVX512(x *float32, n int) float32
//
// max |x[i]| for i < n, a multiple of 16.
TEXT ·absMaxAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z2
	VPXORD Z0, Z0, Z0
amloop:
	VPANDD (SI), Z2, Z1
	VMAXPS Z1, Z0, Z0
	ADDQ $64, SI
	DECQ CX
	JNZ amloop
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func absIndexAVX512(x *float32, n int, v float32) int
//
// The first i < n (a multiple of 16) with |x[i]| = v, or n.
TEXT ·absIndexAVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ CX, BX
	SHRQ $4, CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z2
	VBROADCASTSS v+16(FP), Z3
	XORQ DX, DX
ailoop:
	VPANDD (SI), Z2, Z1
	VCMPPS $0, Z3, Z1, K1
	KMOVW K1, AX
	TESTL AX, AX
	JNZ aifound
	ADDQ $64, SI
	ADDQ $16, DX
	DECQ CX
	JNZ ailoop
	MOVQ BX, ret+24(FP)
	VZEROUPPER
	RET
aifound:
	BSFL AX, AX
	ADDQ AX, DX
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET

// func quantAVX512(u *uint8, x *float32, n int, inv float32)
//
// u[i] = round(x[i] × inv) + 128 (to nearest even, saturated to 255) for
// i < n, a multiple of 16.
TEXT ·quantAVX512(SB), NOSPLIT, $0-28
	MOVQ u+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	VBROADCASTSS inv+24(FP), Z3
	MOVL $128, AX
	VPBROADCASTD AX, Z4
qloop:
	VMULPS (SI), Z3, Z1
	VCVTPS2DQ Z1, Z1
	VPADDD Z4, Z1, Z1
	VPMOVUSDB Z1, (DI)
	ADDQ $64, SI
	ADDQ $16, DI
	DECQ CX
	JNZ qloop
	VZEROUPPER
	RET
