// RUN: tlc-opt %s -split-input-file -tile-allocate-shared-memory -verify-diagnostics | FileCheck %s

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
// CHECK: tile.alloc_shared {offset = 1024 : i64, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>}
func.func @swizzled() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<4xf32, #gpu.address_space<workgroup>>
    %a = tile.alloc_shared {swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>} : memref<64x64xf16, #gpu.address_space<workgroup>>
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
