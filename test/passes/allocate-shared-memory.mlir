// RUN: tlc-opt %s -split-input-file --tile-target=sm_90 -tile-allocate-shared-memory -verify-diagnostics | FileCheck %s

// Buffers are packed at 128-byte aligned offsets; the kernel records the total.
// CHECK-LABEL: func.func @two_buffers
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 attributes {tile.shared_bytes = 8320 : i64}
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16
// CHECK: tile.alloc_shared {offset = 4096 : i64} : memref<2xf32
// CHECK: tile.alloc_shared {offset = 4224 : i64} : memref<32x64xf16
func.func @two_buffers() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_shared : memref<2xf32, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A swizzled buffer starts on a 1024-byte boundary.
// CHECK-LABEL: func.func @swizzled
// CHECK: tile.alloc_shared {offset = 0 : i64}
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 1024 : i64}
func.func @swizzled() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<4xf32, #gpu.address_space<workgroup>>
    %a = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A kernel with no shared buffer needs none.
// CHECK-LABEL: func.func @none
// CHECK: attributes {tile.shared_bytes = 0 : i64}
func.func @none() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
  }
  return
}

// -----

func.func @over_budget() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{the kernel needs 262144 bytes of shared memory but the target allows 232448 per block}}
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-note @+1 {{131072 bytes for this 'memref<256x256xf16, #gpu.address_space<workgroup>>' buffer}}
    %a = tile.alloc_shared : memref<256x256xf16, #gpu.address_space<workgroup>>
    // expected-note @+1 {{131072 bytes for this 'memref<256x256xf16, #gpu.address_space<workgroup>>' buffer}}
    %b = tile.alloc_shared : memref<256x256xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A reduction whose rows span two warps gets shared scratch after the
// buffers: 8 rows x 2 warp groups x 4 bytes.
// CHECK-LABEL: func.func @reduce_scratch
// CHECK: attributes {tile.shared_bytes = 4160 : i64}
// CHECK: tile.reduce {{.*}} tile.scratch_offset = 4096 : i64
func.func @reduce_scratch() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<1024xf32, #gpu.address_space<workgroup>>
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.reduce %x to %m {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A reduction's scratch gets bytes of its own where the budget has room,
// though a buffer whose lifetime ended before it would leave it bytes to
// share (shared, it would need barriers against that buffer's accesses).
// CHECK-LABEL: func.func @scratch_own_bytes
// CHECK: attributes {tile.shared_bytes = 4160 : i64}
// CHECK: tile.reduce {{.*}} tile.scratch_offset = 4096 : i64
func.func @scratch_own_bytes(%v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<1024xf32, #gpu.address_space<workgroup>>
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.fill %s, %v : memref<1024xf32, #gpu.address_space<workgroup>>, f32
    tile.reduce %x to %m {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Where the kernel would not fit so, the scratch shares the bytes of a
// buffer no longer in use: sm_90's 232448 bytes are all the buffer's.
// CHECK-LABEL: func.func @scratch_shares_when_tight
// CHECK: attributes {tile.shared_bytes = 232448 : i64}
// CHECK: tile.reduce {{.*}} tile.scratch_offset = 0 : i64
func.func @scratch_shares_when_tight(%v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<58112xf32, #gpu.address_space<workgroup>>
    %x = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.fill %s, %v : memref<58112xf32, #gpu.address_space<workgroup>>, f32
    tile.reduce %x to %m {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A 64x64 f32 accumulator holds runs of 2 (8 bytes): its copy to global
// memory is staged through a shared buffer (after the operands, 1024-byte
// aligned) so the block stores 16-byte vectors.
// CHECK-LABEL: func.func @staged_store
// CHECK: attributes {tile.shared_bytes = 24576 : i64}
// CHECK: tile.copy {{.*}} {tile.staging_offset = 8192 : i64}
func.func @staged_store(%C: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Staging that would not fit the budget is left out: the copy stores
// directly. (128x256 f32 staging = 128 KiB on top of 128 KiB of buffers.)
// CHECK-LABEL: func.func @no_room
// CHECK-NOT: tile.staging_offset
func.func @no_room(%C: memref<128x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %big = tile.alloc_shared : memref<256x256xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 256, map = (d0, d1) -> (d1 floordiv 2, d0 * 2 + d1 mod 2)>} : memref<128x256xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [128, 256] to %C[%c0, %c0] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<128x256xf32>
  }
  return
}

// -----

// A copy between fragments whose layouts differ (a Square-policy accumulator
// into an A operand replicated over a row block's warps) converts through
// shared memory: 64x64 f16 = 8 KiB after the buffers, 1024-byte aligned.
// It is needed, so it counts like a buffer; over the budget it is named.
// CHECK-LABEL: func.func @conversion
// CHECK: attributes {tile.shared_bytes = 12288 : i64}
// CHECK: tile.copy {{.*}} {tile.staging_offset = 4096 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
func.func @conversion() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %v = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + (((d1 mod 8) floordiv 2) mod 2) * 8, ((d1 floordiv 8) mod 4) * 16 + (d0 mod 4) * 2 + d1 mod 2 + ((d1 mod 8) floordiv 4) * 8)>} : memref<64x64xf16, #tile.space<fragment>>
    tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
  }
  return
}

