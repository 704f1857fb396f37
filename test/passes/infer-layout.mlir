// RUN: tlc-opt %s -split-input-file -tile-infer-layout -verify-diagnostics | FileCheck %s

// A 32x128 f32 fragment over 128 threads: four f32 (16 bytes) per run,
// consecutive threads on consecutive runs; the loop takes the same layout.
// CHECK-LABEL: func.func @blocked_f32
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [32, 128] attributes {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128
func.func @blocked_f32(%A: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [32, 128] to %f[%c0, %c0] [32, 128] : memref<64x128xf32> to memref<32x128xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [32, 128] {
      %x = memref.load %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
      memref.store %x, %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Copied to f16, the f32 fragment gets 8-element runs: 16 bytes of f16.
// CHECK-LABEL: func.func @narrowest_partner
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 128
func.func @narrowest_partner(%C: memref<32x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [32, 128] to %C[%c0, %c0] [32, 128] : memref<32x128xf32, #tile.space<fragment>> to memref<32x128xf16>
  }
  return
}

// -----

// Fewer elements than threads: every element is held by 128 / 64 threads.
// CHECK-LABEL: func.func @replicated
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 mod 64)>}
func.func @replicated() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A loop that touches no fragment spreads its iterations one per thread.
// CHECK-LABEL: func.func @no_fragment
// CHECK: tile.parallel (%{{.*}}) in [256] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d1 * 128 + d0)>}
func.func @no_fragment(%A: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [256] {
      memref.store %one, %A[%i] : memref<256xf32>
    }
  }
  return
}

// -----

// A layout the program gives is kept.
// CHECK-LABEL: func.func @given_layout
// CHECK: tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>}
func.func @given_layout() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @uneven() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-error @+1 {{'tile.alloc_fragment' op has no layout for 128 threads: 1000 elements cannot be spread evenly over 128 threads (make the tile a multiple of the thread count, or a divisor of it)}}
    %f = tile.alloc_fragment : memref<1000xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @shifted_index() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    tile.parallel (%i) in [128] {
      %k = arith.addi %i, %c1 : index
      // expected-error @+1 {{'memref.load' op indexes a fragment of shape 'memref<128xf32, #tile.space<fragment>>' with other than the loop's own indices; a parallel loop over a fragment must index it by (i, j, ...) exactly, with the loop's shape}}
      %x = memref.load %f[%k] : memref<128xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

func.func @conflicting_layouts() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
    %g = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (31 - d0)>} : memref<32xf32, #tile.space<fragment>>
    tile.parallel (%i) in [32] {
      // expected-note @+1 {{the other fragment's access}}
      %x = memref.load %f[%i] : memref<32xf32, #tile.space<fragment>>
      // expected-error @+1 {{'memref.store' op reads or writes a fragment whose layout differs from another fragment in the same parallel loop}}
      memref.store %x, %g[%i] : memref<32xf32, #tile.space<fragment>>
    }
  }
  return
}
