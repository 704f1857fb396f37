// RUN: tlc-opt %s | tlc-opt | FileCheck %s
// RUN: tlc-opt %s --mlir-print-op-generic | tlc-opt | FileCheck %s

// Round trip of every tile op and attribute: custom form -> custom form, and
// generic form -> custom form. Every op sits in a func.func and (except the
// outlined gpu.func case at the end) in a tile.kernel, as the verifiers demand.

//===----------------------------------------------------------------------===//
// Attributes, standalone (every enum case, layout and swizzle)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attributes()
// A dictionary prints its entries sorted by name.
// CHECK-SAME: tile.frag = #tile.space<fragment>
// CHECK-SAME: tile.kinds = [#tile.reduce_kind<max>, #tile.reduce_kind<sum>, #tile.reduce_kind<min>, #tile.reduce_kind<abssum>, #tile.reduce_kind<absmax>]
// The map is printed in MLIR's simplified form: `2 * d0 + d1 * 1` -> `d0 * 2 + d1`.
// CHECK-SAME: tile.lay = #tile.layout<threads = 32, regs = 2, map = (d0, d1) -> (d0 * 2 + d1)>
// CHECK-SAME: tile.local = #tile.space<local>
// CHECK-SAME: tile.policies = [#tile.warp_policy<square>, #tile.warp_policy<full_row>, #tile.warp_policy<full_col>]
// A replicated layout: both threads hold element 0.
// CHECK-SAME: tile.rep = #tile.layout<threads = 2, regs = 1, map = (d0, d1) -> (0)>
// CHECK-SAME: tile.swz = #tile.swizzle<bits = 2, base = 4, shift = 3>
// CHECK-SAME: tile.swz0 = #tile.swizzle<bits = 0, base = 0, shift = 0>
func.func @attributes() attributes {
    tile.frag = #tile.space<fragment>,
    tile.local = #tile.space<local>,
    tile.policies = [#tile.warp_policy<square>, #tile.warp_policy<full_row>,
                     #tile.warp_policy<full_col>],
    tile.kinds = [#tile.reduce_kind<max>, #tile.reduce_kind<sum>,
                  #tile.reduce_kind<min>, #tile.reduce_kind<abssum>,
                  #tile.reduce_kind<absmax>],
    tile.swz = #tile.swizzle<bits = 2, base = 4, shift = 3>,
    tile.swz0 = #tile.swizzle<bits = 0, base = 0, shift = 0>,
    tile.lay = #tile.layout<threads = 32, regs = 2, map = (d0, d1) -> (2 * d0 + d1 * 1)>,
    tile.rep = #tile.layout<threads = 2, regs = 1, map = (d0, d1) -> (0)>} {
  return
}

//===----------------------------------------------------------------------===//
// tile.kernel
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @kernel_1d()
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: tile.kernel blocks(%[[BX:.*]]) in (%[[C4]]) threads = 128 {
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @kernel_1d() {
  %c4 = arith.constant 4 : index
  tile.kernel blocks(%bx) in (%c4) threads = 128 {
  }
  return
}

// CHECK-LABEL: func.func @kernel_2d(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[N:.*]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]]) in (%[[N]], %[[C2]]) threads = 256 {
// CHECK-NEXT: arith.addi %[[BX]], %[[BY]] : index
// CHECK-NEXT: }
func.func @kernel_2d(%A: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %A, %c0 : memref<?x?xf32>
  tile.kernel blocks(%bx, %by) in (%n, %c2) threads = 256 {
    %s = arith.addi %bx, %by : index
  }
  return
}

// CHECK-LABEL: func.func @kernel_3d()
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%[[C1]], %[[C2]], %[[C3]]) threads = 1024 attributes {tile.note = "extra"} {
// CHECK-NEXT: arith.addi %[[BX]], %[[BZ]] : index
// CHECK-NEXT: arith.muli %[[BY]], %[[C3]] : index
// CHECK-NEXT: }
func.func @kernel_3d() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  tile.kernel blocks(%bx, %by, %bz) in (%c1, %c2, %c3) threads = 1024 attributes {tile.note = "extra"} {
    %0 = arith.addi %bx, %bz : index
    %1 = arith.muli %by, %c3 : index
  }
  return
}

// The smallest block.
// CHECK-LABEL: func.func @kernel_one_thread()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 1 {
func.func @kernel_one_thread() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 1 {
  }
  return
}

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @alloc_shared()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 {
// CHECK-NEXT: %[[S0:.*]] = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S1:.*]] = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S2:.*]] = tile.alloc_shared {offset = 8192 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S3:.*]] = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 2>>, offset = 0 : i64} : memref<8x16xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S4:.*]] = tile.alloc_shared : memref<16x16xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S5:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<3x64x128xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S6:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x256xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[S7:.*]] = tile.alloc_shared {layout = #tile.shared<>} : memref<16x16xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
func.func @alloc_shared() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s0 = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %s1 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>}
        : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s2 = tile.alloc_shared {offset = 8192} : memref<64xf32, #gpu.address_space<workgroup>>
    %s3 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 2>>, offset = 0 : i64}
        : memref<8x16xi8, #gpu.address_space<workgroup>>
    %s4 = tile.alloc_shared : memref<16x16xbf16, #gpu.address_space<workgroup>>
    %s5 = tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>}
        : memref<3x64x128xf16, #gpu.address_space<workgroup>>
    %s6 = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x256xbf16, #gpu.address_space<workgroup>>
    %s7 = tile.alloc_shared {layout = #tile.shared<>} : memref<16x16xf16, #gpu.address_space<workgroup>>
  }
  return
}

