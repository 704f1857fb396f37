// RUN: tlc-opt %s -split-input-file -tile-lower-fp8-conversions -verify-diagnostics | FileCheck %s

// fp8 -> f32: the byte in a pair with a zero through cvt.f16x2.e4m3x2, then
// f16 -> f32. f32 -> fp8: cvt.rn.satfinite.e5m2x2.f32 of 0 and the value,
// which lands in the lower byte.
// CHECK-LABEL: func.func @both_ways
// CHECK-SAME: (%[[X:.*]]: f8E4M3FN, %[[Y:.*]]: f32)
// CHECK: %[[B:.*]] = arith.bitcast %[[X]] : f8E4M3FN to i8
// CHECK: %[[Z:.*]] = arith.constant 0 : i8
// CHECK: %[[P:.*]] = vector.from_elements %[[B]], %[[Z]] : vector<2xi8>
// CHECK: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[P]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: %[[E:.*]] = vector.extract %[[H]][0] : f16 from vector<2xf16>
// CHECK: %[[W:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK: %[[ZF:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Q:.*]] = nvvm.convert.f32x2.to.f8x2 %[[ZF]], %[[Y]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E5M2)
// CHECK-NOT: arith.shrui
// CHECK: %[[T:.*]] = arith.trunci %[[Q]] : i16 to i8
// CHECK: %[[R:.*]] = arith.bitcast %[[T]] : i8 to f8E5M2
// CHECK: return %[[W]], %[[R]]
// CHECK-NOT: arith.extf %{{.*}} : f8
func.func @both_ways(%x: f8E4M3FN, %y: f32) -> (f32, f8E5M2) {
  %a = arith.extf %x : f8E4M3FN to f32
  %b = arith.truncf %y : f32 to f8E5M2
  return %a, %b : f32, f8E5M2
}

// -----

// A 1-d vector (a copy's 16-byte access, a vectorized T.Parallel body)
// converts two elements a cvt: elements 2k and 2k + 1 as the
// pair's lower and upper byte (f32 -> fp8: the pair of f32s with 2k + 1 first,
// PTX's upper byte), an odd last element with a zero.
// CHECK-LABEL: func.func @vectors
// CHECK-SAME: (%[[X:.*]]: vector<3xf32>, %[[Y:.*]]: vector<4xf8E4M3FN>)
// CHECK-DAG: %[[X1:.*]] = vector.extract %[[X]][1] : f32 from vector<3xf32>
// CHECK-DAG: %[[X0:.*]] = vector.extract %[[X]][0] : f32 from vector<3xf32>
// CHECK: %[[Q:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X1]], %[[X0]]
// CHECK: %[[L:.*]] = arith.trunci %[[Q]] : i16 to i8
// CHECK: %[[A0:.*]] = arith.bitcast %[[L]] : i8 to f8E4M3FN
// CHECK: %[[S:.*]] = arith.shrui %[[Q]], %{{.*}} : i16
// CHECK: %[[U:.*]] = arith.trunci %[[S]] : i16 to i8
// CHECK: %[[A1:.*]] = arith.bitcast %[[U]] : i8 to f8E4M3FN
// CHECK: %[[X2:.*]] = vector.extract %[[X]][2] : f32 from vector<3xf32>
// CHECK: %[[Q2:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[X2]]
// CHECK: %[[A2:.*]] = arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: %[[A:.*]] = vector.from_elements %[[A0]], %[[A1]], %[[A2]] : vector<3xf8E4M3FN>
// CHECK-COUNT-2: nvvm.convert.f8x2.to.f16x2
// CHECK-NOT: nvvm.convert
// CHECK: return %[[A]]
func.func @vectors(%x: vector<3xf32>, %y: vector<4xf8E4M3FN>) -> (vector<3xf8E4M3FN>, vector<4xf16>) {
  %a = arith.truncf %x : vector<3xf32> to vector<3xf8E4M3FN>
  %b = arith.extf %y : vector<4xf8E4M3FN> to vector<4xf16>
  return %a, %b : vector<3xf8E4M3FN>, vector<4xf16>
}

