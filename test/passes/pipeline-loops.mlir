// RUN: tlc-opt %s -split-input-file -tile-pipeline-loops -verify-diagnostics | FileCheck %s
// RUN: tlc-opt %s -split-input-file -tile-pipeline-loops="stream-k=false" -verify-diagnostics | FileCheck %s --check-prefix=OFF

// Three stages: the shared buffers get a stage dimension, two iterations are
// issued ahead (each predicated on the trip count, each committing a group),
// and each iteration waits for one pending group, meets at one barrier,
// issues the iteration two ahead, then computes on its own stage. No branch:
// the copies ahead carry the predicate, so the body stays one block.
// CHECK-LABEL: func.func @gemm_loop
// CHECK-SAME: (%{{.*}}: memref<256x256xf16>, %[[N:.*]]: index)
// CHECK: %[[A3:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>, tile.drained} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: scf.if
// CHECK: %[[P0:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// CHECK: %[[S0:.*]] = tile.stage %[[A3]][%{{.*}}] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: tile.copy %{{.*}} to %[[S0]][%{{.*}}] [64, 32] if %[[P0]] {async}
// CHECK: tile.copy %{{.*}} [32, 64] if %[[P0]] {async}
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[P1:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// CHECK: tile.copy {{.*}} if %[[P1]] {async}
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK:   %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : index
// CHECK:   %[[PA:.*]] = arith.cmpi slt, %[[AHEAD]], %[[N]] : index
// CHECK:   tile.copy {{.*}} if %[[PA]] {async}
// CHECK:   tile.copy {{.*}} if %[[PA]] {async}
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   %[[CUR:.*]] = tile.stage %[[A3]]
// CHECK:   tile.gemm %[[CUR]]
// CHECK: } {tile.num_stages = 3 : i64}
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK-NOT: tile.pipelined
func.func @gemm_loop(%A: memref<256x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// copies_last (a manual schedule ordering the copies after the gemm): the
// same wait and barrier at the top, the gemm on this iteration's stage, then
// the copies of the iteration two ahead (their stage was last read two
// iterations back, before the barrier); the gemm, which alone would
// prefetch, does not (the next stage's copies are not issued yet).
// CHECK-LABEL: func.func @copies_last
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK:   %[[CUR:.*]] = tile.stage
// CHECK:   tile.gemm %[[CUR]]
// CHECK-NOT: prefetch
// CHECK:   tile.copy {{.*}} if %{{.*}} {async}
// CHECK:   tile.copy {{.*}} if %{{.*}} {async}
// CHECK:   nvvm.cp.async.commit.group
// CHECK-NEXT: } {tile.num_stages = 3 : i64}
func.func @copies_last(%A: memref<256x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 attributes {copies_last} {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// An mma.sync gemm that is all the body computes besides its copies
// prefetches: the loop has no wait and barrier at its top; they go before the
// loop, after the stages of the first iteration, and the gemm names those
// and the next iteration's stages ((i + 1) % 3) and the wait count, which its
// lowering uses after reading its last K slice.
// CHECK-LABEL: func.func @prefetch_loop
// CHECK: %[[A3:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>, tile.drained} : memref<3x64x32xf16
// CHECK: %[[B3:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 3>, tile.drained} : memref<3x32x64xf16
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FA:.*]] = tile.stage %[[A3]][%[[C0]]]
// CHECK-NEXT: %[[FB:.*]] = tile.stage %[[B3]][%[[C0]]]
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK-NOT: gpu.barrier
// CHECK: %[[I:.*]] = arith.divsi
// CHECK: %[[S:.*]] = arith.remsi %[[I]]
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[A:.*]] = tile.stage %[[A3]][%[[S]]]
// CHECK: %[[B:.*]] = tile.stage %[[B3]][%[[S]]]
// CHECK: %[[I1:.*]] = arith.addi %[[I]], %{{.*}}
// CHECK: %[[N:.*]] = arith.remsi %[[I1]]
// CHECK: %[[NA:.*]] = tile.stage %[[A3]][%[[N]]]
// CHECK: %[[NB:.*]] = tile.stage %[[B3]][%[[N]]]
// CHECK: tile.gemm %[[A]], %[[B]], %{{.*}} prefetch(%[[FA]], %[[FB]], %[[NA]], %[[NB]]) {{{.*}}prefetch_wait = 1 : i32}
// CHECK-NEXT: } {tile.num_stages = 3 : i64}
// A fill after the gemm: no prefetch, the wait and barrier at the top.
// CHECK-LABEL: func.func @no_prefetch_loop
// CHECK: scf.for
// CHECK-NEXT: arith.subi
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: prefetch
// CHECK: tile.fill
func.func @prefetch_loop(%A: memref<256x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
func.func @no_prefetch_loop(%A: memref<256x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.fill %c, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    }
  }
  return
}

// -----