// CHECK-LABEL: func.func @alloc_fragment()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 4 {
// CHECK-NEXT: %[[F0:.*]] = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
// The worked example of #tile.layout (a 4x8 tile over 4 threads, 8 registers each).
// CHECK-NEXT: %[[F1:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> ((d1 floordiv 4) * 2 + d0 floordiv 2, (d0 mod 2) * 4 + d1 mod 4)>} : memref<4x8xf32, #tile.space<fragment>>
// A replicated layout: 4 threads x 2 registers over 4 elements, each held twice.
// CHECK-NEXT: %[[F2:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 2, map = (d0, d1) -> (d0)>} : memref<4xf16, #tile.space<fragment>>
// CHECK-NEXT: %[[F3:.*]] = tile.alloc_fragment : memref<16x8xi32, #tile.space<fragment>>
// CHECK-NEXT: }
func.func @alloc_fragment() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    %f0 = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    %f1 = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 8,
            map = (d0, d1) -> ((d1 floordiv 4) * 2 + d0 floordiv 2, (d0 mod 2) * 4 + d1 mod 4)>}
        : memref<4x8xf32, #tile.space<fragment>>
    %f2 = tile.alloc_fragment {layout = #tile.layout<threads = 4, regs = 2, map = (d0, d1) -> (d0)>}
        : memref<4xf16, #tile.space<fragment>>
    %f3 = tile.alloc_fragment : memref<16x8xi32, #tile.space<fragment>>
  }
  return
}

// CHECK-LABEL: func.func @alloc_local()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 32 {
// CHECK-NEXT: %[[L0:.*]] = tile.alloc_local : memref<4xf32, #tile.space<local>>
// CHECK-NEXT: %[[L1:.*]] = tile.alloc_local : memref<2x2xi32, #tile.space<local>>
// CHECK-NEXT: }
func.func @alloc_local() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %l0 = tile.alloc_local : memref<4xf32, #tile.space<local>>
    %l1 = tile.alloc_local : memref<2x2xi32, #tile.space<local>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.copy
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @copy(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[Q:[^:]*]]: memref<?x?x?x128xf16>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: tile.kernel blocks(%[[BX:.*]]) in (%[[C1]]) threads = 128 {
// CHECK-NEXT: %[[S:.*]] = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[H:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[F:.*]] = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[QS:.*]] = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
// global -> shared
// CHECK-NEXT: tile.copy %[[A]][%[[I]], %[[J]]] [64, 32] to %[[S]][%[[C0]], %[[C0]]] [64, 32] : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
// global -> fragment
// CHECK-NEXT: tile.copy %[[A]][%[[I]], %[[J]]] [64, 32] to %[[F]][%[[C0]], %[[C0]]] [64, 32] : memref<?x?xf32> to memref<64x32xf32, #tile.space<fragment>>
// fragment -> global
// CHECK-NEXT: tile.copy %[[F]][%[[C0]], %[[C0]]] [64, 32] to %[[A]][%[[I]], %[[J]]] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<?x?xf32>
// shared -> fragment
// CHECK-NEXT: tile.copy %[[S]][%[[C0]], %[[C0]]] [64, 32] to %[[F]][%[[C0]], %[[C0]]] [64, 32] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
// a rank-reducing slice Q[bx, i:i+64, j, :] -> a 64x128 tile
// CHECK-NEXT: tile.copy %[[Q]][%[[BX]], %[[I]], %[[J]], %[[C0]]] [1, 64, 1, 128] to %[[QS]][%[[C0]], %[[C0]]] [64, 128] : memref<?x?x?x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
// f32 -> f16 conversion
// CHECK-NEXT: tile.copy %[[A]][%[[I]], %[[J]]] [64, 32] to %[[H]][%[[C0]], %[[C0]]] [64, 32] : memref<?x?xf32> to memref<64x32xf16, #gpu.address_space<workgroup>>
// part of a shared buffer (constant offset 32 + size 32 fits in 64) -> global
// CHECK-NEXT: tile.copy %[[S]][%[[C32]], %[[C0]]] [32, 32] to %[[A]][%[[I]], %[[J]]] [32, 32] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<?x?xf32>
// a unit dimension added on the destination side only
// CHECK-NEXT: tile.copy %[[F]][%[[C0]], %[[C0]]] [64, 32] to %[[Q]][%[[BX]], %[[I]], %[[J]], %[[C0]]] [1, 64, 1, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<?x?x?x128xf16>
// CHECK-NEXT: }
func.func @copy(%A: memref<?x?xf32>, %Q: memref<?x?x?x128xf16>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    %h = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %qs = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%i, %j] [64, 32] to %s[%c0, %c0] [64, 32]
        : memref<?x?xf32> to memref<64x32xf32, #gpu.address_space<workgroup>>
    tile.copy %A[%i, %j] [64, 32] to %f[%c0, %c0] [64, 32]
        : memref<?x?xf32> to memref<64x32xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [64, 32] to %A[%i, %j] [64, 32]
        : memref<64x32xf32, #tile.space<fragment>> to memref<?x?xf32>
    tile.copy %s[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32]
        : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
    tile.copy %Q[%bx, %i, %j, %c0] [1, 64, 1, 128] to %qs[%c0, %c0] [64, 128]
        : memref<?x?x?x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%i, %j] [64, 32] to %h[%c0, %c0] [64, 32]
        : memref<?x?xf32> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %s[%c32, %c0] [32, 32] to %A[%i, %j] [32, 32]
        : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<?x?xf32>
    tile.copy %f[%c0, %c0] [64, 32] to %Q[%bx, %i, %j, %c0] [1, 64, 1, 32]
        : memref<64x32xf32, #tile.space<fragment>> to memref<?x?x?x128xf16>
  }
  return
}