// -----

// Conversions between other floats are left alone.
// CHECK-LABEL: func.func @no_fp8
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: nvvm
func.func @no_fp8(%x: f16) -> f32 {
  %a = arith.extf %x : f16 to f32
  return %a : f32
}

// -----

func.func @fp8_arithmetic(%x: f8E4M3FN) -> f8E4M3FN {
  // expected-error @+1 {{'arith.addf' op on fp8 values is not supported: convert them to a wider float first}}
  %a = arith.addf %x, %x : f8E4M3FN
  return %a : f8E4M3FN
}

// -----

// Before sm_89 (no fp8 cvt): integer arithmetic on the bits. Widening:
// exponent rebiased (+120 for e4m3), mantissa shifted to f32's top, a
// subnormal as its mantissa times 2^-9, 0x7f NaN. Narrowing: round to
// nearest even at bit 20 of the f32 (e4m3: 3 mantissa bits), saturate at
// 0x7e (448), NaN -> 0x7f, subnormals through 2^9 x |x| rounded in f32.
// CHECK-LABEL: func.func @before_sm89
// CHECK-NOT: nvvm.convert
// CHECK-DAG: arith.constant 120 : i32
// CHECK-DAG: arith.constant 0.001953125 : f32
// CHECK-DAG: arith.constant 524287 : i32
// CHECK-DAG: arith.constant 960 : i32
// CHECK-DAG: arith.constant 5.120000e+02 : f32
// CHECK-DAG: arith.constant 126 : i32
// CHECK: arith.minui
// CHECK-NOT: nvvm.convert
// CHECK: return
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @before_sm89(%x: f8E4M3FN, %y: f32) -> (f32, f8E4M3FN) {
  %a = arith.extf %x : f8E4M3FN to f32
  %b = arith.truncf %y : f32 to f8E4M3FN
  return %a, %b : f32, f8E4M3FN
}
}

// -----

// The target's fp8_convert feature decides, not its name: sm_89 has the cvt,
// an sm_90a narrowed to features without it takes the integer arithmetic.
// CHECK-LABEL: func.func @on_sm89
// CHECK: nvvm.convert
module attributes {tile.target = #tile.target<"sm_89">} {
func.func @on_sm89(%y: f32) -> f8E4M3FN {
  %b = arith.truncf %y : f32 to f8E4M3FN
  return %b : f8E4M3FN
}
}

// -----

// CHECK-LABEL: func.func @narrowed_without_the_cvt
// CHECK-NOT: nvvm.convert
// CHECK: arith.minui
module attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync, wgmma]>} {
func.func @narrowed_without_the_cvt(%y: f32) -> f8E4M3FN {
  %b = arith.truncf %y : f32 to f8E4M3FN
  return %b : f8E4M3FN
}
}

// -----

// A select of fp8 values (a masked copy's zero fill) selects their bytes.
// CHECK-LABEL: func.func @select_bits
// CHECK-SAME: (%[[C:.*]]: i1, %[[X:.*]]: vector<4xf8E4M3FN>, %[[Y:.*]]: vector<4xf8E4M3FN>)
// CHECK: %[[BX:.*]] = arith.bitcast %[[X]] : vector<4xf8E4M3FN> to vector<4xi8>
// CHECK: %[[BY:.*]] = arith.bitcast %[[Y]] : vector<4xf8E4M3FN> to vector<4xi8>
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[BX]], %[[BY]] : vector<4xi8>
// CHECK: %[[R:.*]] = arith.bitcast %[[S]] : vector<4xi8> to vector<4xf8E4M3FN>
// CHECK: return %[[R]]
func.func @select_bits(%c: i1, %x: vector<4xf8E4M3FN>, %y: vector<4xf8E4M3FN>) -> vector<4xf8E4M3FN> {
  %s = arith.select %c, %x, %y : vector<4xf8E4M3FN>
  return %s : vector<4xf8E4M3FN>
}
