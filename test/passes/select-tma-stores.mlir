// RUN: tlc-opt %s -split-input-file -tile-select-tma-stores -verify-diagnostics | FileCheck %s

// sm_90a: the epilogue staged through shared memory in a persistent loop
// over tiles leaves by TMA. The tile gets 128-byte column blocks with the
// 128-byte swizzle, the tensor a map whose box is one 128 x 64 column block,
// at the top of the kernel.
// CHECK-LABEL: func.func @staged_epilogue
// CHECK: tile.kernel
// CHECK-NEXT: %[[MAP:.*]] = tile.tensor_map %{{.*}} {box = array<i64: 128, 64>, swizzle = 128 : i64} : memref<4096x4096xf16> -> !llvm.ptr
// CHECK: %[[S:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<128x256xf16, #gpu.address_space<workgroup>>
// CHECK: tile.copy %{{.*}} to %[[S]]
// CHECK-NEXT: tile.tma_store %[[S]] to %[[MAP]][%{{.*}}, %{{.*}}] : memref<128x256xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: tile.copy
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @staged_epilogue(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx, %by) in (%c32, %c32) threads = 256 {
    %f = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    %s = tile.alloc_shared : memref<128x256xf16, #gpu.address_space<workgroup>>
    scf.for %t = %bx to %c32 step %c32 {
      %i = arith.muli %by, %c128 : index
      %j = arith.muli %t, %c256 : index
      tile.copy %f[%c0, %c0] [128, 256] to %s[%c0, %c0] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<128x256xf16, #gpu.address_space<workgroup>>
      tile.copy %s[%c0, %c0] [128, 256] to %C[%i, %j] [128, 256] : memref<128x256xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
    }
  }
  return
}
}

// -----

// fp32 tiles: column blocks of 32 elements; one 64-wide row of a 4-d tensor
// ([batch, seq, heads, dim] with a dynamic sequence length): the box keeps
// the unit dimensions, and a tile exactly one block wide needs no column
// blocks.
// CHECK-LABEL: func.func @f32_and_4d
// CHECK-DAG: tile.tensor_map %{{.*}} {box = array<i64: 64, 32>, swizzle = 128 : i64} : memref<1024x1024xf32>
// CHECK-DAG: tile.tensor_map %{{.*}} {box = array<i64: 1, 64, 1, 64>, swizzle = 128 : i64} : memref<8x?x32x64xf16>
// CHECK-DAG: tile.alloc_shared {layout = #tile.shared<column_block = 32, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x128xf32
// CHECK-DAG: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16
// CHECK-COUNT-2: tile.tma_store
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @f32_and_4d(%C: memref<1024x1024xf32>, %O: memref<8x?x32x64xf16>, %b: index, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x128xf32, #gpu.address_space<workgroup>>
    %o = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    scf.for %t = %c0 to %b step %c1 {
      tile.copy %s[%c0, %c0] [64, 128] to %C[%t, %c0] [64, 128] : memref<64x128xf32, #gpu.address_space<workgroup>> to memref<1024x1024xf32>
      tile.copy %o[%c0, %c0] [64, 64] to %O[%t, %c0, %h, %c0] [1, 64, 1, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<8x?x32x64xf16>
    }
  }
  return
}
}

// -----

// A store that ends the kernel stays the threads': the block would wait for
// the TMA unit's read before it exits, with nothing to overlap it with.
// CHECK-LABEL: func.func @ends_the_kernel
// CHECK-NOT: tile.tma_store
// CHECK: tile.copy
// CHECK-NOT: tile.tma_store
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @ends_the_kernel(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %s[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
  }
  return
}
}

// -----

// Copies that stay as they are: on a target without TMA; a part of the tile;
// a tensor whose rows are not 16-byte multiples; converted elements;
// disable_tma; fewer than 8 rows; a tensor the kernel also reads
// (the store would land after the read); a tile already laid out otherwise
// (64-column blocks of an fp32 tile).
// CHECK-LABEL: func.func @no_tma
// CHECK-NOT: tile.tma_store
// CHECK-NOT: tile.tensor_map
// CHECK-NOT: column_block = 64
// CHECK: return
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @no_tma(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    scf.for %lp = %c0 to %c1 step %c1 {
      %s = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %s[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
    }
  }
  return
}
}

// -----

// CHECK-LABEL: func.func @not_fitting
// CHECK-NOT: tile.tma_store
// CHECK-NOT: tile.tensor_map
// CHECK: return
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @not_fitting(%C: memref<4096x4096xf16>, %D: memref<4096x4100xf16>, %E: memref<4096x4096xf32>, %R: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    scf.for %lp = %c0 to %c1 step %c1 {
      %s = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %s[%c0, %c0] [32, 64] to %C[%c0, %c0] [32, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
      %d = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %d[%c0, %c0] [64, 64] to %D[%c0, %c0] [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4100xf16>
      %e = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %e[%c0, %c0] [64, 64] to %E[%c0, %c0] [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf32>
      %t = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %t[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] {tile.disable_tma} : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
      %few = tile.alloc_shared : memref<4x64xf16, #gpu.address_space<workgroup>>
      tile.copy %few[%c0, %c0] [4, 64] to %C[%c0, %c0] [4, 64] : memref<4x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
      %r = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %R[%c0, %c0] [64, 64] to %r[%c0, %c0] [64, 64] : memref<4096x4096xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %r[%c0, %c0] [64, 64] to %R[%c0, %c0] [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
      %w = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf32, #gpu.address_space<workgroup>>
      tile.copy %w[%c0, %c0] [64, 128] to %E[%c0, %c0] [64, 128] : memref<64x128xf32, #gpu.address_space<workgroup>> to memref<4096x4096xf32>
    }
  }
  return
}
}

// -----

// A 1-d shared buffer (a row of reduction results) stays a copy.
// CHECK-LABEL: func.func @one_dimensional
// CHECK-NOT: tile.tma_store
// CHECK: tile.copy
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @one_dimensional(%C: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    scf.for %lp = %c0 to %c1 step %c1 {
      %s = tile.alloc_shared : memref<128xf32, #gpu.address_space<workgroup>>
      tile.copy %s[%c0] [128] to %C[%c0] [128] : memref<128xf32, #gpu.address_space<workgroup>> to memref<4096xf32>
    }
  }
  return
}
}