// Integer conversions, a 1-d tile, and a global side in
// #gpu.address_space<global> (which counts as global memory).
// CHECK-LABEL: func.func @copy_int(
// CHECK-SAME: %[[G:[^:]*]]: memref<256xi8, #gpu.address_space<global>>, %[[I:[^:]*]]: index)
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 {
// CHECK-NEXT: %[[L:.*]] = tile.alloc_local : memref<128xi32, #tile.space<local>>
// CHECK-NEXT: tile.copy %[[G]][%[[I]]] [128] to %[[L]][%{{.*}}] [128] : memref<256xi8, #gpu.address_space<global>> to memref<128xi32, #tile.space<local>>
// CHECK-NEXT: tile.copy %[[L]][%{{.*}}] [128] to %[[G]][%[[I]]] [128] : memref<128xi32, #tile.space<local>> to memref<256xi8, #gpu.address_space<global>>
func.func @copy_int(%G: memref<256xi8, #gpu.address_space<global>>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %l = tile.alloc_local : memref<128xi32, #tile.space<local>>
    tile.copy %G[%i] [128] to %l[%c0] [128]
        : memref<256xi8, #gpu.address_space<global>> to memref<128xi32, #tile.space<local>>
    tile.copy %l[%c0] [128] to %G[%i] [128]
        : memref<128xi32, #tile.space<local>> to memref<256xi8, #gpu.address_space<global>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.fill
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fill(
// CHECK-SAME: %[[V:.*]]: f16)
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[F:.*]] = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[L:.*]] = tile.alloc_local : memref<4xf32, #tile.space<local>>
// CHECK-NEXT: tile.fill %[[S]], %[[V]] : memref<64x32xf16, #gpu.address_space<workgroup>>, f16
// CHECK-NEXT: tile.fill %[[F]], %[[ZERO]] : memref<64x32xf32, #tile.space<fragment>>, f32
// CHECK-NEXT: tile.fill %[[L]], %[[ZERO]] : memref<4xf32, #tile.space<local>>, f32
// CHECK-NEXT: }
func.func @fill(%v: f16) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %zero = arith.constant 0.0 : f32
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    %l = tile.alloc_local : memref<4xf32, #tile.space<local>>
    tile.fill %s, %v : memref<64x32xf16, #gpu.address_space<workgroup>>, f16
    tile.fill %f, %zero : memref<64x32xf32, #tile.space<fragment>>, f32
    tile.fill %l, %zero : memref<4xf32, #tile.space<local>>, f32
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.parallel
//===----------------------------------------------------------------------===//

// A padded loop layout (a loop of no fragment): 129 iterations on 128
// threads, thread t's second slot t + 128 past the end for t > 0.
// CHECK-LABEL: func.func @parallel_padded
// CHECK: tile.parallel (%{{.*}}) in [129] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d1 * 128 + d0)>}
func.func @parallel_padded(%A: memref<129xf32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [129] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d1 * 128 + d0)>} {
      memref.store %one, %A[%i] : memref<129xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @parallel(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>)
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 4 {
// CHECK-NEXT: %[[F:.*]] = tile.alloc_fragment : memref<4x8xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[L:.*]] = tile.alloc_local : memref<2xf32, #tile.space<local>>
// CHECK-NEXT: tile.parallel (%[[I:.*]], %[[J:.*]]) in [4, 8] {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[F]][%[[I]], %[[J]]] : memref<4x8xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[F]][%[[I]], %[[J]]] : memref<4x8xf32, #tile.space<fragment>>
// CHECK-NEXT: }
// CHECK-NEXT: tile.parallel (%[[I2:.*]], %[[J2:.*]]) in [4, 8] attributes {layout = #tile.layout<threads = 4, regs = 8, map = (d0, d1) -> ((d1 floordiv 4) * 2 + d0 floordiv 2, (d0 mod 2) * 4 + d1 mod 4)>} {
// CHECK-NEXT: %[[G:.*]] = memref.load %[[A]][%[[I2]], %[[J2]]] : memref<?x?xf32>
// CHECK-NEXT: memref.store %[[G]], %[[F]][%[[I2]], %[[J2]]] : memref<4x8xf32, #tile.space<fragment>>
// CHECK-NEXT: }
// A 1-d loop; tile.alloc_local and tile.fill-free bodies are fine.
// CHECK-NEXT: tile.parallel (%[[K:.*]]) in [2] {
// CHECK-NEXT: memref.load %[[L]][%[[K]]] : memref<2xf32, #tile.space<local>>
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @parallel(%A: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 4 {
    %f = tile.alloc_fragment : memref<4x8xf32, #tile.space<fragment>>
    %l = tile.alloc_local : memref<2xf32, #tile.space<local>>
    tile.parallel (%i, %j) in [4, 8] {
      %x = memref.load %f[%i, %j] : memref<4x8xf32, #tile.space<fragment>>
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%i, %j] : memref<4x8xf32, #tile.space<fragment>>
    }
    tile.parallel (%i, %j) in [4, 8] attributes {layout = #tile.layout<threads = 4, regs = 8,
        map = (d0, d1) -> (d1 floordiv 4 * 2 + d0 floordiv 2, d0 mod 2 * 4 + d1 mod 4)>} {
      %g = memref.load %A[%i, %j] : memref<?x?xf32>
      memref.store %g, %f[%i, %j] : memref<4x8xf32, #tile.space<fragment>>
    }
    tile.parallel (%k) in [2] {
      %z = memref.load %l[%k] : memref<2xf32, #tile.space<local>>
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.pipelined
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @pipelined(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf16>, %[[N:[^:]*]]: index, %[[STEP:[^:]*]]: index)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: tile.kernel blocks(%[[BX:.*]]) in (%[[C1]]) threads = 128 {
// CHECK-NEXT: %[[S:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.pipelined %[[K:.*]] = %[[C0]] to %[[N]] step %[[C32]] num_stages = 3 {
// CHECK-NEXT: tile.copy %[[A]][%[[BX]], %[[K]]] [64, 32] to %[[S]][%[[C0]], %[[C0]]] [64, 32] : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// A step that is not a constant; extra attributes after `attributes`.
// CHECK-NEXT: tile.pipelined %[[K2:.*]] = %[[C0]] to %[[N]] step %[[STEP]] num_stages = 1 attributes {tile.note} {
// CHECK-NEXT: arith.addi %[[K2]], %[[C1]] : index
// CHECK-NEXT: }
// A manual schedule's copies after the computing ops.
// CHECK-NEXT: tile.pipelined %[[K3:.*]] = %[[C0]] to %[[N]] step %[[C32]] num_stages = 2 attributes {copies_last} {
// CHECK-NEXT: tile.copy %[[A]][%[[BX]], %[[K3]]]
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @pipelined(%A: memref<?x?xf16>, %n: index, %step: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c32 num_stages = 3 {
      tile.copy %A[%bx, %k] [64, 32] to %s[%c0, %c0] [64, 32]
          : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    }
    tile.pipelined %k = %c0 to %n step %step num_stages = 1 attributes {tile.note} {
      %kk = arith.addi %k, %c1 : index
    }
    tile.pipelined %k = %c0 to %n step %c32 num_stages = 2 attributes {copies_last} {
      tile.copy %A[%bx, %k] [64, 32] to %s[%c0, %c0] [64, 32]
          : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.wait_wgmma
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @wait_wgmma()
// CHECK: %[[S:.*]] = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[O:.*]] = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.wait_wgmma {pending = 1 : i64}
// CHECK-NEXT: tile.wait_wgmma %[[S]], %[[O]] {pending = 0 : i64} : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
func.func @wait_wgmma() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 1 : i64}
    tile.wait_wgmma %s, %o {pending = 0 : i64}
        : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.gemm
//===----------------------------------------------------------------------===//

// A prefetching gemm (tile-pipeline-loops' schedule): its four stages print.
// CHECK-LABEL: func.func @gemm_prefetch
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} prefetch(%[[FA:.*]], %[[FB:.*]], %[[NA:.*]], %[[NB:.*]]) {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>, prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
func.func @gemm_prefetch(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %fa = tile.stage %as[%c0] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      %s = arith.remsi %i, %c3 : index
      %a = tile.stage %as[%s] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%s] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      %i1 = arith.addi %i, %c1 : index
      %t = arith.remsi %i1, %c3 : index
      %na = tile.stage %as[%t] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %nb = tile.stage %bs[%t] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %na, %nb) {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>, prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// The default policy (square) is not printed.
// CHECK-LABEL: func.func @gemm()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 {
// CHECK-NEXT: %[[A:.*]] = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[B:.*]] = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[AT:.*]] = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[BT:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[AF:.*]] = tile.alloc_fragment : memref<128x32xf16, #tile.space<fragment>>
// CHECK-NEXT: %[[C:.*]] = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[C16:.*]] = tile.alloc_fragment : memref<128x64xf16, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[A]], %[[B]], %[[C]] : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[A]], %[[B]], %[[C]] : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[A]], %[[B]], %[[C]] {policy = #tile.warp_policy<full_row>} : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[A]], %[[B]], %[[C]] {clear_accum, policy = #tile.warp_policy<full_col>} : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[AT]], %[[B]], %[[C]] {transpose_a} : memref<32x128xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[A]], %[[BT]], %[[C]] {clear_accum, transpose_b} : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.gemm %[[AT]], %[[BT]], %[[C16]] {policy = #tile.warp_policy<full_row>, transpose_a, transpose_b} : memref<32x128xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #tile.space<fragment>>
// A in a fragment.
// CHECK-NEXT: tile.gemm %[[AF]], %[[B]], %[[C]] : memref<128x32xf16, #tile.space<fragment>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
// CHECK-NEXT: }
func.func @gemm() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %at = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %bt = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %af = tile.alloc_fragment : memref<128x32xf16, #tile.space<fragment>>
    %c = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    %c16 = tile.alloc_fragment : memref<128x64xf16, #tile.space<fragment>>
    tile.gemm %a, %b, %c
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<square>}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_col>, clear_accum}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %at, %b, %c {transpose_a}
        : memref<32x128xf16, #gpu.address_space<workgroup>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %a, %bt, %c {transpose_b, clear_accum}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<64x32xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %at, %bt, %c16 {transpose_a, transpose_b, policy = #tile.warp_policy<full_row>}
        : memref<32x128xf16, #gpu.address_space<workgroup>>,
          memref<64x32xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf16, #tile.space<fragment>>
    tile.gemm %af, %b, %c
        : memref<128x32xf16, #tile.space<fragment>>,
          memref<32x64xf16, #gpu.address_space<workgroup>>,
          memref<128x64xf32, #tile.space<fragment>>
  }
  return
}

// Every supported element-type combination other than f16.
// CHECK-LABEL: func.func @gemm_dtypes()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 32 {
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x16xf32, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<16x32xi8, #gpu.address_space<workgroup>>, memref<32x16xi8, #gpu.address_space<workgroup>>, memref<16x16xi32, #tile.space<fragment>>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<16x32xf8E4M3FN, #gpu.address_space<workgroup>>, memref<32x16xf8E4M3FN, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : memref<16x32xf8E5M2, #gpu.address_space<workgroup>>, memref<32x16xf8E5M2, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
func.func @gemm_dtypes() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %a0 = tile.alloc_shared : memref<16x16xbf16, #gpu.address_space<workgroup>>
    %c0 = tile.alloc_fragment : memref<16x16xf32, #tile.space<fragment>>
    tile.gemm %a0, %a0, %c0 : memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
    %a1 = tile.alloc_shared : memref<16x8xf32, #gpu.address_space<workgroup>>
    %b1 = tile.alloc_shared : memref<8x16xf32, #gpu.address_space<workgroup>>
    tile.gemm %a1, %b1, %c0 : memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x16xf32, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
    %a2 = tile.alloc_shared : memref<16x32xi8, #gpu.address_space<workgroup>>
    %b2 = tile.alloc_shared : memref<32x16xi8, #gpu.address_space<workgroup>>
    %c2 = tile.alloc_fragment : memref<16x16xi32, #tile.space<fragment>>
    tile.gemm %a2, %b2, %c2 : memref<16x32xi8, #gpu.address_space<workgroup>>, memref<32x16xi8, #gpu.address_space<workgroup>>, memref<16x16xi32, #tile.space<fragment>>
    %a3 = tile.alloc_shared : memref<16x32xf8E4M3FN, #gpu.address_space<workgroup>>
    %b3 = tile.alloc_shared : memref<32x16xf8E4M3FN, #gpu.address_space<workgroup>>
    tile.gemm %a3, %b3, %c0 : memref<16x32xf8E4M3FN, #gpu.address_space<workgroup>>, memref<32x16xf8E4M3FN, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
    %a4 = tile.alloc_shared : memref<16x32xf8E5M2, #gpu.address_space<workgroup>>
    %b4 = tile.alloc_shared : memref<32x16xf8E5M2, #gpu.address_space<workgroup>>
    tile.gemm %a4, %b4, %c0 : memref<16x32xf8E5M2, #gpu.address_space<workgroup>>, memref<32x16xf8E5M2, #gpu.address_space<workgroup>>, memref<16x16xf32, #tile.space<fragment>>
  }
  return
}

