#include "textflag.h"

// func dotsInt16Int8AVX2(q *int16, b *int8, dim int, n int, out *int32)
// out[i] = sum over j < dim of q[j] * b[i*dim + j], for i < n; dim is a
// multiple of 32. Each 16 int8 components are sign-extended to int16
// (VPMOVSXBW) and multiplied with the query's int16 components, adjacent
// products summed into int32 (VPMADDWD); two accumulators.
TEXT ·dotsInt16Int8AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ dim+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	TESTQ CX, CX
	JEQ   done

vector:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R9 // query cursor
	MOVQ  R8, R10 // components left

inner:
	VPMOVSXBW (DI), Y2
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  (R9), Y2, Y2
	VPMADDWD  32(R9), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, DI
	ADDQ      $64, R9
	SUBQ      $32, R10
	JNE       inner

	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	MOVL         X0, (DX)
	ADDQ         $4, DX
	DECQ         CX
	JNE          vector

done:
	VZEROUPPER
	RET