// -----

// An accumulator copied straight to the tensor (T.copy(C_local, C[...])) in a
// persistent loop: a shared tile of the tensor's element type is added for
// it, the fragment is copied (converted) into it and the tile stored by TMA.
// CHECK-LABEL: func.func @from_registers
// CHECK: %[[MAP:.*]] = tile.tensor_map %{{.*}} {box = array<i64: 128, 64>, swizzle = 128 : i64}
// CHECK: %[[F:.*]] = tile.alloc_fragment
// CHECK-NEXT: %[[S:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<128x256xf16, #gpu.address_space<workgroup>>
// CHECK: tile.copy %[[F]][%{{.*}}, %{{.*}}] [128, 256] to %[[S]][%{{.*}}, %{{.*}}] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<128x256xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: tile.tma_store %[[S]] to %[[MAP]]
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @from_registers(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx, %by) in (%c32, %c32) threads = 256 {
    %f = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    scf.for %t = %bx to %c32 step %c32 {
      %i = arith.muli %by, %c128 : index
      %j = arith.muli %t, %c256 : index
      tile.copy %f[%c0, %c0] [128, 256] to %C[%i, %j] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<4096x4096xf16>
    }
  }
  return
}
}

// -----

// No room for the tile beside the kernel's other buffers: the copy stays.
// CHECK-LABEL: func.func @from_registers_no_room
// CHECK-NOT: tile.tma_store
// CHECK: tile.copy %{{.*}} to %{{.*}} : memref<128x256xf32, #tile.space<fragment>> to memref<4096x4096xf16>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @from_registers_no_room(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c32) threads = 256 {
    %big = tile.alloc_shared : memref<192x512xf16, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    scf.for %t = %bx to %c32 step %c32 {
      tile.copy %f[%c0, %c0] [128, 256] to %C[%c0, %c0] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<4096x4096xf16>
    }
  }
  return
}
}

// -----

// The same store in two branches (stream-K's pieces and the plain persistent
// loop of a kernel that picks one at run time): both become TMA stores
// through one shared tile and one tensor map.
// CHECK-LABEL: func.func @twin_stores
// CHECK: %[[MAP:.*]] = tile.tensor_map
// CHECK-NOT: tile.tensor_map
// CHECK: %[[F:.*]] = tile.alloc_fragment
// CHECK-NEXT: %[[S:.*]] = tile.alloc_shared
// CHECK-NOT: tile.alloc_shared
// CHECK: scf.if
// CHECK: tile.copy %[[F]]{{.*}} to %[[S]]
// CHECK-NEXT: tile.tma_store %[[S]] to %[[MAP]]
// CHECK: } else {
// CHECK: tile.copy %[[F]]{{.*}} to %[[S]]
// CHECK-NEXT: tile.tma_store %[[S]] to %[[MAP]]
// CHECK-NOT: tile.copy
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @twin_stores(%C: memref<4096x4096xf16>, %shares: i1) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx, %by) in (%c32, %c32) threads = 256 {
    %f = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    scf.if %shares {
      scf.for %t = %bx to %c32 step %c32 {
        %i = arith.muli %by, %c128 : index
        %j = arith.muli %t, %c256 : index
        tile.copy %f[%c0, %c0] [128, 256] to %C[%i, %j] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<4096x4096xf16>
      }
    } else {
      scf.for %t = %bx to %c32 step %c32 {
        %i = arith.muli %by, %c128 : index
        %j = arith.muli %t, %c256 : index
        tile.copy %f[%c0, %c0] [128, 256] to %C[%i, %j] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<4096x4096xf16>
      }
    }
  }
  return
}
}

// -----

// T.atomic_add(C[...], s, use_tma=True) (a copy marked tile.tma_reduce_add):
// a TMA reduction wherever it is, even where it ends the kernel; the tile
// gets TMA's layout and the tensor a map of one column block.
// CHECK-LABEL: func.func @tma_add
// CHECK: %[[MAP:.*]] = tile.tensor_map %{{.*}} {box = array<i64: 64, 32>, swizzle = 128 : i64}
// CHECK: tile.alloc_shared {layout = #tile.shared<column_block = 32, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf32
// CHECK-NOT: tile.copy
// CHECK: tile.tma_store %{{.*}} to %[[MAP]][%{{.*}}, %{{.*}}] add
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tma_add(%C: memref<4096x4096xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf32, #gpu.address_space<workgroup>>
    tile.copy %s[%c0, %c0] [64, 64] to %C[%i, %c0] [64, 64] {tile.tma_reduce_add} : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<4096x4096xf32>
  }
  return
}
}

// -----

// One that cannot be (no TMA before sm_90) is an error, never a plain store.
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @tma_add_sm80(%C: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x64xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{is a T.atomic_add with use_tma=True that cannot be a TMA reduction: the target has no TMA (sm_90a has)}}
    tile.copy %s[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] {tile.tma_reduce_add} : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<4096x4096xf32>
  }
  return
}
}