//===----------------------------------------------------------------------===//
// tile.reduce
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce()
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 {
// CHECK-NEXT: %[[S:.*]] = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[M:.*]] = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[N:.*]] = tile.alloc_shared : memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[V:.*]] = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
// CHECK-NEXT: %[[O:.*]] = tile.alloc_fragment : memref<1xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.reduce %[[S]] to %[[M]] {clear, dim = 1 : i64, kind = #tile.reduce_kind<max>} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.reduce %[[S]] to %[[M]] {dim = 1 : i64, kind = #tile.reduce_kind<sum>} : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.reduce %[[S]] to %[[N]] {dim = 0 : i64, kind = #tile.reduce_kind<min>} : memref<64x128xf32, #tile.space<fragment>> to memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.reduce %[[N]] to %[[O]] {clear, dim = 0 : i64, kind = #tile.reduce_kind<abssum>} : memref<128xf32, #gpu.address_space<workgroup>> to memref<1xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.reduce %[[V]] to %[[O]] {dim = 0 : i64, kind = #tile.reduce_kind<absmax>} : memref<128xf32, #tile.space<fragment>> to memref<1xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.reduce %[[S]] to %[[N]] {clear, dim = 0 : i64, kind = #tile.reduce_kind<sum>} : memref<64x128xf32, #tile.space<fragment>> to memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
func.func @reduce() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    %n = tile.alloc_shared : memref<128xf32, #gpu.address_space<workgroup>>
    %v = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<1xf32, #tile.space<fragment>>
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear}
        : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.reduce %s to %m {kind = #tile.reduce_kind<sum>, dim = 1 : i64}
        : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.reduce %s to %n {kind = #tile.reduce_kind<min>, dim = 0 : i64}
        : memref<64x128xf32, #tile.space<fragment>> to memref<128xf32, #gpu.address_space<workgroup>>
    tile.reduce %n to %o {kind = #tile.reduce_kind<abssum>, dim = 0 : i64, clear}
        : memref<128xf32, #gpu.address_space<workgroup>> to memref<1xf32, #tile.space<fragment>>
    tile.reduce %v to %o {kind = #tile.reduce_kind<absmax>, dim = 0 : i64}
        : memref<128xf32, #tile.space<fragment>> to memref<1xf32, #tile.space<fragment>>
    tile.reduce %s to %n {kind = #tile.reduce_kind<sum>, dim = 0, clear}
        : memref<64x128xf32, #tile.space<fragment>> to memref<128xf32, #gpu.address_space<workgroup>>
  }
  return
}

//===----------------------------------------------------------------------===//
// Tile ops in an outlined kernel (a gpu.func with a known block size)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: gpu.func @outlined(
// CHECK-SAME: %[[G:.*]]: memref<64xf32, #gpu.address_space<global>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[F:.*]] = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>} : memref<64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.copy %[[G]][%[[C0]]] [64] to %[[F]][%[[C0]]] [64] : memref<64xf32, #gpu.address_space<global>> to memref<64xf32, #tile.space<fragment>>
// CHECK-NEXT: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @outlined(%G: memref<64xf32, #gpu.address_space<global>>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %f = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>}
          : memref<64xf32, #tile.space<fragment>>
      tile.copy %G[%c0] [64] to %f[%c0] [64]
          : memref<64xf32, #gpu.address_space<global>> to memref<64xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// In a warp-specialized kernel (tile.producer_threads) the tile program runs
// on the block less its producer warpgroup: a layout over the 128 consumer
// threads of a 256-thread block.
// CHECK-LABEL: gpu.func @outlined_with_producer(
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0)>} : memref<128xf32, #tile.space<fragment>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @outlined_with_producer() kernel
        attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64} {
      %f = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0)>}
          : memref<128xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// CHECK-LABEL: func.func @tma_store
