// RUN: tlc-opt %s -split-input-file -tile-select-mma -verify-diagnostics | FileCheck %s

// sm_80: mma.sync m16n8k16, 4 warps split 2 x 2 by the square policy.
// CHECK-LABEL: func.func @mma_sync_square
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @mma_sync_square() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// f32 operands (tf32) run on mma.sync m16n8k8, on sm_90a too (wgmma's tf32
// form is not used).
// CHECK-LABEL: func.func @mma_sync_tf32
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 8, warps_m = 2, warps_n = 2, a = shared, depth = 0>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @mma_sync_tf32() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// The same gemm on sm_90a runs on wgmma: one m64 row block per warpgroup, the
// whole N in one instruction, and B (K x N, N-major) kept as 64-column blocks.
// CHECK-LABEL: func.func @wgmma_nn
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>}
// CHECK: tile.gemm %{{.*}}, %[[B]], %{{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, wg_wait = 0 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @wgmma_nn() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {wg_wait = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// Fewer m64 row blocks than warpgroups: the warpgroups of a row block split N
// (MLA decode's 64-row tiles over two warpgroups), each a multiple of 64
// columns of an N-major B: one whose N-major B would split into 32-column
// halves stays on mma.sync. The FullRow policy allows no split along N
// (next case).
// CHECK-LABEL: func.func @warpgroups_along_n
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 32, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = mma_sync
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @warpgroups_along_n() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %bt = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %b64 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_col>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %bt, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b64, %s : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// FullRow with fewer rows than the warps can take whole (64 rows, 8
// warps): as TileLang, the rows' one m64 block goes to both warpgroups,
// which split N; on mma.sync, 4 warps along M and 2 along N.
// CHECK-LABEL: func.func @full_row_too_few_rows()
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 2
// CHECK-LABEL: func.func @full_row_too_few_rows_sm80
// CHECK: mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 2
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @full_row_too_few_rows() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}
}
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @full_row_too_few_rows_sm80() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// On sm_90a, a gemm wgmma cannot run (K rows of 96 bytes: neither whole
// 128-byte atoms nor one 64- or 32-byte one) stays on mma.sync, as does
// every gemm when the target's features leave wgmma out.
// CHECK-LABEL: func.func @narrow_k
// CHECK: mma = #tile.mma<kind = mma_sync
// CHECK-NOT: column_block
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @narrow_k() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x48xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<48x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x48xf16, #gpu.address_space<workgroup>>, memref<48x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// K tiles of 32 and 16 f16 (rows of one 64- or 32-byte swizzle atom) run on
// wgmma; an N-major B keeps its 64-column blocks.
// CHECK-LABEL: func.func @narrow_k_atoms
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @narrow_k_atoms() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %a16 = tile.alloc_shared : memref<64x16xf16, #gpu.address_space<workgroup>>
    %b16 = tile.alloc_shared : memref<64x16xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %c16 = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a16, %b16, %c16 {transpose_b} : memref<64x16xf16, #gpu.address_space<workgroup>>, memref<64x16xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// More m64 row blocks than warpgroups: each warpgroup takes consecutive
// ones (128 rows on one warpgroup, 256 on two), A from shared memory or
// registers; 192 rows on two warpgroups do not divide and stay on mma.sync.
// CHECK-LABEL: func.func @row_blocks_per_warpgroup
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = registers, depth = 0>
// CHECK-LABEL: func.func @row_blocks_two_warpgroups
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = mma_sync
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @row_blocks_per_warpgroup() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<128x128xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %s {clear_accum} : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
    tile.gemm %p, %v, %o : memref<128x128xf16, #tile.space<fragment>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
  }
  return
}
func.func @row_blocks_two_warpgroups() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<256x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<256x128xf32, #tile.space<fragment>>
    %a3 = tile.alloc_shared : memref<192x64xf16, #gpu.address_space<workgroup>>
    %c3 = tile.alloc_fragment : memref<192x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<256x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<256x128xf32, #tile.space<fragment>>
    tile.gemm %a3, %b, %c3 : memref<192x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<192x128xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// CHECK-LABEL: func.func @no_wgmma_feature