// A copy whose start is read at run time from a table the kernel never
// writes (a paged cache's block table) is pipelined: the table entry of an
// iteration ahead is read under that iteration's predicate (past the end it
// would be read past the table's end), and the copy starts there.
// CHECK-LABEL: func.func @paged_loop
// CHECK: %[[P0:.*]] = arith.cmpi slt, %{{.*}}, %[[N:.*]] : index
// CHECK: %[[E0:.*]] = scf.if %[[P0]] -> (i32) {
// CHECK-NEXT: %[[L0:.*]] = memref.load %arg1[%{{.*}}] : memref<8xi32>
// CHECK-NEXT: scf.yield %[[L0]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: scf.yield %[[Z]] : i32
// CHECK: %[[R0:.*]] = arith.index_cast %[[E0]] : i32 to index
// CHECK: tile.copy %arg0[%[[R0]], %{{.*}}] [64, 64] to %{{.*}} if %[[P0]] {async}
// CHECK: scf.for
// CHECK: scf.if %{{.*}} -> (i32) {
// CHECK: memref.load %arg1
// CHECK: tile.copy {{.*}} {async}
func.func @paged_loop(%A: memref<512x64xf16>, %table: memref<8xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %page = memref.load %table[%k] : memref<8xi32>
      %row = arith.index_cast %page : i32 to index
      tile.copy %A[%row, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<512x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Copies at the top of an `if` (TileLang's block-sparse loop: `if
// mask[k]: copy; copy; gemm`) are pipelined on its condition: the copies of
// an iteration ahead are issued only where its mask entry (read under the
// trip-count predicate, as a table entry) holds, so a skipped block loads
// nothing; the body keeps its `if`, now around the gemm on this iteration's
// stage only.
// CHECK-LABEL: func.func @masked_loop
// CHECK: %[[P0:.*]] = arith.cmpi slt, %{{.*}}, %[[N:.*]] : index
// CHECK: %[[E0:.*]] = scf.if %[[P0]] -> (i1) {
// CHECK-NEXT: memref.load %arg1[%{{.*}}] : memref<8xi1>
// CHECK: scf.if %[[E0]] {
// CHECK-NEXT: tile.stage
// CHECK-NEXT: tile.copy %arg0[%{{.*}}] [64, 32] to %{{.*}} if %[[P0]] {async}
// CHECK: scf.if %[[E0]] {
// CHECK-NEXT: tile.stage
// CHECK-NEXT: tile.copy %arg0[%{{.*}}] [32, 64] to %{{.*}} if %[[P0]] {async}
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %[[IV:.*]] =
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   tile.copy {{.*}} {async}
// CHECK:   tile.copy {{.*}} {async}
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   %[[M:.*]] = memref.load %arg1[%[[IV]]] : memref<8xi1>
// CHECK:   scf.if %[[M]] {
// CHECK-NOT: tile.copy
// CHECK:     tile.gemm
// CHECK:   }
// CHECK: } {tile.num_stages = 3 : i64}
func.func @masked_loop(%A: memref<256x256xf16>, %mask: memref<8xi1>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %m = memref.load %mask[%k] : memref<8xi1>
      scf.if %m {
        %kk = arith.muli %k, %c32 : index
        tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
        tile.copy %A[%kk, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
        tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      }
    }
  }
  return
}

// -----

// A buffer an `if` fills but that is read outside it (on a skipped
// iteration the program reads what the last copy left there): that copy
// stays where it is, synchronous.
// CHECK-LABEL: func.func @masked_read_outside
// CHECK: tile.pipelined
// CHECK: scf.if
// CHECK-NEXT: tile.copy
// CHECK-NOT: {async}
func.func @masked_read_outside(%A: memref<256x256xf16>, %mask: memref<8xi1>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %m = memref.load %mask[%k] : memref<8xi1>
      scf.if %m {
        tile.copy %A[%c0, %k] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x256xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      }
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A table the kernel also writes could change between reading it ahead and
// the iteration that asked: that copy is not pipelined.
// CHECK-LABEL: func.func @written_table
// CHECK: tile.pipelined
// CHECK-NOT: {async}
func.func @written_table(%A: memref<512x64xf16>, %table: memref<8xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %page = memref.load %table[%k] : memref<8xi32>
      %row = arith.index_cast %page : i32 to index
      tile.copy %A[%row, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<512x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      memref.store %c0_i32, %table[%k] : memref<8xi32>
    }
  }
  return
}

// -----

// One stage: nothing to overlap; the loop is left alone.
// CHECK-LABEL: func.func @one_stage
// CHECK: tile.pipelined
// CHECK-NOT: {async}
func.func @one_stage(%A: memref<256x256xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 1 {
      tile.copy %A[%c0, %k] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// The buffer is read after the loop: it cannot be multi-buffered, so the
// loop stays a plain (correct, not overlapped) loop.
// CHECK-LABEL: func.func @used_after
// CHECK: tile.pipelined
// CHECK-NOT: tile.stage
func.func @used_after(%A: memref<256x256xf16>, %B: memref<64x32xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 2 {
      tile.copy %A[%c0, %k] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    }
    tile.copy %a[%c0, %c0] [64, 32] to %B[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
  }
  return
}

// -----

// A buffer stored as column blocks (#tile.shared column_block) keeps them in
// its staged allocation's layout, which also records the stages.
// CHECK-LABEL: func.func @column_blocks_staged
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64>, tile.drained} : memref<3x64x128xf16, #gpu.address_space<workgroup>>
func.func @column_blocks_staged(%B: memref<256x128xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %B[%kk, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<256x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A wgmma gemm that leaves one group pending still reads the previous
// iteration's stage: with four stages the copies run two iterations ahead
// (not three), each iteration waits until one group is pending, and a wgmma
// wait for all groups follows the loop. (The module keeps the cp.async
// pipeline: tile.no_warp_specialization.)
// CHECK-LABEL: func.func @pending_wgmma
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 4>, tile.drained} : memref<4x64x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %[[STEP:.*]] {
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK:   %[[TWO:.*]] = arith.muli %[[STEP]], %c2{{.*}} : index
// CHECK:   arith.addi %[[IV]], %[[TWO]] : index
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   tile.gemm
// CHECK: } {tile.num_stages = 4 : i64}
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
module attributes {tile.target = #tile.target<"sm_90a">, tile.no_warp_specialization} {
func.func @pending_wgmma(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 1>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A pipeline deeper than shared memory can hold is rejected before anything
// is unrolled.
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @too_deep(%A: memref<256x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    // expected-error @+1 {{'tile.pipelined' op num_stages = 2147483647 keeps 2147483647 copies of 4096 bytes of shared buffers, more than the 166912 bytes a block has on sm_80}}
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2147483647 {
      tile.copy %A[%c0, %k] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}
}

// -----

// sm_90a, TMA-shaped copies, wgmma: warp-specialized. The kernel gains a
// producer warpgroup (threads 128..255) and a 2-stage tile.pipeline for its
// 128 consumer threads (tile-insert-mbarriers makes its mbarriers); the
// producer's thread 128 acquires each iteration's stage and fills it with
// one TMA load per copy (the N-major B in 64-column blocks: the tensor
// map's box is one of them); the consumers wait for the stage, run the
// gemm and, with no wgmma group left pending, release the same iteration.
// The kernel is persistent: each role walks the tiles blockIdx.x,
// + gridDim.x, ... itself, recomputing what depended on the block index
// (the row), and counts iterations globally (tile j starts at j x the
// loop's trip count) so the stages' rounds go on. With one consumer
// warpgroup no registers move (ptxas drops setmaxnreg in a block of two
// warpgroups); @pending_release, with two, moves them.
// CHECK-LABEL: func.func @warp_specialized
// CHECK: tile.kernel blocks(%{{.*}}) in (%[[GRID:.*]]) threads = 128 attributes {tile.persistent, tile.producer_threads = 128 : i64}
// CHECK-DAG: %[[A:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 2, column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x128xf16, #gpu.address_space<workgroup>>
// CHECK: %[[PIPE:.*]] = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
// CHECK-NOT: nvvm.mbarrier
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[PRODUCER:.*]] = arith.cmpi uge, %[[TID]], %c128
// CHECK: %[[TRIPS:.*]] = arith.ceildivsi
// CHECK: scf.if %[[PRODUCER]] {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: arith.cmpi eq, %[[TID]], %c128
// CHECK: %[[MAPA:.*]] = tile.tensor_map %arg0 {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<?x1024xf16> -> !llvm.ptr
// CHECK: %[[MAPB:.*]] = tile.tensor_map %arg1 {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<1024x256xf16> -> !llvm.ptr
// CHECK: %[[CTA:.*]] = gpu.block_id x
// CHECK: %[[CTAS:.*]] = gpu.grid_dim x
// CHECK: scf.for %[[T:.*]] = %[[CTA]] to %[[GRID]] step %[[CTAS]] {
// CHECK: %[[J:.*]] = arith.divsi %{{.*}}, %[[CTAS]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[J]], %[[TRIPS]]
// CHECK: %[[ROW:.*]] = arith.muli %[[T]], %c64
// CHECK: scf.for %[[IV:.*]] = %c0 to %arg2 step %c1 {
// CHECK: %[[KG:.*]] = arith.addi %[[FIRST]], %{{.*}}
// CHECK: %[[S:.*]] = arith.remsi %[[KG]], %c2
// CHECK: tile.producer_acquire %[[PIPE]][%[[KG]]] : !tile.pipeline
// CHECK: %[[K:.*]] = arith.muli %[[IV]], %c64
// CHECK: %[[SA:.*]] = tile.stage %[[A]][%[[S]]]
// CHECK: tile.tma_load %[[MAPA]][%[[ROW]], %[[K]]] to %[[SA]], %[[PIPE]][%[[KG]]] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
// CHECK: %[[SB:.*]] = tile.stage %[[B]][%[[S]]]
// CHECK: tile.tma_load %[[MAPB]][%[[K]], %c0] to %[[SB]], %[[PIPE]][%[[KG]]] : memref<64x128xf16, #gpu.address_space<workgroup>>, !tile.pipeline
// CHECK: } {tile.tile_loop}
// CHECK: } else {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GRID]] step
// CHECK: scf.for
// CHECK: %[[KC:.*]] = arith.addi
// CHECK: tile.consumer_wait %[[PIPE]][%[[KC]]] : !tile.pipeline
// CHECK: tile.gemm
// CHECK-NEXT: tile.consumer_release %[[PIPE]][%[[KC]]] : !tile.pipeline
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK-NOT: nvvm.cp.async
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @warp_specialized(%A: memref<?x1024xf16>, %B: memref<1024x256xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %bx, %c64 : index
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<1024x256xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// Warp-specialized with the copies under an `if` on a mask entry: both
// roles read the entry and count the iterations where it holds (a
// loop-carried count from 0, the pipeline's iteration); only those acquire,
// fill, wait for and release a stage, so a skipped block costs neither a
// load nor a round of the stages. The consumers run the gemm (waited for:
// depth 0) under the program's `if`. The kernel is not persistent (its
// tiles' times depend on the mask), and nothing is multicast or split
// stream-K.
// CHECK-LABEL: func.func @warp_specialized_masked
// CHECK: tile.kernel blocks(%{{.*}}) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64}
// CHECK: scf.if %{{.*}} {
// CHECK: scf.for %[[IV:.*]] = %c0 to %c16 step %c1 iter_args(%[[N:.*]] = %{{.*}}) -> (index) {
// CHECK: %[[M:.*]] = memref.load %arg2[%{{.*}}, %[[IV]]] : memref<?x16xi1>
// CHECK: %[[S:.*]] = arith.remsi %[[N]], %c3
// CHECK: scf.if %[[M]] {
// CHECK-NEXT: tile.producer_acquire %[[PIPE:.*]][%[[N]]] : !tile.pipeline
// CHECK: tile.stage %{{.*}}[%[[S]]]
// CHECK: tile.tma_load
// CHECK: tile.tma_load
// CHECK: }
// CHECK: %[[ONE:.*]] = arith.select %[[M]], %{{.*}}, %{{.*}} : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[N]], %[[ONE]] : index
// CHECK: scf.yield %[[NEXT]] : index
// CHECK: } else {
// CHECK: scf.for %[[CIV:.*]] = %c0 to %c16 step %c1 iter_args(%[[CN:.*]] = %{{.*}}) -> (index) {
// CHECK: %[[CM:.*]] = memref.load %arg2[%{{.*}}, %[[CIV]]] : memref<?x16xi1>
// CHECK: scf.if %[[CM]] {
// CHECK-NEXT: tile.consumer_wait %[[PIPE]][%[[CN]]] : !tile.pipeline
// CHECK: scf.if
// CHECK-NOT: tile.copy
// CHECK: tile.gemm {{.*}} : memref<64x64xf16, {{.*}}>, memref<64x128xf16, {{.*}}>, memref<64x128xf32, #tile.space<fragment>>
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[CM]] {
// CHECK-NEXT: tile.consumer_release %[[PIPE]][%[[CN]]] : !tile.pipeline
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @warp_specialized_masked(%A: memref<?x1024xf16>, %B: memref<1024x256xf16>, %mask: memref<?x16xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %bx, %c64 : index
    tile.pipelined %k = %c0 to %c16 step %c1 num_stages = 3 {
      %m = memref.load %mask[%bx, %k] : memref<?x16xi1>
      scf.if %m {
        %kk = arith.muli %k, %c64 : index
        tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
        tile.copy %B[%kk, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<1024x256xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
        tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      }
    }
  }
  return
}
}

// -----

// K tiles of 32 f16: A's rows are one 64-byte swizzle atom, loaded by TMA
// with the 64-byte swizzle (its staged buffer bits = 2); B's K x N tile keeps
// its 128-byte column blocks.
// CHECK-LABEL: func.func @warp_specialized_64_byte_rows
// CHECK-DAG: tile.alloc_shared {layout = #tile.shared<stages = 3, swizzle = <bits = 2, base = 4, shift = 3>>} : memref<3x128x32xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<3x32x128xf16, #gpu.address_space<workgroup>>
// CHECK: tile.tensor_map %arg0 {box = array<i64: 128, 32>, swizzle = 64 : i64}
// CHECK: tile.tensor_map %arg1 {box = array<i64: 32, 64>, swizzle = 128 : i64}
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @warp_specialized_64_byte_rows(%A: memref<1024x1024xf16>, %B: memref<1024x128xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<32x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %bx, %c128 : index
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%row, %kk] [128, 32] to %a[%c0, %c0] [128, 32] : memref<1024x1024xf16> to memref<128x32xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [32, 128] to %b[%c0, %c0] [32, 128] : memref<1024x128xf16> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// Four stages, two consumer warpgroups, one wgmma group left pending: the
// consumers release the iteration before (none in iteration 0), and wait
// for all groups after the loop. Registers: each thread starts with
// 65536 / 384 rounded down to 8 = 168; the producer gives up 128 x (168 -
// 40), which the 256 consumers share: 168 + 64 = 232.
// CHECK-LABEL: func.func @pending_release
// CHECK: threads = 256 attributes {tile.persistent, tile.producer_threads = 128 : i64}
// CHECK: %[[PIPE:.*]] = tile.pipeline stages = 4, consumers = 256 : !tile.pipeline
// CHECK: tile.producer_acquire
// CHECK-COUNT-2: tile.tma_load
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[K:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: tile.consumer_wait %[[PIPE]][%[[K]]]
// CHECK: tile.gemm
// CHECK: %[[BACK:.*]] = arith.subi %[[K]], %c1
// CHECK: %[[SEEN:.*]] = arith.cmpi sge, %[[BACK]], %c0
// CHECK: scf.if %[[SEEN]] {
// CHECK-NEXT: tile.consumer_release %[[PIPE]][%[[BACK]]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @pending_release(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %c = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [128, 64] to %a[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c64, %kk] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 1>} : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A row stride TMA cannot take (a dynamic inner size) keeps the cp.async
// pipeline on sm_90a.
// CHECK-LABEL: func.func @no_tma_dynamic_rows
// CHECK-NOT: tile.producer_threads
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: tile.tensor_map
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @no_tma_dynamic_rows(%A: memref<?x?xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x?xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c64, %kk] [64, 64] to %b[%c0, %c0] [64, 64] : memref<?x?xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A GEMM's main loop (a zero-filled accumulator that only the gemm touches
// before the epilogue) in a persistent kernel is stream-K: one block per SM
// (tile.stream_k), the function gains the partial tiles' scratch (a row of
// 64 x 128 f32 per SM) and the flags (zeroed by the launcher). Both roles
// walk the block's pieces (a tile and a range [begin, end) of its
// iterations, the global iteration count going on); after a piece the
// consumers of the piece that owns the tile (begin = 0) add the partials of
// the blocks after them that share it (waiting for each one's flag) and run
// the epilogue; any other piece stores its partials and raises its flag.
// (Counts known only at run time: no reduce-scatter, see @stream_k_known.)
// The tile and iteration counts are known only at run time: when the
// launch's sizes share no wave, both roles take the plain persistent loop
// instead (the else branch). The blocks sharing the last wave: q = blocks / tiles left splits of each
// tile (at most a tile's iterations / 8) where their share is at most 1/8
// longer than R / blocks', so every tile's shares start at the same K
// iterations; else R spread over the blocks.
// CHECK-LABEL: func.func @stream_k
// CHECK-SAME: %{{.*}}: memref<?x8192xf32> {tile.dims = ["__sm_count__", ""], tile.name = "streamk_partials0", tile.scratch}
// CHECK-SAME: %[[FLAGS:.*]]: memref<?xi32> {tile.dims = ["__sm_count__"], tile.name = "streamk_flags", tile.scratch, tile.zero_fill}
// CHECK: tile.kernel blocks(%{{.*}}) in (%{{.*}}) threads = 128 attributes {tile.persistent, tile.producer_threads = 128 : i64, tile.stream_k}
// CHECK: scf.if
// CHECK-NOT: nvvm.setmaxregister
// CHECK: %[[CTA:.*]] = gpu.block_id x
// CHECK: %[[G:.*]] = arith.index_cast %grid_dim_x : index to i32
// CHECK: %[[T:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[K:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[WAVES:.*]] = arith.divsi %[[T]], %[[G]] : i32
// CHECK: %[[WAVED:.*]] = arith.muli %[[WAVES]], %[[G]] : i32
// CHECK: %[[LEFTTILES:.*]] = arith.subi %[[T]], %[[WAVED]] : i32
// CHECK: %[[LEFT:.*]] = arith.muli %[[LEFTTILES]], %[[K]] : i32
// CHECK: %[[BYMIN:.*]] = arith.divsi %[[LEFT]], %c8_i32 : i32
// CHECK: %[[CAP:.*]] = arith.minsi %[[G]], %[[BYMIN]] : i32
// CHECK: %[[SPREAD:.*]] = arith.maxsi %[[LEFTTILES]], %[[CAP]] : i32
// CHECK: %[[KMIN:.*]] = arith.divsi %[[K]], %c8_i32 : i32
// CHECK: %[[LT1:.*]] = arith.maxsi %[[LEFTTILES]], %c1_i32 : i32
// CHECK: %[[PER:.*]] = arith.divsi %[[G]], %[[LT1]] : i32
// CHECK: %[[SPLITS:.*]] = arith.minsi %[[PER]], %[[KMIN]] : i32
// CHECK: %[[ALIGNEDSHORT:.*]] = arith.cmpi sle
// CHECK: %[[TWO:.*]] = arith.cmpi sge, %[[SPLITS]], %c2_i32 : i32
// CHECK: %[[ALIGNED:.*]] = arith.andi %[[TWO]], %[[ALIGNEDSHORT]] : i1
// CHECK: %[[SPLIT:.*]] = arith.muli %[[LEFTTILES]], %[[SPLITS]] : i32
// CHECK: arith.select %[[ALIGNED]], %[[SPLIT]], %[[SPREAD]] : i32
// CHECK: %[[SHARES:.*]] = arith.cmpi sgt, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: scf.if %[[SHARES]] {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1{{.*}} {
// CHECK: %[[FROM:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK: %[[TO:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[FROM]] to %[[TO]] step %c1
// CHECK: tile.producer_acquire
// CHECK: } {tile.tile_loop}
// CHECK-NEXT: } else {
// CHECK: scf.for %{{.*}} = %block_id_x{{.*}} to %{{.*}} step %grid_dim_x{{.*}} {
// CHECK: tile.producer_acquire
// CHECK: } {tile.tile_loop}
// CHECK: } else {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: gpu.block_id x
// CHECK: scf.for
// CHECK: tile.fill %[[ACC:.*]], %{{.*}} : memref<64x128xf32, #tile.space<fragment>>, f32
// CHECK: scf.for
// CHECK: tile.consumer_wait
// CHECK: tile.gemm
// CHECK: tile.consumer_release
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %ctaid.x;", "=r"
// CHECK: %[[OWNS:.*]] = arith.cmpi eq, %[[BEGIN:.*]], %c0{{.*}} : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ne, %[[BEGIN]], %c0{{.*}} : index
// CHECK: %[[SHORT:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: %[[SHARED:.*]] = arith.andi %[[OWNS]], %[[SHORT]] : i1
// CHECK-NEXT: scf.if %[[SHARED]] {
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (i32) -> i32 {
// CHECK: scf.condition
// CHECK: } do {
// CHECK: ^bb0(%[[OTHER:.*]]: i32):
// CHECK: %[[SLOT:.*]] = arith.index_cast %[[OTHER]] : i32 to index
// CHECK: tile.semaphore_wait %[[FLAGS]][%[[SLOT]]] : memref<?xi32>
// CHECK: tile.add_partials %[[PARTIALS:.*]][%[[SLOT]]] to %[[ACC]] : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
// CHECK: scf.if %[[INSIDE]] {
// CHECK-NEXT: tile.store_partials %[[ACC]] to %[[PARTIALS]][%[[CTA:.*]]] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
// CHECK: tile.semaphore_signal %[[FLAGS]][%[[CTA]]] : memref<?xi32>
// CHECK: scf.if %[[OWNS]] {
// CHECK: tile.copy %[[ACC]]
// CHECK: } {tile.tile_loop}
// CHECK-NEXT: } else {
// CHECK: scf.for %{{.*}} = %block_id_x{{.*}} to %{{.*}} step %grid_dim_x{{.*}} {
// CHECK: tile.consumer_wait
// CHECK: tile.copy %[[ACC]]
// CHECK-NOT: tile.semaphore
// CHECK: } {tile.tile_loop}
// OFF-LABEL: func.func @stream_k
// OFF-NOT: streamk
// OFF: threads = 128 attributes {tile.persistent, tile.producer_threads = 128 : i64}
// OFF-NOT: tile.semaphore
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stream_k(%A: memref<?x1024xf16>, %B: memref<1024x256xf16>, %C: memref<?x256xf32>, %n: index, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%tiles) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %bx, %c64 : index
    tile.fill %c, %zero : memref<64x128xf32, #tile.space<fragment>>, f32
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<1024x256xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
    tile.copy %c[%c0, %c0] [64, 128] to %C[%row, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<?x256xf32>
  }
  return
}
}

// -----

// An accumulator that starts from ones (or that anything but the gemm
// touches in the loop) cannot be summed from pieces: no stream-K.
// CHECK-LABEL: func.func @stream_k_not_zeroed
// CHECK: attributes {tile.persistent, tile.producer_threads = 128 : i64}
// CHECK-NOT: tile.semaphore
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stream_k_not_zeroed(%A: memref<?x1024xf16>, %B: memref<1024x256xf16>, %C: memref<?x256xf32>, %n: index, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%tiles) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %bx, %c64 : index
    tile.fill %c, %one : memref<64x128xf32, #tile.space<fragment>>, f32
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<1024x256xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
    tile.copy %c[%c0, %c0] [64, 128] to %C[%row, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<?x256xf32>
  }
  return
}
}

// -----

// Counts known at compile time and paying on 132 SMs (16 tiles of 512
// iterations: 8 aligned shares of 64 each): the stream-K loop alone, no
// plain loop to choose at run time. 4 or more aligned shares of fewer tiles
// than SMs: the tile's blocks reduce-scatter where the launch's schedule
// splits them so (the kernel decides: on another SM count the serial
// fix-up, built beside it, runs): all store their partials and raise their
// flags, wait for the tile's flags together, sum their slice and raise
// their flags to 2; the owner waits for those and gathers the slices (the
// whole sums: they replace its accumulator) before the epilogue.
// CHECK-LABEL: func.func @stream_k_known
// CHECK: tile.stream_k
// CHECK-NOT: step %grid_dim_x
// CHECK: arith.minsi
// CHECK: %[[SPLITS:.*]] = arith.minsi %{{.*}}, %{{.*}} : i32
// CHECK: %[[ALIGNED:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[ALIGNEDSHARED:.*]] = arith.andi %{{.*}}, %[[ALIGNED]] : i1
// CHECK: %[[FOUR:.*]] = arith.cmpi sge, %[[SPLITS]], %c4_i32 : i32
// CHECK: %[[SCATTER:.*]] = arith.andi %[[ALIGNEDSHARED]], %[[FOUR]] : i1
// CHECK: tile.gemm
// CHECK: %[[OWNS:.*]] = arith.cmpi eq, %[[BEGIN:.*]], %c0{{.*}} : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ne, %[[BEGIN]], %c0{{.*}} : index
// CHECK: %[[SHORT:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: %[[SHARED:.*]] = arith.andi %[[OWNS]], %[[SHORT]] : i1
// CHECK: %[[PARTIAL:.*]] = arith.ori %[[INSIDE]], %[[SHORT]] : i1
// CHECK: %[[GROUPED:.*]] = arith.andi %{{.*}}, %[[PARTIAL]] : i1
// CHECK: scf.if %[[GROUPED]] {
// CHECK: %[[FIRST:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[COUNT:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[RANK:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: tile.store_partials %[[ACC:.*]] to %[[PARTIALS:.*]][%[[CTA:.*]]] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
// CHECK: tile.semaphore_signal %[[FLAGS:.*]][%[[CTA]]] : memref<?xi32>
// CHECK: tile.semaphore_wait %[[FLAGS]][%[[FIRST]]] count %[[COUNT]] : memref<?xi32>
// CHECK: tile.reduce_partials %[[PARTIALS]][%[[FIRST]]] count %[[COUNT]] slice %[[RANK]] : memref<?x8192xf32>
// CHECK: tile.semaphore_signal %[[FLAGS]][%[[CTA]]] {level = 2 : i32} : memref<?xi32>
// CHECK: scf.if %[[OWNS]] {
// CHECK: tile.semaphore_wait %[[FLAGS]][%[[FIRST]]] count %[[COUNT]] {level = 2 : i32} : memref<?xi32>
// CHECK-NEXT: tile.add_partials %[[PARTIALS]][%[[FIRST]]] count %[[COUNT]] to %[[ACC]]
// CHECK: } else {
// CHECK: scf.if %[[SHARED]] {
// CHECK: tile.semaphore_wait %[[FLAGS]][%{{.*}}] : memref<?xi32>
// CHECK: tile.add_partials %[[PARTIALS]][%{{.*}}] to %[[ACC]]
// CHECK: tile.store_partials %[[ACC]] to %[[PARTIALS]][%[[CTA]]]
// CHECK: tile.semaphore_signal %[[FLAGS]][%[[CTA]]] : memref<?xi32>
// CHECK: scf.if %[[OWNS]] {
// CHECK: tile.copy %[[ACC]]
// CHECK-NOT: step %grid_dim_x
// CHECK: return
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stream_k_known(%A: memref<256x32768xf16>, %B: memref<32768x512xf16>, %C: memref<256x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx, %by) in (%c4, %c4) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    tile.fill %c, %zero : memref<64x128xf32, #tile.space<fragment>>, f32
    tile.pipelined %k = %c0 to %c512 step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<256x32768xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %col] [64, 128] to %b[%c0, %c0] [64, 128] : memref<32768x512xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
    tile.copy %c[%c0, %c0] [64, 128] to %C[%row, %col] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<256x512xf32>
  }
  return
}
}