// CHECK: %[[MAP:.*]] = tile.tensor_map %{{.*}} {box = array<i64: 1, 64, 1, 64>, swizzle = 128 : i64} : memref<8x?x32x128xf16> -> !llvm.ptr
// CHECK: tile.tma_store %{{.*}} to %[[MAP]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK: tile.tma_store %{{.*}} to %[[MAP]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] add : memref<64x128xf16, #gpu.address_space<workgroup>>
func.func @tma_store(%O: memref<8x?x32x128xf16>, %b: index, %s: index, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %map = tile.tensor_map %O {box = array<i64: 1, 64, 1, 64>, swizzle = 128} : memref<8x?x32x128xf16> -> !llvm.ptr
    tile.tma_store %t to %map[%b, %s, %h, %c0] : memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.tma_store %t to %map[%b, %s, %h, %c0] add : memref<64x128xf16, #gpu.address_space<workgroup>>
  }
  return
}

// CHECK-LABEL: func.func @make_tensor
// CHECK: tile.make_tensor %{{.*}}(%{{.*}}) : memref<?x64xf16>
// CHECK: tile.make_tensor %{{.*}}() : memref<128xi32>
func.func @make_tensor(%ptrs: memref<4xi64>, %m: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = memref.load %ptrs[%bx] : memref<4xi64>
    %t = tile.make_tensor %a(%m) : memref<?x64xf16>
    %u = tile.make_tensor %a() : memref<128xi32>
  }
  return
}