// CHECK: mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2
module attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync]>} {
func.func @no_wgmma_feature() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A in registers (attention's P @ V): on sm_90a wgmma reads A from
// registers (the mma operand layout, one m64 block per warpgroup) and B as
// usual; on sm_80 mma.sync does, a full_row policy stacking the warps along M.
// CHECK-LABEL: func.func @a_in_registers_sm80
// CHECK: mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = registers, depth = 0>
// CHECK-LABEL: func.func @a_in_registers()
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>}
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = registers, depth = 0>
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @a_in_registers_sm80() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @a_in_registers() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A choice already made (here by hand) is kept.
// CHECK-LABEL: func.func @kept
// CHECK: mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @kept() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A module without gemms needs no target and is left alone.
// CHECK-LABEL: func.func @no_gemm
// CHECK-NOT: mma
func.func @no_gemm() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

func.func @no_target() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{tile-select-mma needs the target: put tile.target = #tile.target<"ARCH"> on the module (tlc does; with tlc-opt, pass --tile-target=ARCH)}}
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @pending_groups_outside_a_loop() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op wg_wait = 1 cannot be honoured: at most 0 wgmma groups can stay pending here (it is not directly in a T.Pipelined loop)}}
    tile.gemm %a, %b, %c {wg_wait = 1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// In a 4-stage pipelined loop that copies both operands ahead, a wgmma gemm
// leaves one group pending (it overlaps the next iteration's wait); with
// wg_wait = 0 it waits for itself; a 3-stage loop overlaps only when asked.
// CHECK-LABEL: func.func @overlap
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 1>
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 1>, wg_wait = 1 : i64
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @overlap(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a0 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b0 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a0[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b0[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a0, %b0, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    %a1 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b1 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a1[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b1[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a1, %b1, %c {wg_wait = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    %a2 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b2 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a2[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b2[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a2, %b2, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    %a3 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b3 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a3[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b3[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a3, %b3, %c {wg_wait = 1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// The loop reads the accumulator (an online softmax would): the gemm must
// wait for itself.
// CHECK-LABEL: func.func @accumulator_used_in_loop
// CHECK: depth = 0
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @accumulator_used_in_loop(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.fill %c, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}
}

// -----

// Attention's P @ V (A in registers) may stay pending across the back edge:
// the next iteration's Q K^T waits for every group before anything touches
// the output or P again. An op after it that touches the output may not.
// CHECK-LABEL: func.func @pending_across_back_edge
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, {{.*}} a = shared, depth = 0>
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma, {{.*}} a = registers, depth = 1>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @pending_across_back_edge(%A: memref<1024x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %n step %c1 num_stages = 3 {
      %r = arith.muli %i, %c64 : index
      tile.copy %A[%r, %c0] [64, 64] to %k[%c0, %c0] [64, 64] : memref<1024x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%r, %c0] [64, 64] to %v[%c0, %c0] [64, 64] : memref<1024x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {clear_accum, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
      tile.gemm %p, %v, %o {wg_wait = 1 : i64} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @touched_after_pending(%A: memref<1024x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %i = %c0 to %n step %c1 num_stages = 3 {
      %r = arith.muli %i, %c64 : index
      tile.copy %A[%r, %c0] [64, 64] to %k[%c0, %c0] [64, 64] : memref<1024x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%r, %c0] [64, 64] to %v[%c0, %c0] [64, 64] : memref<1024x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %q, %k, %s {clear_accum, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
      // expected-error @+1 {{wg_wait = 1 cannot be honoured: at most 0 wgmma groups can stay pending here (its loop uses the accumulator elsewhere)}}
      tile.gemm %p, %v, %o {wg_wait = 1 : i64} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.fill %o, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}
}

// -----

module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @too_few_stages(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.gemm' op wg_wait = 1 cannot be honoured: at most 0 wgmma groups can stay pending here (its loop has fewer than 3 stages)}}
      tile.gemm %a, %b, %c {wg_wait = 1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
func.func @wg_wait_on_mma_sync() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op wg_wait = 2 needs a gemm that runs on wgmma (sm_90a); this one runs on mma.sync, which has no pending groups}}
    tile.gemm %a, %b, %c {wg_wait = 2 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
func.func @uncoverable() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 96 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op a 64x64 tile cannot be split over 3 warps with the square policy into m16n8 tensor-core atoms (each warp's share must be a multiple of 16 rows and 8 columns)}}
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// fp8 on sm_90a: K-major A and B with 128-byte K rows (128 elements) run on
// wgmma m64nNk32 (32 bytes of K per atom). An
// N-major fp8 B (no transpose_B) is not wgmma's: mma.sync is chosen, whose
// lowering then says what fp8 needs.
// CHECK-LABEL: func.func @wgmma_fp8
// CHECK: tile.gemm {{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 32, warps_m = 4, warps_n = 1, a = shared, depth = 0>, transpose_b}
// CHECK: tile.gemm {{.*}} {mma = #tile.mma<kind = mma_sync
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @wgmma_fp8() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    %bn = tile.alloc_shared : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    tile.gemm %a, %bn, %c : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// K tiles of two 128-byte atoms (128 f16): wgmma still, with the K-major A
// and B stored as column blocks of one atom (64 elements) each; an N-major
// B keeps its 64-column blocks.
// CHECK-LABEL: func.func @wgmma_k128
// CHECK: %[[A:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16
// CHECK: tile.gemm %[[A]], %[[B]], %{{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @wgmma_k128() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// wg_wait = -1: depth -1, no wait; each tile.wait_wgmma gets the accumulators
// it completes (groups in issue order: wait 1 completes S, wait 0 then O).
// CHECK-LABEL: func.func @deferred_waits
// CHECK: %[[S:.*]] = tile.alloc_fragment : memref<64x64xf32
// CHECK: %[[O:.*]] = tile.alloc_fragment : memref<64x64xf32
// CHECK: tile.gemm {{.*}}depth = -1>
// CHECK: tile.gemm {{.*}}depth = -1>
// CHECK: tile.wait_wgmma %[[S]] {pending = 1 : i64}
// CHECK: tile.parallel
// CHECK: tile.wait_wgmma %[[O]] {pending = 0 : i64}
// CHECK: tile.wait_wgmma {pending = 0 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @deferred_waits() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 1 : i64}
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.wait_wgmma {pending = 0 : i64}
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// Reading an accumulator before the wait that completes its gemm.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @deferred_read_too_early() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-note @+1 {{the gemm}}
    tile.gemm %q, %k, %s {transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      // expected-error @+1 {{touches the accumulator a buffer while the wgmma of the gemm issued with wg_wait = -1 (or left pending) may still be running: wait for it first (T.wait_wgmma)}}
      %x = memref.load %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// wait_wgmma(1) leaves the last group (this gemm) running: writing its shared
// operand then races with the tensor cores' reads (mma.sync target: checked
// the same).
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @deferred_operand_written() {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-note @+1 {{the gemm}}
    tile.gemm %q, %k, %s {transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 1 : i64}
    // expected-error @+1 {{writes the operand a buffer while the wgmma}}
    tile.fill %k, %zero : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @deferred_never_waited() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{this gemm (wg_wait = -1) is never waited for: add T.wait_wgmma(0) after it, before the end of its block}}
    tile.gemm %q, %k, %s {transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A chain: a wgmma gemm followed by one accumulating onto the same
// registers (MLA's latent, then rope scores) waits for nothing (depth -1):
// the last one's wait completes them all (here the first three). A gemm
// with a wg_wait of its own keeps it, as does one followed by a gemm onto
// another accumulator.
// CHECK-LABEL: func.func @chain
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %[[S:.*]] {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>, transpose_b}
// CHECK-NEXT: tile.gemm %{{.*}}, %{{.*}}, %[[S]] {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>, transpose_b}
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b, wg_wait = 0 : i64}
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @chain() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %t = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b, wg_wait = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %t {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A chain across the pure ops between two gemms (the stage view the second
// reads: T.ws programs index their rings per gemm), not across an op with
// effects (a fill).
// CHECK-LABEL: func.func @chain_past_stage_views
// CHECK: tile.gemm {{.*}}depth = -1>, transpose_b}
// CHECK: tile.stage
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
// CHECK-NEXT: tile.fill
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @chain_past_stage_views(%i: index) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %ring = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %k0 = tile.stage %ring[%i] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %q, %k0, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    %k1 = tile.stage %ring[%i] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %q, %k1, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.fill %s, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    tile.gemm %q, %k1, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A chain across a wait on one of the program's mbarriers (the next gemm's
// piece of a ring landing): the wait touches neither operands nor
// accumulator, so the first gemm keeps running through it.
// CHECK-LABEL: func.func @chain_past_barrier_wait
// CHECK: tile.gemm {{.*}}depth = -1>, transpose_b}
// CHECK-NEXT: tile.barrier_wait
// CHECK-NEXT: tile.gemm {{.*}}depth = 0>, transpose_b}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @chain_past_barrier_wait(%i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k0 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k1 = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128] : memref<1xi64, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k0, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.barrier_wait %bars[%c0], %i : memref<1xi64, #gpu.address_space<workgroup>>
    tile.gemm %q, %k1, %s {transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A gemm operand that a tile.view also names is laid out for the gemm like
// any other (N-major B: column blocks of 64); the view addresses its bytes
// through that layout.
// CHECK-LABEL: func.func @viewed_operand
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>}
// CHECK: tile.view %[[B]]
// CHECK: tile.gemm {{.*}}mma = #tile.mma<kind = wgmma
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @viewed_operand() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %b : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// An M-major A (stored K x M, transpose_a) runs on wgmma too, as its
// transposed A: kept as 64-column blocks like an N-major B (the 128 x 128
// A on 128 threads: two m64 row blocks, one column block each).
// CHECK-LABEL: func.func @wgmma_tn
// CHECK: %[[A:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16
// CHECK: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16
// CHECK: tile.gemm %[[A]], %[[B]], %{{.*}} {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, transpose_a, wg_wait = 0 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @wgmma_tn() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_a, wg_wait = 0 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// An M-major A whose M is no whole 64-column block stays on mma.sync.
// CHECK-LABEL: func.func @tn_narrow
// CHECK: tile.gemm {{.*}}kind = mma_sync
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tn_narrow() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<32x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_a} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<32x64xf32, #tile.space<fragment>>
  }
  return
}
}

// -----

// An operand the loop stages by its own iteration (tile.stage of a 2-stage
// allocation at ((iv - lb) / step) mod 2, the K-major copy the frontend
// makes of an fp8 operand) counts as multi-buffered: the wgmma may leave one
// group pending, and does by default when a tile.transpose fills it, even
// in a 3-stage pipeline.
// CHECK-LABEL: func.func @own_stages
// CHECK: tile.gemm {{.*}}kind = wgmma, m = 64, n = 128, k = 32, warps_m = 4, warps_n = 1, a = shared, depth = 1>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @own_stages(%A: memref<256x1024xf8E4M3FN>, %B: memref<1024x128xf8E4M3FN>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %bt2 = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c128 : index
      tile.copy %A[%c0, %kk] [64, 128] to %a[%c0, %c0] [64, 128] : memref<256x1024xf8E4M3FN> to memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [128, 128] to %b[%c0, %c0] [128, 128] : memref<1024x128xf8E4M3FN> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      %d = arith.subi %k, %c0 : index
      %i = arith.divui %d, %c1 : index
      %s = arith.remui %i, %c2 : index
      %bt = tile.stage %bt2[%s] : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.transpose %b to %bt : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.gemm %a, %bt, %c {transpose_b} : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// The stage index spelled at each use (`bt2[k % 2]` twice: two remui of the
// same operands) is one index: multi-buffered, one group left pending.
// CHECK-LABEL: func.func @own_stages_spelled_twice
// CHECK: tile.gemm {{.*}}kind = wgmma, {{.*}}depth = 1>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @own_stages_spelled_twice(%A: memref<256x1024xf8E4M3FN>, %B: memref<1024x128xf8E4M3FN>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %bt2 = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c128 : index
      tile.copy %A[%c0, %kk] [64, 128] to %a[%c0, %c0] [64, 128] : memref<256x1024xf8E4M3FN> to memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [128, 128] to %b[%c0, %c0] [128, 128] : memref<1024x128xf8E4M3FN> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      %s = arith.remui %k, %c2 : index
      %bt = tile.stage %bt2[%s] : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.transpose %b to %bt : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      %s2 = arith.remui %k, %c2 : index
      %bt_again = tile.stage %bt2[%s2] : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.gemm %a, %bt_again, %c {transpose_b} : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// The same stage index over a loop of step 2 without the division by the
// step picks stage 0 in every iteration: not multi-buffered, nothing left
// pending.
// CHECK-LABEL: func.func @own_stages_step_two
// CHECK: tile.gemm {{.*}}kind = wgmma, {{.*}}depth = 0>
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @own_stages_step_two(%A: memref<256x1024xf8E4M3FN>, %B: memref<1024x128xf8E4M3FN>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %bt2 = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c2 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 128] to %a[%c0, %c0] [64, 128] : memref<256x1024xf8E4M3FN> to memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [128, 128] to %b[%c0, %c0] [128, 128] : memref<1024x128xf8E4M3FN> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      %s = arith.remui %k, %c2 : index
      %bt = tile.stage %bt2[%s] : memref<2x128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.transpose %b to %bt : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.gemm %a, %bt, %c {transpose_b} : memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// T.wgmma_gemm (tile.require_wgmma) never takes the mma.sync fallback.
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @require_wgmma_on_sm80() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{is T.wgmma_gemm, which runs on wgmma only, but the target has no wgmma}}
    tile.gemm %a, %b, %c {transpose_b, wg_wait = -1 : i64, tile.require_wgmma} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// int8 -> int32: wgmma m64nNk32 on sm_90a (both operands K-major in shared
// memory), mma.sync m16n8k32 on sm_80.
// CHECK-LABEL: func.func @int8_sm90a
// CHECK: mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 32, warps_m = 4, warps_n = 1, a = shared, depth = 0>
// CHECK-LABEL: func.func @int8_sm80
// CHECK: mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 32
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @int8_sm90a() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xi8, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xi8, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xi32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x64xi8, #gpu.address_space<workgroup>>, memref<64x64xi8, #gpu.address_space<workgroup>>, memref<64x64xi32, #tile.space<fragment>>
  }
  return
}
}
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @int8_sm80() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xi8, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xi8, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xi32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x64xi8, #gpu.address_space<workgroup>>, memref<64x64xi8, #gpu.address_space<workgroup>>, memref<64x64xi32, #tile.space<fragment>>
  }
  return
}
}

// -----

// A wait in the next iteration (a K loop's T.wait_wgmma(1): the previous
// iteration's gemm done, this one running) and after the loop: the loop
// records the one group it leaves running over its back edge, and each wait
// gets the accumulator.
// CHECK-LABEL: func.func @carried_k_loop
// CHECK: tile.pipelined {{.*}} attributes {tile.carried_wgmma = 1 : i64}
// CHECK: tile.gemm {{.*}}depth = -1>
// CHECK-NEXT: tile.wait_wgmma %[[C:.*]] {pending = 1 : i64}
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: tile.wait_wgmma %[[C]] {pending = 0 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_k_loop(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.wait_wgmma {pending = 1 : i64}
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// The next iteration's wait under an `if` on the iteration not being the
// first (the first has no gemm of an earlier one running), in a serial loop:
// P V left running at the end of the body, completed before the next
// iteration rescales the output. The wait moves before the `if` (in the
// first iteration it has nothing to wait for; ptxas, which cannot tell that
// iteration's path, would serialize the wgmmas otherwise).
// CHECK-LABEL: func.func @carried_under_if
// CHECK: tile.wait_wgmma %[[O:.*]] {pending = 0 : i64}
// CHECK-NEXT: scf.if
// CHECK: tile.gemm {{.*}}depth = -1>
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: tile.wait_wgmma %[[O]] {pending = 0 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_under_if(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %i = %c0 to %n step %c1 {
      %later = arith.cmpi sgt, %i, %c0 : index
      scf.if %later {
        tile.wait_wgmma {pending = 0 : i64}
      }
      tile.parallel (%r, %j) in [64, 64] {
        %x = memref.load %o[%r, %j] : memref<64x64xf32, #tile.space<fragment>>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %o[%r, %j] : memref<64x64xf32, #tile.space<fragment>>
      }
      tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// Touching the accumulator in the next iteration before the wait.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_touched_early(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %i = %c0 to %n step %c1 {
      // expected-error @+1 {{touches the accumulator a buffer while the wgmma of the gemm issued with wg_wait = -1 (or left pending) may still be running (issued in the previous iteration): wait for it first (T.wait_wgmma)}}
      tile.fill %o, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
      tile.wait_wgmma {pending = 0 : i64}
      // expected-note @+1 {{the gemm}}
      tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// Writing a shared operand the serial loop does not stage, in the next
// iteration before the wait (the tensor cores may still read it).
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_operand_rewritten(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = arith.constant 1.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %i = %c0 to %n step %c1 {
      // expected-error @+1 {{writes the operand a buffer while the wgmma}}
      tile.fill %v, %h : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
      // expected-note @+1 {{the gemm}}
      tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.wait_wgmma {pending = 1 : i64}
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// Left running through the whole next iteration: no wait in the body.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_two_iterations(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %i = %c0 to %n step %c1 {
      // expected-error @+1 {{this gemm (wg_wait = -1) is still running at the end of the next iteration: a gemm may stay running into the next iteration only, where a T.wait_wgmma must complete it}}
      tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}

// -----

// Waited in the next iteration but not after the loop.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_never_waited_after(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %p = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %i = %c0 to %n step %c1 {
      tile.wait_wgmma {pending = 0 : i64}
      // expected-error @+1 {{this gemm (wg_wait = -1) is never waited for: add T.wait_wgmma(0) after it, before the end of its block}}
      tile.gemm %p, %v, %o {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A pipelined loop of 2 stages has none to spare for a group running over
// its back edge (the next iteration's copy goes to the stage it reads).
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @carried_too_few_stages(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{this gemm (wg_wait = -1) stays running into the next iteration, with 1 wgmma group(s) in all, but its loop's stages allow 0: each group running over the back edge needs a stage of its operands besides the one read and the one loaded (raise num_stages)}}
      tile.gemm %a, %b, %c {wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.wait_wgmma {pending = 1 : i64}
    }
    tile.wait_wgmma {pending = 0 : i64}
  }
  return
}
}
