#include "textflag.h"

// The micro-kernels of gemm.go, for AVX2 and FMA. Strides are in floats.

// func kernI8(k int, x *float32, ldx int, w *int8, scale *float32, bias *float32, y *float32, ldy int)
//
// A 4×24 block: twelve accumulators (4 rows × 3 vectors of 8), three
// registers for a row of the panel (24 int8 widened to float32) and one for
// the broadcast element of x. At the end, y = acc × scale + bias.
TEXT ·kernI8(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), R8
	MOVQ w+24(FP), DI
	MOVQ y+48(FP), DX
	MOVQ ldy+56(FP), R10
	SHLQ $2, R8
	SHLQ $2, R10
	LEAQ (SI)(R8*1), R11
	LEAQ (SI)(R8*2), R12
	LEAQ (R11)(R8*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
loopi:
	VPMOVSXBD (DI), Y12
	VPMOVSXBD 8(DI), Y13
	VPMOVSXBD 16(DI), Y14
	VCVTDQ2PS Y12, Y12
	VCVTDQ2PS Y13, Y13
	VCVTDQ2PS Y14, Y14
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VBROADCASTSS (R11), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VBROADCASTSS (R12), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VBROADCASTSS (R13), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	ADDQ $24, DI
	DECQ CX
	JNZ loopi
	MOVQ scale+32(FP), R9
	MOVQ bias+40(FP), AX
	VMOVUPS (R9), Y12
	VMOVUPS 32(R9), Y13
	VMOVUPS 64(R9), Y14
	VMOVUPS (AX), Y15
	VFMADD213PS Y15, Y12, Y0
	VFMADD213PS Y15, Y12, Y3
	VFMADD213PS Y15, Y12, Y6
	VFMADD213PS Y15, Y12, Y9
	VMOVUPS 32(AX), Y15
	VFMADD213PS Y15, Y13, Y1
	VFMADD213PS Y15, Y13, Y4
	VFMADD213PS Y15, Y13, Y7
	VFMADD213PS Y15, Y13, Y10
	VMOVUPS 64(AX), Y15
	VFMADD213PS Y15, Y14, Y2
	VFMADD213PS Y15, Y14, Y5
	VFMADD213PS Y15, Y14, Y8
	VFMADD213PS Y15, Y14, Y11
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	ADDQ R10, DX
	VMOVUPS Y3, (DX)
	VMOVUPS Y4, 32(DX)
	VMOVUPS Y5, 64(DX)
	ADDQ R10, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VMOVUPS Y8, 64(DX)
	ADDQ R10, DX
	VMOVUPS Y9, (DX)
	VMOVUPS Y10, 32(DX)
	VMOVUPS Y11, 64(DX)
	VZEROUPPER
	RET

// func kernF32x8(k int, x *float32, ldx int, w *float32, y *float32, ldy int)
//
// A 4×8 block: two sets of four accumulators, for even and odd i, so that
// eight independent FMA chains hide the FMA latency.
TEXT ·kernF32x8(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), R8
	MOVQ w+24(FP), DI
	MOVQ y+32(FP), DX
	MOVQ ldy+40(FP), R10
	SHLQ $2, R8
	SHLQ $2, R10
	LEAQ (SI)(R8*1), R11
	LEAQ (SI)(R8*2), R12
	LEAQ (R11)(R8*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ CX, BX
	SHRQ $1, BX
	JZ tail8
loop8:
	VMOVUPS (DI), Y4
	VMOVUPS 32(DI), Y5
	VBROADCASTSS (SI), Y6
	VBROADCASTSS 4(SI), Y7
	VFMADD231PS Y4, Y6, Y0
	VFMADD231PS Y5, Y7, Y8
	VBROADCASTSS (R11), Y6
	VBROADCASTSS 4(R11), Y7
	VFMADD231PS Y4, Y6, Y1
	VFMADD231PS Y5, Y7, Y9
	VBROADCASTSS (R12), Y6
	VBROADCASTSS 4(R12), Y7
	VFMADD231PS Y4, Y6, Y2
	VFMADD231PS Y5, Y7, Y10
	VBROADCASTSS (R13), Y6
	VBROADCASTSS 4(R13), Y7
	VFMADD231PS Y4, Y6, Y3
	VFMADD231PS Y5, Y7, Y11
	ADDQ $8, SI
	ADDQ $8, R11
	ADDQ $8, R12
	ADDQ $8, R13
	ADDQ $64, DI
	DECQ BX
	JNZ loop8
tail8:
	ANDQ $1, CX
	JZ done8
	VMOVUPS (DI), Y4
	VBROADCASTSS (SI), Y6
	VFMADD231PS Y4, Y6, Y0
	VBROADCASTSS (R11), Y6
	VFMADD231PS Y4, Y6, Y1
	VBROADCASTSS (R12), Y6
	VFMADD231PS Y4, Y6, Y2
	VBROADCASTSS (R13), Y6
	VFMADD231PS Y4, Y6, Y3
done8:
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	VMOVUPS Y0, (DX)
	ADDQ R10, DX
	VMOVUPS Y1, (DX)
	ADDQ R10, DX
	VMOVUPS Y2, (DX)
	ADDQ R10, DX
	VMOVUPS Y3, (DX)
	VZEROUPPER
	RET

// Constants of geluAVX and expAVX, each broadcast to 8 floats (see gemm.go:
// erff and expf, whose coefficients these are).
DATA mathc<>+0(SB)/8, $0x3f0000003f000000
DATA mathc<>+8(SB)/8, $0x3f0000003f000000
DATA mathc<>+16(SB)/8, $0x3f0000003f000000
DATA mathc<>+24(SB)/8, $0x3f0000003f000000
DATA mathc<>+32(SB)/8, $0x3f3504f33f3504f3
DATA mathc<>+40(SB)/8, $0x3f3504f33f3504f3
DATA mathc<>+48(SB)/8, $0x3f3504f33f3504f3
DATA mathc<>+56(SB)/8, $0x3f3504f33f3504f3
DATA mathc<>+64(SB)/8, $0x4080000040800000
DATA mathc<>+72(SB)/8, $0x4080000040800000
DATA mathc<>+80(SB)/8, $0x4080000040800000
DATA mathc<>+88(SB)/8, $0x4080000040800000
DATA mathc<>+96(SB)/8, $0xc0800000c0800000
DATA mathc<>+104(SB)/8, $0xc0800000c0800000
DATA mathc<>+112(SB)/8, $0xc0800000c0800000
DATA mathc<>+120(SB)/8, $0xc0800000c0800000
DATA mathc<>+128(SB)/8, $0xaf95df0baf95df0b
DATA mathc<>+136(SB)/8, $0xaf95df0baf95df0b
DATA mathc<>+144(SB)/8, $0xaf95df0baf95df0b
DATA mathc<>+152(SB)/8, $0xaf95df0baf95df0b
DATA mathc<>+160(SB)/8, $0x32edffee32edffee
DATA mathc<>+168(SB)/8, $0x32edffee32edffee
DATA mathc<>+176(SB)/8, $0x32edffee32edffee
DATA mathc<>+184(SB)/8, $0x32edffee32edffee
DATA mathc<>+192(SB)/8, $0xb60cff51b60cff51
DATA mathc<>+200(SB)/8, $0xb60cff51b60cff51
DATA mathc<>+208(SB)/8, $0xb60cff51b60cff51
DATA mathc<>+216(SB)/8, $0xb60cff51b60cff51
DATA mathc<>+224(SB)/8, $0xb86ec2d2b86ec2d2
DATA mathc<>+232(SB)/8, $0xb86ec2d2b86ec2d2
DATA mathc<>+240(SB)/8, $0xb86ec2d2b86ec2d2
DATA mathc<>+248(SB)/8, $0xb86ec2d2b86ec2d2
DATA mathc<>+256(SB)/8, $0xba40ac63ba40ac63
DATA mathc<>+264(SB)/8, $0xba40ac63ba40ac63
DATA mathc<>+272(SB)/8, $0xba40ac63ba40ac63
DATA mathc<>+280(SB)/8, $0xba40ac63ba40ac63
DATA mathc<>+288(SB)/8, $0xbb41a1f6bb41a1f6
DATA mathc<>+296(SB)/8, $0xbb41a1f6bb41a1f6
DATA mathc<>+304(SB)/8, $0xbb41a1f6bb41a1f6
DATA mathc<>+312(SB)/8, $0xbb41a1f6bb41a1f6
DATA mathc<>+320(SB)/8, $0xbc83dbd4bc83dbd4
DATA mathc<>+328(SB)/8, $0xbc83dbd4bc83dbd4
DATA mathc<>+336(SB)/8, $0xbc83dbd4bc83dbd4
DATA mathc<>+344(SB)/8, $0xbc83dbd4bc83dbd4
DATA mathc<>+352(SB)/8, $0xb77460cdb77460cd
DATA mathc<>+360(SB)/8, $0xb77460cdb77460cd
DATA mathc<>+368(SB)/8, $0xb77460cdb77460cd
DATA mathc<>+376(SB)/8, $0xb77460cdb77460cd
DATA mathc<>+384(SB)/8, $0xb95fbd29b95fbd29
DATA mathc<>+392(SB)/8, $0xb95fbd29b95fbd29
DATA mathc<>+400(SB)/8, $0xb95fbd29b95fbd29
DATA mathc<>+408(SB)/8, $0xb95fbd29b95fbd29
DATA mathc<>+416(SB)/8, $0xbadc924ebadc924e
DATA mathc<>+424(SB)/8, $0xbadc924ebadc924e
DATA mathc<>+432(SB)/8, $0xbadc924ebadc924e
DATA mathc<>+440(SB)/8, $0xbadc924ebadc924e
DATA mathc<>+448(SB)/8, $0xbbf19bf8bbf19bf8
DATA mathc<>+456(SB)/8, $0xbbf19bf8bbf19bf8
DATA mathc<>+464(SB)/8, $0xbbf19bf8bbf19bf8
DATA mathc<>+472(SB)/8, $0xbbf19bf8bbf19bf8
DATA mathc<>+480(SB)/8, $0xbc69b6a7bc69b6a7
DATA mathc<>+488(SB)/8, $0xbc69b6a7bc69b6a7
DATA mathc<>+496(SB)/8, $0xbc69b6a7bc69b6a7
DATA mathc<>+504(SB)/8, $0xbc69b6a7bc69b6a7
DATA mathc<>+512(SB)/8, $0x3f8000003f800000
DATA mathc<>+520(SB)/8, $0x3f8000003f800000
DATA mathc<>+528(SB)/8, $0x3f8000003f800000
DATA mathc<>+536(SB)/8, $0x3f8000003f800000
DATA mathc<>+544(SB)/8, $0xc2ae0000c2ae0000
DATA mathc<>+552(SB)/8, $0xc2ae0000c2ae0000
DATA mathc<>+560(SB)/8, $0xc2ae0000c2ae0000
DATA mathc<>+568(SB)/8, $0xc2ae0000c2ae0000
DATA mathc<>+576(SB)/8, $0x42b0000042b00000
DATA mathc<>+584(SB)/8, $0x42b0000042b00000
DATA mathc<>+592(SB)/8, $0x42b0000042b00000
DATA mathc<>+600(SB)/8, $0x42b0000042b00000
DATA mathc<>+608(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA mathc<>+616(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA mathc<>+624(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA mathc<>+632(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA mathc<>+640(SB)/8, $0x3f3180003f318000
DATA mathc<>+648(SB)/8, $0x3f3180003f318000
DATA mathc<>+656(SB)/8, $0x3f3180003f318000
DATA mathc<>+664(SB)/8, $0x3f3180003f318000
DATA mathc<>+672(SB)/8, $0xb95e8083b95e8083
DATA mathc<>+680(SB)/8, $0xb95e8083b95e8083
DATA mathc<>+688(SB)/8, $0xb95e8083b95e8083
DATA mathc<>+696(SB)/8, $0xb95e8083b95e8083
DATA mathc<>+704(SB)/8, $0x3950696739506967
DATA mathc<>+712(SB)/8, $0x3950696739506967
DATA mathc<>+720(SB)/8, $0x3950696739506967
DATA mathc<>+728(SB)/8, $0x3950696739506967
DATA mathc<>+736(SB)/8, $0x3ab743ce3ab743ce
DATA mathc<>+744(SB)/8, $0x3ab743ce3ab743ce
DATA mathc<>+752(SB)/8, $0x3ab743ce3ab743ce
DATA mathc<>+760(SB)/8, $0x3ab743ce3ab743ce
DATA mathc<>+768(SB)/8, $0x3c0889083c088908
DATA mathc<>+776(SB)/8, $0x3c0889083c088908
DATA mathc<>+784(SB)/8, $0x3c0889083c088908
DATA mathc<>+792(SB)/8, $0x3c0889083c088908
DATA mathc<>+800(SB)/8, $0x3d2aa9c13d2aa9c1
DATA mathc<>+808(SB)/8, $0x3d2aa9c13d2aa9c1
DATA mathc<>+816(SB)/8, $0x3d2aa9c13d2aa9c1
DATA mathc<>+824(SB)/8, $0x3d2aa9c13d2aa9c1
DATA mathc<>+832(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA mathc<>+840(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA mathc<>+848(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA mathc<>+856(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA mathc<>+864(SB)/8, $0x3f0000003f000000
DATA mathc<>+872(SB)/8, $0x3f0000003f000000
DATA mathc<>+880(SB)/8, $0x3f0000003f000000
DATA mathc<>+888(SB)/8, $0x3f0000003f000000
GLOBL mathc<>(SB), RODATA|NOPTR, $896

// func geluAVX(x *float32, n int)
//
// x[i] = x[i] Φ(x[i]) for i < n (a multiple of 8), with erff's rational
// approximation, 8 floats at a time.
TEXT ·geluAVX(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ geludone
	VMOVUPS mathc<>+64(SB), Y14
	VMOVUPS mathc<>+96(SB), Y15
geluloop:
	VMOVUPS (SI), Y0
	VMULPS mathc<>+32(SB), Y0, Y1
	VMINPS Y14, Y1, Y1
	VMAXPS Y15, Y1, Y1
	VMULPS Y1, Y1, Y2
	VMOVUPS mathc<>+128(SB), Y3
	VFMADD213PS mathc<>+160(SB), Y2, Y3
	VFMADD213PS mathc<>+192(SB), Y2, Y3
	VFMADD213PS mathc<>+224(SB), Y2, Y3
	VFMADD213PS mathc<>+256(SB), Y2, Y3
	VFMADD213PS mathc<>+288(SB), Y2, Y3
	VFMADD213PS mathc<>+320(SB), Y2, Y3
	VMULPS Y1, Y3, Y3
	VMOVUPS mathc<>+352(SB), Y4
	VFMADD213PS mathc<>+384(SB), Y2, Y4
	VFMADD213PS mathc<>+416(SB), Y2, Y4
	VFMADD213PS mathc<>+448(SB), Y2, Y4
	VFMADD213PS mathc<>+480(SB), Y2, Y4
	VDIVPS Y4, Y3, Y3
	VMULPS mathc<>+0(SB), Y0, Y0
	VFMADD213PS Y0, Y0, Y3
	VMOVUPS Y3, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ geluloop
	VZEROUPPER
geludone:
	RET

// func expAVX(x *float32, n int, sub, f float32)
//
// x[i] = e^((x[i] - sub) × f) for i < n (a multiple of 8), with expf's
// range reduction and polynomial, 8 floats at a time.
TEXT ·expAVX(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ expdone
	VBROADCASTSS sub+16(FP), Y14
	VBROADCASTSS f+20(FP), Y15
	VMOVUPS mathc<>+512(SB), Y13
	VPCMPEQD Y12, Y12, Y12
	VPSRLD $25, Y12, Y12 // 127 in each lane
exploop:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMAXPS mathc<>+544(SB), Y0, Y0
	VMINPS mathc<>+576(SB), Y0, Y0
	VMULPS mathc<>+608(SB), Y0, Y1
	VROUNDPS $0, Y1, Y1
	VFNMADD231PS mathc<>+640(SB), Y1, Y0
	VFNMADD231PS mathc<>+672(SB), Y1, Y0
	VMOVUPS mathc<>+704(SB), Y2
	VFMADD213PS mathc<>+736(SB), Y0, Y2
	VFMADD213PS mathc<>+768(SB), Y0, Y2
	VFMADD213PS mathc<>+800(SB), Y0, Y2
	VFMADD213PS mathc<>+832(SB), Y0, Y2
	VFMADD213PS mathc<>+864(SB), Y0, Y2
	VMULPS Y0, Y0, Y3
	VFMADD213PS Y0, Y3, Y2
	VADDPS Y13, Y2, Y2
	VCVTPS2DQ Y1, Y1
	VPADDD Y12, Y1, Y1
	VPSLLD $23, Y1, Y1
	VMULPS Y1, Y2, Y2
	VMOVUPS Y2, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ exploop
	VZEROUPPER
expdone:
	RET

// func softmaxAVX(x *float32, n int, f float32)
//
// x = softmax(x × f) for n (a multiple of 8, at least 8) floats: the
// maximum, then e^((x - max) × f) as in expAVX and its sum, then the
// division by the sum.
TEXT ·softmaxAVX(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	MOVQ SI, DI
	MOVQ CX, BX
	VMOVUPS (DI), Y14
smmax:
	VMAXPS (DI), Y14, Y14
	ADDQ $32, DI
	DECQ BX
	JNZ smmax
	VEXTRACTF128 $1, Y14, X0
	VMAXPS X0, X14, X14
	VPERMILPS $0x4e, X14, X0
	VMAXPS X0, X14, X14
	VPERMILPS $0xb1, X14, X0
	VMAXPS X0, X14, X14
	VBROADCASTSS X14, Y14
	VBROADCASTSS f+16(FP), Y15
	VMOVUPS mathc<>+512(SB), Y13
	VPCMPEQD Y12, Y12, Y12
	VPSRLD $25, Y12, Y12
	VXORPS Y11, Y11, Y11
	MOVQ SI, DI
	MOVQ CX, BX
smexp:
	VMOVUPS (DI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMAXPS mathc<>+544(SB), Y0, Y0
	VMINPS mathc<>+576(SB), Y0, Y0
	VMULPS mathc<>+608(SB), Y0, Y1
	VROUNDPS $0, Y1, Y1
	VFNMADD231PS mathc<>+640(SB), Y1, Y0
	VFNMADD231PS mathc<>+672(SB), Y1, Y0
	VMOVUPS mathc<>+704(SB), Y2
	VFMADD213PS mathc<>+736(SB), Y0, Y2
	VFMADD213PS mathc<>+768(SB), Y0, Y2
	VFMADD213PS mathc<>+800(SB), Y0, Y2
	VFMADD213PS mathc<>+832(SB), Y0, Y2
	VFMADD213PS mathc<>+864(SB), Y0, Y2
	VMULPS Y0, Y0, Y3
	VFMADD213PS Y0, Y3, Y2
	VADDPS Y13, Y2, Y2
	VCVTPS2DQ Y1, Y1
	VPADDD Y12, Y1, Y1
	VPSLLD $23, Y1, Y1
	VMULPS Y1, Y2, Y2
	VMOVUPS Y2, (DI)
	VADDPS Y2, Y11, Y11
	ADDQ $32, DI
	DECQ BX
	JNZ smexp
	VEXTRACTF128 $1, Y11, X0
	VADDPS X0, X11, X11
	VHADDPS X11, X11, X11
	VHADDPS X11, X11, X11
	VDIVSS X11, X13, X11
	VBROADCASTSS X11, Y11
smscale:
	VMULPS (SI), Y11, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ smscale
	VZEROUPPER
	RET

// func mulAVX(dst, a, b *float32, n int)
//
// dst[i] = a[i] × b[i] for i < n, a multiple of 8.
TEXT ·mulAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ muldone
mulloop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ mulloop
	VZEROUPPER
muldone:
	RET