// -----

// A conversion whose elements all stay in their warps (a row vector held by
// four consecutive lanes per row, read by lanes eight apart) moves by warp
// shuffles: no staging, no shared memory.
// CHECK-LABEL: func.func @conversion_in_warps
// CHECK: attributes {tile.shared_bytes = 0 : i64}
// CHECK-NOT: tile.staging_offset
// CHECK: return
func.func @conversion_in_warps() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 64 {
    %a = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0 floordiv 4)>} : memref<16xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> ((d0 floordiv 32) * 8 + d0 mod 8)>} : memref<16xf32, #tile.space<fragment>>
    tile.copy %a[%c0] [16] to %b[%c0] [16] : memref<16xf32, #tile.space<fragment>> to memref<16xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Inside each warp but with each lane needing another source register (four
// contiguous columns a thread, then one column a thread: a transpose of 4 x 4
// blocks), and on a 16-thread block: both through shared memory.
// CHECK-LABEL: func.func @conversion_not_by_shuffles
// CHECK: tile.copy {{.*}} {tile.staging_offset = 0 : i64} : memref<16x16xf32
// CHECK: tile.copy {{.*}} {tile.staging_offset = 0 : i64} : memref<16xf32
func.func @conversion_not_by_shuffles() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 64 {
    %a = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 4, map = (d0, d1) -> (d0 floordiv 4, (d0 mod 4) * 4 + d1)>} : memref<16x16xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 4, map = (d0, d1) -> ((d0 floordiv 32) * 8 + d1 * 2 + (d0 mod 32) floordiv 16, d0 mod 16)>} : memref<16x16xf32, #tile.space<fragment>>
    tile.copy %a[%c0, %c0] [16, 16] to %b[%c0, %c0] [16, 16] : memref<16x16xf32, #tile.space<fragment>> to memref<16x16xf32, #tile.space<fragment>>
  }
  tile.kernel blocks(%bx) in (%c1) threads = 16 {
    %a = tile.alloc_fragment {layout = #tile.layout<threads = 16, regs = 1, map = (d0, d1) -> (d0)>} : memref<16xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment {layout = #tile.layout<threads = 16, regs = 1, map = (d0, d1) -> (15 - d0)>} : memref<16xf32, #tile.space<fragment>>
    tile.copy %a[%c0] [16] to %b[%c0] [16] : memref<16xf32, #tile.space<fragment>> to memref<16xf32, #tile.space<fragment>>
  }
  return
}

// -----