// CHECK-LABEL: func.func @pipeline_ops
// CHECK: %[[PIPE:.*]] = tile.pipeline stages = 3, consumers = 256 : !tile.pipeline
// CHECK: tile.producer_acquire %[[PIPE]][%{{.*}}] : !tile.pipeline
// CHECK: tile.tma_load %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}, %[[PIPE]][%{{.*}}] : memref<64x128xf16, #gpu.address_space<workgroup>>, !tile.pipeline
// CHECK: tile.consumer_wait %[[PIPE]][%{{.*}}] : !tile.pipeline
// CHECK: tile.consumer_release %[[PIPE]][%{{.*}}] : !tile.pipeline
func.func @pipeline_ops(%B: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<3x64x128xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 3, consumers = 256 : !tile.pipeline
    %map = tile.tensor_map %B {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    %view = tile.stage %all[%c1] : memref<3x64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.producer_acquire %pipe[%k] : !tile.pipeline
    tile.tma_load %map[%k, %c0] to %view, %pipe[%k] : memref<64x128xf16, #gpu.address_space<workgroup>>, !tile.pipeline
    tile.consumer_wait %pipe[%k] : !tile.pipeline
    tile.consumer_release %pipe[%k] : !tile.pipeline
  }
  return
}

// CHECK-LABEL: func.func @semaphore_ops
// CHECK: tile.semaphore_signal %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: tile.semaphore_wait %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: tile.semaphore_signal %{{.*}}[%{{.*}}] {level = 2 : i32} : memref<?xi32>
// CHECK: tile.semaphore_wait %{{.*}}[%{{.*}}] count %{{.*}} {level = 2 : i32} : memref<?xi32>
func.func @semaphore_ops(%flags: memref<?xi32>, %i: index, %n: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.semaphore_signal %flags[%i] : memref<?xi32>
    tile.semaphore_wait %flags[%bx] : memref<?xi32>
    tile.semaphore_signal %flags[%i] {level = 2 : i32} : memref<?xi32>
    tile.semaphore_wait %flags[%i] count %n {level = 2 : i32} : memref<?xi32>
  }
  return
}

