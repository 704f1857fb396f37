// RUN: tlc-opt %s -split-input-file -tile-swizzle-shared-memory | FileCheck %s

// 64-byte rows (32 x f16) take 2 bits, 256-byte rows (128 x f16) 3 bits
// from shift 4 (the row bits start at bit 8).
// CHECK-LABEL: func.func @operands
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>} : memref<128x32xf16
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 4>>} : memref<32x128xf16
// A buffer no gemm reads is left alone.
// CHECK: tile.alloc_shared : memref<32x128xf16
func.func @operands() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %other = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Through tile.stage to the multi-buffered allocation; 128-byte rows.
// CHECK-LABEL: func.func @staged
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16
func.func @staged(%i: index) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a2 = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %a = tile.stage %a2[%i] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// An annotated swizzle is kept; 16-byte rows need none.
// CHECK-LABEL: func.func @kept
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 1, base = 4, shift = 3>>} : memref<64x64xf16
// CHECK: tile.alloc_shared : memref<64x8xf16
func.func @kept() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %a = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 1, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x8xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x8xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_a} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x8xf16, #gpu.address_space<workgroup>>, memref<64x8xf32, #tile.space<fragment>>
  }
  return
}

// -----

// An N-major wgmma B operand stored as 64-column blocks (#tile.shared
// column_block, from tile-select-mma) has 128-byte rows within each block: the
// 128-byte swizzle, whatever the logical row length (here 512 bytes).
// CHECK-LABEL: func.func @column_blocks
// CHECK: tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x256xf16
func.func @column_blocks() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x256xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x256xf16, #gpu.address_space<workgroup>>, memref<128x256xf32, #tile.space<fragment>>
  }
  return
}

// -----

// An epilogue tile an accumulator is stored into gets the swizzle of its
// row length (the stores of 8 rows at once would share banks); a shared
// tile only copied between global buffers does not.
// CHECK-LABEL: func.func @epilogue
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 4>>} : memref<64x128xf16
// CHECK: tile.alloc_shared : memref<64x128xf16
func.func @epilogue(%C: memref<64x128xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %o = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.copy %acc[%c0, %c0] [64, 128] to %o[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.copy %o[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16>
    tile.copy %C[%c0, %c0] [64, 128] to %t[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.copy %t[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16>
  }
  return
}

// -----

// A viewed buffer that no gemm reads keeps its plain row-major layout, which
// makes the view's addressing plain too: an accumulator stored into it is
// not swizzled.
// CHECK-LABEL: func.func @viewed
// CHECK: tile.alloc_shared : memref<64x64xf32
func.func @viewed() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf32, #gpu.address_space<workgroup>>
    %flat = tile.view %s : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<4096xf32, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A gemm operand is swizzled even where a view names it (the view addresses
// its bytes through the swizzle).
// CHECK-LABEL: func.func @viewed_operand
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16
// CHECK: tile.view %[[B]]
func.func @viewed_operand() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %words = tile.view %b : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