// -----

// Known counts whose shares do not reduce-scatter (64 tiles of 128
// iterations: 2 aligned shares each, fewer than 4): only the owner's
// serial fix-up is built.
// CHECK-LABEL: func.func @stream_k_known_serial
// CHECK: tile.stream_k
// CHECK-NOT: tile.reduce_partials
// CHECK: tile.add_partials
// CHECK-NOT: tile.reduce_partials
// CHECK: return
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stream_k_known_serial(%A: memref<512x8192xf16>, %B: memref<8192x1024xf16>, %C: memref<512x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx, %by) in (%c8, %c8) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    tile.fill %c, %zero : memref<64x128xf32, #tile.space<fragment>>, f32
    tile.pipelined %k = %c0 to %c128 step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<512x8192xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %col] [64, 128] to %b[%c0, %c0] [64, 128] : memref<8192x1024xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
    tile.copy %c[%c0, %c0] [64, 128] to %C[%row, %col] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<512x1024xf32>
  }
  return
}
}

// -----

// Tile and iteration counts known at compile time: stream-K only where it
// pays on 132 SMs. 8 x 8 tiles of 16 iterations: a share of 8 plus the
// fix-up is longer than a tile; the plain persistent kernel.
// CHECK-LABEL: func.func @stream_k_not_paying
// CHECK: attributes {tile.persistent, tile.producer_threads = 128 : i64}
// CHECK-NOT: tile.semaphore
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stream_k_not_paying(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %C: memref<1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  tile.kernel blocks(%bx, %by) in (%c8, %c8) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    tile.fill %c, %zero : memref<64x128xf32, #tile.space<fragment>>, f32
    tile.pipelined %k = %c0 to %c16 step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [64, 64] to %a[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%kk, %col] [64, 128] to %b[%c0, %c0] [64, 128] : memref<1024x1024xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    }
    tile.copy %c[%c0, %c0] [64, 128] to %C[%row, %col] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<1024x1024xf32>
  }
  return
}
}