// CHECK-LABEL: func.func @warp_groups_and_barriers
// CHECK: %[[BARS:.*]] = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: tile.init_barriers %[[BARS]] counts = [128, 256] : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: tile.ws warpgroups = [1] {
// CHECK:   tile.barrier_wait %[[BARS]][%{{.*}}], %{{.*}} : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK:   tile.fill
// CHECK:   tile.barrier_arrive %[[BARS]][%{{.*}}] : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: }
// CHECK: tile.ws warpgroups = [0, 1] {
func.func @warp_groups_and_barriers(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 256] : memref<2xi64, #gpu.address_space<workgroup>>
    %acc = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %zero = arith.constant 0.0 : f32
    tile.ws warpgroups = [1] {
      tile.barrier_wait %bars[%c0], %k : memref<2xi64, #gpu.address_space<workgroup>>
      tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    }
    tile.ws warpgroups = [0, 1] {
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}

// CHECK-LABEL: func.func @warp_bodies
// CHECK: tile.ws warps = [0] {
// CHECK:   tile.fill
// CHECK: }
// CHECK: tile.ws warps = [1, 2] {
func.func @warp_bodies() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 96 {
    %row = tile.alloc_fragment : memref<32xf32, #tile.space<fragment>>
    %wide = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    %zero = arith.constant 0.0 : f32
    tile.ws warps = [0] {
      tile.fill %row, %zero : memref<32xf32, #tile.space<fragment>>, f32
    }
    tile.ws warps = [1, 2] {
      tile.fill %wide, %zero : memref<64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}

// CHECK-LABEL: func.func @partials_ops
// CHECK: tile.store_partials %[[ACC:.*]] to %{{.*}}[%{{.*}}] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
// CHECK: tile.add_partials %{{.*}}[%{{.*}}] to %[[ACC]] : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
// CHECK: tile.reduce_partials %{{.*}}[%{{.*}}] count %{{.*}} slice %{{.*}} : memref<?x8192xf32>
// CHECK: tile.add_partials %{{.*}}[%{{.*}}] count %{{.*}} to %[[ACC]] : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
func.func @partials_ops(%partials: memref<?x8192xf32>, %i: index, %n: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.store_partials %acc to %partials[%i] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
    tile.add_partials %partials[%bx] to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
    tile.reduce_partials %partials[%i] count %n slice %bx : memref<?x8192xf32>
    tile.add_partials %partials[%i] count %n to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

// 64-byte rows (K tiles of 32 f16) with the 64-byte swizzle.
// CHECK-LABEL: func.func @tma_load_64_byte_rows
// CHECK: tile.tensor_map %{{.*}} {box = array<i64: 128, 32>, swizzle = 64 : i64}
// CHECK: tile.tma_load %{{.*}}[%{{.*}}, %{{.*}}] to %{{.*}}, %{{.*}}[%{{.*}}] : memref<128x32xf16, #gpu.address_space<workgroup>>, !tile.pipeline
func.func @tma_load_64_byte_rows(%A: memref<1024x1024xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = #tile.swizzle<bits = 2, base = 4, shift = 3>>} : memref<2x128x32xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %map = tile.tensor_map %A {box = array<i64: 128, 32>, swizzle = 64} : memref<1024x1024xf16> -> !llvm.ptr
    %view = tile.stage %all[%c1] : memref<2x128x32xf16, #gpu.address_space<workgroup>> to memref<128x32xf16, #gpu.address_space<workgroup>>
    tile.producer_acquire %pipe[%k] : !tile.pipeline
    tile.tma_load %map[%c0, %k] to %view, %pipe[%k] : memref<128x32xf16, #gpu.address_space<workgroup>>, !tile.pipeline
    tile.consumer_wait %pipe[%k] : !tile.pipeline
    tile.consumer_release %pipe[%k] : !tile.pipeline
  }
  return
}

// CHECK-LABEL: func.func @stage_and_async_copy
// CHECK: %[[ALL:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[ONE:.*]] = tile.stage %[[ALL]][%{{.*}}] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] to %[[ONE]][%{{.*}}, %{{.*}}] [64, 32] {async} : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
func.func @stage_and_async_copy(%A: memref<?x?xf16>, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %one = tile.stage %all[%s] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %one[%c0, %c0] [64, 32] {async} : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// CHECK-LABEL: func.func @predicated_async_copy
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [64, 32] if %{{.*}} {async} : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
func.func @predicated_async_copy(%A: memref<?x?xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] if %p {async} : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

//===----------------------------------------------------------------------===//
// #tile.target and #tile.mma
//===----------------------------------------------------------------------===//

// The short form lists only the architecture; narrowed features and lowered
// limits print beside it.
// CHECK: module @targets attributes {tile.target = #tile.target<"sm_90a">}
// CHECK: module @narrowed attributes {tile.target = #tile.target<"sm_90", features = [cp_async, mma_sync], shared = 49152, registers = 128, block_registers = 32768>}
// CHECK: module @ampere attributes {tile.target = #tile.target<"sm_80">}
// CHECK: module @no_wgmma attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync, tma, cluster, vector_reduce, fp8_convert]>}
// CHECK: module @ada attributes {tile.target = #tile.target<"sm_89">}
module @targets attributes {tile.target = #tile.target<"sm_90a">} {}
module @narrowed attributes {tile.target = #tile.target<"sm_90", features = [mma_sync, cp_async], shared = 49152, registers = 128, block_registers = 32768>} {}
module @ampere attributes {tile.target = #tile.target<"sm_80", features = [cp_async, mma_sync]>} {}
module @no_wgmma attributes {tile.target = #tile.target<"sm_90a", features = [fp8_convert, vector_reduce, cluster, tma, mma_sync, cp_async]>} {}
module @ada attributes {tile.target = #tile.target<"sm_89", features = [cp_async, mma_sync, fp8_convert]>} {}

// CHECK-LABEL: func.func @gemm_with_mma
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 0>, transpose_b, wg_wait = 0 : i64}
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 4, a = registers, depth = 0>}
func.func @gemm_with_mma() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    %af = tile.alloc_fragment : memref<128x64xf16, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b, wg_wait = 0 : i64, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 0>} : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %af, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 4, a = registers, depth = 0>} : memref<128x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
  }
  return
}

// Two warpgroups side by side along N: each holds 64 rows x 64 columns.
// CHECK-LABEL: func.func @gemm_warpgroups_along_n
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>, transpose_b}
func.func @gemm_warpgroups_along_n() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}