// The same conversion beside a buffer that leaves no room for it.
func.func @conversion_over_budget() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{the kernel needs 233472 bytes of shared memory but the target allows 232448 per block}}
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    // expected-note @+1 {{225280 bytes for this 'memref<110x1024xf16, #gpu.address_space<workgroup>>' buffer}}
    %v = tile.alloc_shared : memref<110x1024xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + (((d1 mod 8) floordiv 2) mod 2) * 8, ((d1 floordiv 8) mod 4) * 16 + (d0 mod 4) * 2 + d1 mod 2 + ((d1 mod 8) floordiv 4) * 8)>} : memref<64x64xf16, #tile.space<fragment>>
    // expected-note @+1 {{8192 bytes to convert the layout of this fragment copy}}
    tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
  }
  return
}

// -----

// Buffers in use at different times share bytes: %a is read for the last
// time by the first copy, %b first written after it; %c is in use across
// both and keeps its own. A buffer used only inside a loop ends with the
// loop. The kernel needs the largest set in use at once.
// CHECK-LABEL: func.func @reuse
// CHECK: tile.kernel {{.*}} attributes {tile.shared_bytes = 16384 : i64}
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<32x64xf16
// CHECK: tile.alloc_shared {offset = 4096 : i64} : memref<32x64xf32
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<32x64xf16
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x64xf32
func.func @reuse(%A: memref<32x64xf16>, %B: memref<32x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %d = tile.alloc_shared : memref<64x64xf32, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [32, 64] to %a[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.fill %c, %f0 : memref<32x64xf32, #gpu.address_space<workgroup>>, f32
    tile.copy %a[%c0, %c0] [32, 64] to %A[%c0, %c0] [32, 64] : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16>
    scf.for %i = %c0 to %n step %c1 {
      tile.copy %A[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.copy %b[%c0, %c0] [32, 64] to %A[%c0, %c0] [32, 64] : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16>
    }
    tile.copy %c[%c0, %c0] [32, 64] to %B[%c0, %c0] [32, 64] : memref<32x64xf32, #gpu.address_space<workgroup>> to memref<32x64xf32>
    tile.fill %d, %f0 : memref<64x64xf32, #gpu.address_space<workgroup>>, f32
  }
  return
}

// -----

// What runs at once keeps apart: buffers of the two branches of an scf.if
// (the two roles of a warp-specialized kernel are such branches); the
// destination of an asynchronous copy keeps its bytes for the whole kernel.
// A buffer used after the branch reuses the first branch's bytes.
// CHECK-LABEL: func.func @no_reuse
// CHECK: tile.alloc_shared {offset = 0 : i64}
// CHECK: tile.alloc_shared {offset = 4096 : i64}
// CHECK: tile.alloc_shared {offset = 8192 : i64}
// CHECK: tile.alloc_shared {offset = 0 : i64}
func.func @no_reuse(%A: memref<32x64xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %t = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %e = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %async = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %later = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    scf.if %p {
      tile.copy %A[%c0, %c0] [32, 64] to %t[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    } else {
      tile.copy %A[%c0, %c0] [32, 64] to %e[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    }
    tile.copy %A[%c0, %c0] [32, 64] to %async[%c0, %c0] [32, 64] {async} : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [32, 64] to %later[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A wgmma chain (tile-select-mma: depth -1 onto the same accumulator, then
// a gemm that waits) reads its operands until its last gemm: %q and %k are
// free after it and %o takes their bytes; a gemm left pending otherwise (its
// wait elsewhere, %r) keeps its operands pinned.
// CHECK-LABEL: func.func @chain_lifetime
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16
// CHECK: tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x128xf16
// CHECK: tile.alloc_shared {offset = 16384 : i64} : memref<64x64xf16
func.func @chain_lifetime(%O: memref<64x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %r = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.fill %q, %h0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.fill %k, %h0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.fill %r, %h0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.gemm %q, %k, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %r, %r, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma %s {pending = 0 : i64} : memref<64x64xf32, #tile.space<fragment>>
    tile.fill %o, %h0 : memref<64x128xf16, #gpu.address_space<workgroup>>, f16
    tile.copy %o[%c0, %c0] [64, 128] to %O[%c0, %c0] [64, 128] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16>
  }
  return
}

// -----

// The same across a wait on one of the program's mbarriers between the
// chain's gemms: %q and %k are free after the second gemm, %o takes their
// bytes.
// CHECK-LABEL: func.func @chain_lifetime_past_barrier_wait
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16
// CHECK: tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x128xf16
func.func @chain_lifetime_past_barrier_wait(%O: memref<64x128xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.fill %q, %h0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.fill %k, %h0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.gemm %q, %k, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.barrier_wait %bars[%c0], %i : memref<1xi64, #gpu.address_space<workgroup>>
    tile.gemm %q, %k, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.fill %o, %h0 : memref<64x128xf16, #gpu.address_space<workgroup>>, f16
    tile.copy %o[%c0, %c0] [64, 128] to %O[%c0, %c0] [64, 128] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16>
  }
  return
}

// -----

// A TMA-stored tile has an ordinary lifetime (tile-insert-barriers waits for
// the store's read before the bytes are written again): %later takes the
// bytes of %o once its store is issued.
// CHECK-LABEL: func.func @tma_store_lifetime
// CHECK: tile.alloc_shared {layout = {{.*}}, offset = 0 : i64} : memref<64x64xf16
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16
func.func @tma_store_lifetime(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<4096x4096xf16> -> !llvm.ptr
    %o = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %later = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.fill %o, %f0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.tma_store %o to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.fill %later, %f0 : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
  }
  return
}

// -----

// A view's accesses are its allocation's: %a is read through its flat view
// after %b is filled, so the two stay apart; %d, used after that, reuses
// %a's bytes.
// CHECK-LABEL: func.func @view_lifetime
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<32x64xf16
// CHECK: tile.view
// CHECK: tile.alloc_shared {offset = 4096 : i64} : memref<32x64xf16
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<32x64xf16
func.func @view_lifetime(%A: memref<32x64xf16>, %F: memref<2048xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h0 = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %a : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %d = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [32, 64] to %a[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.fill %b, %h0 : memref<32x64xf16, #gpu.address_space<workgroup>>, f16
    tile.copy %flat[%c0] [2048] to %F[%c0] [2048] : memref<2048xf16, #gpu.address_space<workgroup>> to memref<2048xf16>
    tile.copy %b[%c0, %c0] [32, 64] to %A[%c0, %c0] [32, 64] : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16>
    tile.fill %d, %h0 : memref<32x64xf16, #gpu.address_space<workgroup>>, f16
  }
  return
}

// -----

// A drained cp.async pipeline's stages (tile-pipeline-loops: the wait for
// all groups and the barrier right after the loop) are free after that
// barrier: the output tile staged after the loop takes the same bytes. The
// same stages without tile.drained keep theirs for the whole kernel.
// CHECK-LABEL: func.func @drained_stages
// CHECK: tile.kernel {{.*}} attributes {tile.shared_bytes = 8192 : i64}
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 2>, offset = 0 : i64, tile.drained}
// CHECK: tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16
// CHECK-LABEL: func.func @undrained_stages
// CHECK: tile.kernel {{.*}} attributes {tile.shared_bytes = 12288 : i64}
func.func @drained_stages(%A: memref<256x256xf16>, %C: memref<64x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>, tile.drained} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
    %out = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s0 = tile.stage %all[%c0] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s0[%c0, %c0] [64, 32] if %true {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    scf.for %k = %c0 to %n step %c1 {
      nvvm.cp.async.wait.group 0
      gpu.barrier
      %s = tile.stage %all[%c0] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %s[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
    } {tile.num_stages = 2 : i64}
    nvvm.cp.async.wait.group 0
    gpu.barrier
    tile.copy %A[%c0, %c0] [64, 32] to %out[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %out[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
  }
  return
}
func.func @undrained_stages(%A: memref<256x256xf16>, %C: memref<64x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
    %out = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %s0 = tile.stage %all[%c0] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s0[%c0, %c0] [64, 32] if %true {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.wait.group 0
    gpu.barrier
    tile.copy %A[%c0, %c0] [64, 32] to %out[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %out[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
  }
  return
}