// -----

// A buffer a tile.view names has no stages (the view addresses one): its
// copy is not multi-buffered (it stays a synchronous copy in the loop),
// while the other copy is pipelined.
// CHECK-LABEL: func.func @viewed_buffer
// CHECK: %[[A:.*]] = tile.alloc_shared : memref<64x32xf16
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 2>, tile.drained} : memref<2x64x32xf16
// CHECK: scf.for
// CHECK: tile.copy %{{.*}} to %[[A]][%{{.*}}] [64, 32] : memref<256x256xf16>
// CHECK-NOT: tile.copy {{.*}} to %[[A]]{{.*}}async
func.func @viewed_buffer(%A: memref<256x256xf16>, %F: memref<2048xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %a : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 32] to %b[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %flat[%c0] [2048] to %F[%c0] [2048] : memref<2048xf16, #gpu.address_space<workgroup>> to memref<2048xf16>
      tile.copy %b[%c0, %c0] [64, 32] to %A[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<256x256xf16>
    }
  }
  return
}

// -----

// The copies start at a value the kernel's prelude computes into a local
// variable (T.alloc_var: the smallest of the block's window starts, read
// from a table) and the trip count comes from it too: every thread runs the
// prelude before the roles split, so the producer's copies read the same
// value, and the kernel is not persistent (its bounds differ per block,
// through the variable).
// CHECK-LABEL: func.func @local_start_warp_specialized
// CHECK: tile.kernel blocks(%[[BX:.*]]) in (%{{.*}}) threads = 128 attributes {tile.producer_threads = 128 : i64}
// CHECK: %[[LO:.*]] = tile.alloc_local : memref<1xi32, #tile.space<local>>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[LO]]
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[PRODUCER:.*]] = arith.cmpi uge, %[[TID]], %c128
// CHECK: scf.if %[[PRODUCER]] {
// CHECK: scf.for
// CHECK: tile.producer_acquire
// CHECK: memref.load %[[LO]]
// CHECK: tile.tma_load
// CHECK: } else {
// CHECK: tile.consumer_wait
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @local_start_warp_specialized(%A: memref<?x64xf16>, %starts: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %big = arith.constant 1000000 : i32
  tile.kernel blocks(%bx) in (%c4) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %lo = tile.alloc_local : memref<1xi32, #tile.space<local>>
    memref.store %big, %lo[%c0] : memref<1xi32, #tile.space<local>>
    scf.for %t = %c0 to %c4 step %c1 {
      %q = arith.muli %bx, %c4 : index
      %i = arith.addi %q, %t : index
      %s = memref.load %starts[%i] : memref<?xi32>
      %old = memref.load %lo[%c0] : memref<1xi32, #tile.space<local>>
      %m = arith.minsi %old, %s : i32
      memref.store %m, %lo[%c0] : memref<1xi32, #tile.space<local>>
    }
    %first = memref.load %lo[%c0] : memref<1xi32, #tile.space<local>>
    %n32 = arith.subi %big, %first : i32
    %n = arith.index_cast %n32 : i32 to index
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %l = memref.load %lo[%c0] : memref<1xi32, #tile.space<local>>
      %li = arith.index_cast %l : i32 to index
      %kk = arith.muli %k, %c64 : index
      %row = arith.addi %li, %kk : index
      tile.copy %A[%row, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<?x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %a, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// A local variable the loop itself writes could change between the
// iteration that reads it ahead and the one that asked: not pipelined.
// CHECK-LABEL: func.func @local_written_in_loop
// CHECK: tile.pipelined
// CHECK-NOT: {async}
// CHECK-NOT: tile.tma_load
func.func @local_written_in_loop(%A: memref<512x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64_i32 = arith.constant 64 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %at = tile.alloc_local : memref<1xi32, #tile.space<local>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %l = memref.load %at[%c0] : memref<1xi32, #tile.space<local>>
      %row = arith.index_cast %l : i32 to index
      tile.copy %A[%row, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<512x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      %next = arith.addi %l, %c64_i32 : i32
      memref.store %next, %at[%c0] : memref<1xi32, #tile.space<local>>
    }
  }
  return
}

// -----

// Four consumer warpgroups (512 threads): 96 registers a thread at launch
// (65536 / 640), the producer's 128 x 56 released shared by 512 threads:
// 96 + 14, rounded down to 8 = 104 (asking for more would wait forever).
// CHECK-LABEL: func.func @four_consumer_warpgroups
// CHECK: tile.pipeline stages = 2, consumers = 512
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 104
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @four_consumer_warpgroups(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.kernel blocks(%bx) in (%c1) threads = 512 {
    %c = tile.alloc_fragment : memref<256x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<256x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %kk] [256, 64] to %a[%c0, %c0] [256, 64] : memref<1024x1024xf16> to memref<256x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c64, %kk] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 16, warps_n = 1, a = shared, depth = 0>} : memref<256x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<256x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}