//===----------------------------------------------------------------------===//
// TMA descriptors and shared addresses
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @tma_addresses
// CHECK: tile.tensor_map %{{.*}} {box = array<i64: 128, 64>, swizzle = 128 : i64} : memref<?x4096xf16> -> !llvm.ptr
// CHECK: tile.tensor_map %{{.*}} {box = array<i64: 1, 64, 1, 64>, swizzle = 128 : i64} : memref<?x1024x8x128xbf16> -> !llvm.ptr
// CHECK: tile.tensor_map %{{.*}} {box = array<i64: 1, 64, 1, 64>, swizzle = 128 : i64} : memref<2x?x8x128xbf16> -> !llvm.ptr
// CHECK: tile.shared_ptr %{{.*}}[%{{.*}}] : memref<4xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
// CHECK: tile.shared_ptr %{{.*}}[%{{.*}}, %{{.*}}] : memref<128x64xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
func.func @tma_addresses(%A: memref<?x4096xf16>, %Q: memref<?x1024x8x128xbf16>, %S: memref<2x?x8x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %m = tile.tensor_map %A {box = array<i64: 128, 64>, swizzle = 128} : memref<?x4096xf16> -> !llvm.ptr
    %q = tile.tensor_map %Q {box = array<i64: 1, 64, 1, 64>, swizzle = 128} : memref<?x1024x8x128xbf16> -> !llvm.ptr
    // A dynamic sequence length inside: its stride (8 x 128 bf16) is a multiple of 16 bytes.
    %sq = tile.tensor_map %S {box = array<i64: 1, 64, 1, 64>, swizzle = 128} : memref<2x?x8x128xbf16> -> !llvm.ptr
    %bars = tile.alloc_shared : memref<4xi64, #gpu.address_space<workgroup>>
    %p = tile.shared_ptr %bars[%c1] : memref<4xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    %s = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %d = tile.shared_ptr %s[%c0, %c0] : memref<128x64xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
  }
  return
}

// CHECK-LABEL: func.func @views
// CHECK: %[[S:.*]] = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK: %[[FLAT:.*]] = tile.view %[[S]] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK: tile.view %[[FLAT]] : memref<8192xf16, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
func.func @views() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %s : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<8192xf16, #gpu.address_space<workgroup>>
    %words = tile.view %flat : memref<8192xf16, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
  }
  return
}

// CHECK-LABEL: func.func @fragment_views
// CHECK: %[[F:.*]] = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
// CHECK: %[[H:.*]] = tile.view %[[F]] : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
// CHECK: tile.view %[[H]] : memref<64x4x32xf32, #tile.space<fragment>> to memref<8192xf32, #tile.space<fragment>>
func.func @fragment_views() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %heads = tile.view %f : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
    %flat = tile.view %heads : memref<64x4x32xf32, #tile.space<fragment>> to memref<8192xf32, #tile.space<fragment>>
  }
  return
}

// CHECK-LABEL: func.func @transpose_bytes
// CHECK: tile.transpose %{{.*}} to %{{.*}} : memref<128x256xf8E4M3FN, #gpu.address_space<workgroup>> to memref<256x128xf8E4M3FN, #gpu.address_space<workgroup>>
func.func @transpose_bytes() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %b = tile.alloc_shared : memref<128x256xf8E4M3FN, #gpu.address_space<workgroup>>
    %bt = tile.alloc_shared : memref<256x128xf8E4M3FN, #gpu.address_space<workgroup>>
    tile.transpose %b to %bt : memref<128x256xf8E4M3FN, #gpu.address_space<workgroup>> to memref<256x128xf8E4M3FN, #gpu.address_space<workgroup>>
  }
  return
}

// CHECK-LABEL: func.func @fragment_region_copy
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}] [4, 128] to %{{.*}}[%{{.*}}, %{{.*}}] [4, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<4x128xf32, #gpu.address_space<workgroup>>
func.func @fragment_region_copy() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %s = tile.alloc_shared : memref<4x128xf32, #gpu.address_space<workgroup>>
    tile.copy %f[%c0, %c0] [4, 128] to %s[%c0, %c0] [4, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<4x128xf32, #gpu.address_space<workgroup>>
  }
  return
}