// -----

// Two pipelined loops filling the same shared tile (two phases of a kernel):
// the tile gets one allocation per loop, so each loop stages its own and
// both are pipelined; each drains (wait for all groups, barrier) after its
// loop. A tile the second loop reads before overwriting it stays shared
// (and unpipelined there).
// CHECK-LABEL: func.func @two_loops
// CHECK: %[[FIRST:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 2>, tile.drained} : memref<2x64x32xf16
// CHECK: %[[SECOND:.*]] = tile.alloc_shared {layout = #tile.shared<stages = 2>, tile.drained} : memref<2x64x32xf16
// CHECK: %[[KEPT:.*]] = tile.alloc_shared : memref<64x32xf16
// CHECK: scf.for
// CHECK:   tile.stage %[[FIRST]]
// CHECK: } {tile.num_stages = 2 : i64}
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK:   tile.stage %[[SECOND]]
// CHECK: } {tile.num_stages = 2 : i64}
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: tile.copy {{.*}} to %[[KEPT]]{{.*}}{async}
func.func @two_loops(%A: memref<256x256xf16>, %B: memref<64x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %kept = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c0, %kk] [64, 32] to %kept[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %a[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
    }
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 2 {
      %kk = arith.muli %k, %c32 : index
      tile.copy %kept[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
      tile.copy %A[%kk, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%kk, %c0] [64, 32] to %kept[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %a[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
    }
    tile.copy %f[%c0, %c0] [64, 32] to %B[%c0, %c0] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}


// -----

// A kernel launched in clusters of two blocks along x: not persistent (its
// grid is kept), and the copy whose tile does not depend on bx (A's rows
// come from by) is multicast to both blocks (tile.cluster_mask = 3 on the
// load and on the pipeline); B's tile, which bx picks, is each block's own.
// CHECK-LABEL: func.func @cluster_multicast
// CHECK-NOT: tile.persistent
// CHECK: tile.pipeline stages = 4, consumers = 256 {tile.cluster_mask = 3 : i64}
// CHECK: tile.tma_load {{.*}} {tile.cluster_mask = 3 : i64} : memref<128x64xf16
// CHECK-NOT: tile.cluster_mask
// CHECK: tile.tma_load {{.*}} : memref<64x64xf16
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @cluster_multicast(%A: memref<1024x1024xf16>, %B: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx, %by) in (%c2, %c2) threads = 256 attributes {tile.cluster_dims = array<i32: 2, 1, 1>} {
    %c = tile.alloc_fragment : memref<128x64xf32, #tile.space<fragment>>
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c64 : index
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 4 {
      %kk = arith.muli %k, %c64 : index
      tile.copy %A[%row, %kk] [128, 64] to %a[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.copy %B[%col, %kk] [64, 64] to %b[%c0, %c0] [64, 64] : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 1>} : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf32, #tile.space<fragment>>
    }
  }
  return
}
}
