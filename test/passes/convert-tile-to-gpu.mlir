// RUN: tlc-opt %s -split-input-file --tile-target=sm_80 -tile-select-mma -tile-infer-layout -tile-allocate-shared-memory -tile-insert-barriers -tile-outline-kernels -convert-tile-to-gpu -canonicalize -verify-diagnostics | FileCheck %s
// RUN: tlc-opt %s -split-input-file --tile-target=sm_90a -tile-select-mma -tile-infer-layout -tile-swizzle-shared-memory -tile-allocate-shared-memory -tile-insert-barriers -tile-outline-kernels -convert-tile-to-gpu -canonicalize -verify-diagnostics | FileCheck %s --check-prefix=WGMMA

// A dynamic-size tensor into a fragment: each thread issues 16-byte vector
// loads guarded by the bounds (zero outside) and by row alignment (else
// element-wise), into its register array.
// CHECK-LABEL: gpu.func @load_dynamic
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<8xf32>
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %c4
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK:   vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK:   memref.load
// CHECK: vector.store %{{.*}}, %[[REGS]][%c0] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[REGS]][%c4] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
// CHECK-NOT: tile.{{copy|fill|parallel|alloc}}
func.func @load_dynamic(%A: memref<?x?xf32>, %B: memref<8x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<8x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [8, 128] to %f[%c0, %c0] [8, 128] : memref<?x?xf32> to memref<8x128xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [8, 128] to %B[%c0, %c0] [8, 128] : memref<8x128xf32, #tile.space<fragment>> to memref<8x128xf32>
  }
  return
}

// -----

// A static, aligned tensor needs no element-wise fallback; writes are masked
// by the bounds alone. The parallel loop runs on the thread's registers.
// CHECK-LABEL: gpu.func @double
// CHECK-NOT: arith.remui
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<100x128xf32>, vector<4xf32>
// CHECK: memref.load %[[REGS]][%c0] : memref<4xf32>
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[REGS]][%c0] : memref<4xf32>
// CHECK: memref.load %[[REGS]][%c3] : memref<4xf32>
// CHECK: scf.if
// CHECK-NEXT: vector.store %{{.*}} {alignment = 16 : i64} : memref<100x128xf32>, vector<4xf32>
func.func @double(%A: memref<100x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<4x128xf32, #tile.space<fragment>>
    %i = arith.muli %bx, %c4 : index
    tile.copy %A[%i, %c0] [4, 128] to %f[%c0, %c0] [4, 128] : memref<100x128xf32> to memref<4x128xf32, #tile.space<fragment>>
    tile.parallel (%ii, %jj) in [4, 128] {
      %x = memref.load %f[%ii, %jj] : memref<4x128xf32, #tile.space<fragment>>
      %y = arith.addf %x, %x : f32
      memref.store %y, %f[%ii, %jj] : memref<4x128xf32, #tile.space<fragment>>
    }
    tile.copy %f[%c0, %c0] [4, 128] to %A[%i, %c0] [4, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<100x128xf32>
  }
  return
}

// -----

// Global -> shared: consecutive threads copy consecutive 16-byte vectors out
// of the block's dynamic shared memory (barriers are tile-insert-barriers'
// job: none here).
// 128 threads x 8 elements cover 32 rows a round, so a thread's indices are
// computed once and its second round is 32 rows further (no loop).
// CHECK-LABEL: gpu.func @to_shared
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[VIEW:.*]] = memref.view %[[SMEM]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: scf.for
// CHECK: %[[ROW:.*]] = affine.apply
// CHECK: %[[COL:.*]] = affine.apply
// CHECK: vector.load %{{.*}}[%[[ROW]], %[[COL]]] {{.*}} : memref<1024x1024xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[VIEW]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: %[[ROW2:.*]] = arith.addi %[[ROW]], %c32 : index
// CHECK: vector.load %{{.*}}[%[[ROW2]], %[[COL]]] {{.*}} : memref<1024x1024xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[VIEW]][%[[ROW2]], %[[COL]]]
// CHECK-NOT: vector.store
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @to_shared(%A: memref<1024x1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<1024x1024xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A predicated async copy: the predicate joins the bounds checks, so where it
// is false cp.async reads nothing (source size 0) and zero-fills its 16
// bytes. The source address is not clamped: nothing is read through it.
// CHECK-LABEL: gpu.func @predicated_async
// CHECK-SAME: %[[P:[a-z0-9]+]]: i1
// CHECK: %[[R:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.cmpi ult, %[[R]], %c1024 : index
// CHECK: %[[ROWP:.*]] = arith.andi %[[ROW]], %[[P]] : i1
// CHECK: %[[ALL:.*]] = arith.andi %[[ROWP]], %{{.*}} : i1
// CHECK: %[[SIZE:.*]] = arith.select %[[ALL]], %{{.*}}, %c0 : index
// CHECK: nvgpu.device_async_copy %{{.*}}[%[[R]], %{{.*}}], %{{.*}}[%{{.*}}, %{{.*}}], 8, %[[SIZE]] {bypassL1}
// CHECK-NOT: scf.if
func.func @predicated_async(%A: memref<1024x1024xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%bx, %c0] [64, 32] to %s[%c0, %c0] [64, 32] if %p {async} : memref<1024x1024xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
  }
  return
}

// -----

// tile.pipelined without copies to run ahead lowers to a plain scf.for; the
// one barrier is tile-insert-barriers' (each iteration rewrites what the last
// one wrote), the conversion adds none of its own.
// CHECK-LABEL: gpu.func @loop_barriers
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: } {tile.num_stages = 3 : i64}
func.func @loop_barriers(%A: memref<1024x1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 3 {
      tile.fill %s, %zero : memref<64x32xf16, #gpu.address_space<workgroup>>, f16
    }
  }
  return
}

// -----

// A 64x64 gemm over 4 warps (2x2, 32x32 each): per 16-deep slice of K each
// warp loads 2 A atoms (ldmatrix.x4) and 4 B atoms (2 ldmatrix.x4.trans) and
// issues 2x4 mma.sync; K = 32 gives 16 in all, accumulating from zero.
// CHECK-LABEL: gpu.func @gemm_f16
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<32xf32>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x32xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<32x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: memref.store %{{.*}}, %[[REGS]][%c31]
func.func @gemm_f16(%A: memref<64x32xf16>, %B: memref<32x64xf16>, %C: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {clear_accum} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// bf16 with B stored N x K: non-transposed B loads, and nvvm.mma.sync on the
// packed registers (nvgpu.mma.sync does not type bf16).
// CHECK-LABEL: gpu.func @gemm_bf16_nt
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x32xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
func.func @gemm_bf16_nt(%C: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xbf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x32xbf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {transpose_b} : memref<64x32xbf16, #gpu.address_space<workgroup>>, memref<64x32xbf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A swizzled shared buffer is addressed through a flat view at the XOR-ed
// byte offset.
// CHECK-LABEL: gpu.func @swizzled_store
// CHECK: %[[FLAT:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: arith.shrui
// CHECK: arith.andi %{{.*}}, %c48
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<8xf16>
func.func @swizzled_store(%A: memref<64x32xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>} : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A row max of an 8x256 tile over 128 threads: each thread folds its 4
// registers of a row, then 5 xor shuffles combine the warp's lanes, then the
// two warps holding a row meet in shared scratch (leaders write, barrier,
// everyone reads both). Nothing touched the scratch before: no barrier
// before the leaders write.
// CHECK-LABEL: gpu.func @row_max
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: %[[SCRATCH:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x2xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
func.func @row_max(%X: memref<8x256xf32>, %Out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [8, 256] to %x[%c0, %c0] [8, 256] : memref<8x256xf32> to memref<8x256xf32, #tile.space<fragment>>
    tile.reduce %x to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
    tile.copy %m[%c0] [8] to %Out[%c0] [8] : memref<8xf32, #tile.space<fragment>> to memref<8xf32>
  }
  return
}

// -----

// A row vector in a loop over the tile: iteration (t, r) reads the row
// register its element's row lives in (here 4 elements per row register).
// CHECK-LABEL: gpu.func @subtract_row
// CHECK: %[[ROWS:.*]] = memref.alloca() : memref<4xf32>
// CHECK: memref.load %[[ROWS]][%c0] : memref<4xf32>
// CHECK: arith.subf
// CHECK: memref.load %[[ROWS]][%c3] : memref<4xf32>
func.func @subtract_row(%X: memref<8x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %x = tile.alloc_fragment : memref<8x256xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<8xf32, #tile.space<fragment>>
    tile.copy %X[%c0, %c0] [8, 256] to %x[%c0, %c0] [8, 256] : memref<8x256xf32> to memref<8x256xf32, #tile.space<fragment>>
    tile.reduce %x to %m {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [8, 256] {
      %v = memref.load %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
      %r = memref.load %m[%i] : memref<8xf32, #tile.space<fragment>>
      %d = arith.subf %v, %r : f32
      memref.store %d, %x[%i, %j] : memref<8x256xf32, #tile.space<fragment>>
    }
    tile.copy %x[%c0, %c0] [8, 256] to %X[%c0, %c0] [8, 256] : memref<8x256xf32, #tile.space<fragment>> to memref<8x256xf32>
  }
  return
}

// -----

// The second gemm takes A from registers: its operand is built from the
// registers (no ldmatrix for A), after the fp32 -> fp16 copy converted each
// register in place.
// CHECK-LABEL: gpu.func @a_in_registers
// CHECK: %[[S:.*]] = memref.alloca() : memref<32xf32>
// CHECK: %[[P:.*]] = memref.alloca() : memref<32xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %[[P]][%c31] : memref<32xf16>
// CHECK: memref.load %[[P]][%c0] : memref<32xf16>
// CHECK-NOT: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
func.func @a_in_registers(%O: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %s {clear_accum, policy = #tile.warp_policy<full_row>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
    tile.gemm %p, %v, %o {clear_accum, policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %o[%c0, %c0] [64, 64] to %O[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// With the Square policy the first gemm's accumulator splits rows over two
// warps, which the second gemm's A operand (replicated by row block) does
// not: the copy between them converts through shared memory. Each thread
// stores its 16 accumulator pairs (as f16) into the staging view, the block
// meets, and each thread loads the 32 pairs its A-operand layout holds. The
// staging bytes are not the gemm's operands': no barrier before the stores.
// CHECK-LABEL: gpu.func @layouts_disagree
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: %[[STAGE:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-16: vector.store %{{.*}}, %[[STAGE]][%{{.*}}] {alignment = 4 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: vector.store %{{.*}}, %[[STAGE]]
// CHECK: gpu.barrier
// CHECK-COUNT-32: vector.load %[[STAGE]][%{{.*}}] {alignment = 4 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: vector.load %[[STAGE]]
// CHECK: nvgpu.mma.sync
func.func @layouts_disagree() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %v = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %p = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    %o = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %s : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
    tile.gemm %p, %v, %o : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A staged store: each thread writes its 2-element runs into the swizzled
// staging buffer, the block meets at a barrier, then reads 16-byte vectors
// and stores them to global memory.
// CHECK-LABEL: gpu.func @staged_epilogue
// CHECK: %[[FLAT:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 8 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: vector.load %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<64x64xf32>, vector<4xf32>
func.func @staged_epilogue(%C: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %c = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Fragment prefetch: a loop tile-pipeline-loops made whose body is its
// copies and one gemm on the current stage. The wait and barrier leave the
// top of the body: the first iteration's first K slice is loaded before the
// loop, and each iteration waits and meets after loading its last slice,
// then loads the next stage's first slice into the carried registers before
// issuing the last slice's mma.sync.
// CHECK-LABEL: gpu.func @prefetch_loop
// CHECK: %[[NEXT:.*]] = memref.alloca() : memref<32xf16>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK: vector.store %{{.*}}, %[[NEXT]][%c30]
// CHECK-NEXT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %[[NEXT]][%c0]
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK-NOT: nvgpu.mma.sync
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK: vector.store %{{.*}}, %[[NEXT]][%c30]
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: } {tile.num_stages = 3 : i64}
func.func @prefetch_loop(%arg0: memref<256x256xf16>, %arg1: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%arg2) in (%c1) threads = 128 {
    %0 = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %1 = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %2 = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %c0_0 = arith.constant 0 : index
    %3 = arith.muli %c1, %c0_0 : index
    %4 = arith.addi %c0, %3 : index
    %c0_1 = arith.constant 0 : index
    %5 = arith.cmpi slt, %4, %arg1 : index
    %6 = arith.muli %4, %c32 : index
    %7 = tile.stage %0[%c0_1] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%c0, %6] [64, 32] to %7[%c0, %c0] [64, 32] if %5 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %8 = tile.stage %1[%c0_1] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%6, %c0] [32, 64] to %8[%c0, %c0] [32, 64] if %5 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    %c1_2 = arith.constant 1 : index
    %9 = arith.muli %c1, %c1_2 : index
    %10 = arith.addi %c0, %9 : index
    %c1_3 = arith.constant 1 : index
    %11 = arith.cmpi slt, %10, %arg1 : index
    %12 = arith.muli %10, %c32 : index
    %13 = tile.stage %0[%c1_3] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%c0, %12] [64, 32] to %13[%c0, %c0] [64, 32] if %11 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %14 = tile.stage %1[%c1_3] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%12, %c0] [32, 64] to %14[%c0, %c0] [32, 64] if %11 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    scf.for %arg3 = %c0 to %arg1 step %c1 {
      %15 = arith.subi %arg3, %c0 : index
      %16 = arith.divsi %15, %c1 : index
      %c3 = arith.constant 3 : index
      %17 = arith.remsi %16, %c3 : index
      nvvm.cp.async.wait.group 1
      gpu.barrier
      %c2 = arith.constant 2 : index
      %18 = arith.muli %c1, %c2 : index
      %19 = arith.addi %arg3, %18 : index
      %c3_4 = arith.constant 3 : index
      %c2_5 = arith.constant 2 : index
      %20 = arith.addi %16, %c2_5 : index
      %21 = arith.remsi %20, %c3_4 : index
      %22 = arith.cmpi slt, %19, %arg1 : index
      %23 = arith.muli %19, %c32 : index
      %24 = tile.stage %0[%21] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%c0, %23] [64, 32] to %24[%c0, %c0] [64, 32] if %22 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %25 = tile.stage %1[%21] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%23, %c0] [32, 64] to %25[%c0, %c0] [32, 64] if %22 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      %26 = tile.stage %0[%17] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %27 = tile.stage %1[%17] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      %28 = arith.muli %arg3, %c32 : index
      tile.gemm %26, %27, %2 : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    } {tile.num_stages = 3 : i64}
    nvvm.cp.async.wait.group 0
  }
  return
}

// -----

// Something besides the gemm in the body (here a fill after it): the loop
// keeps its wait and barrier at the top and no slice is carried.
// CHECK-LABEL: gpu.func @no_prefetch_loop
// CHECK-NOT: memref<32xf16>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.ldmatrix
// CHECK: } {tile.num_stages = 3 : i64}
func.func @no_prefetch_loop(%arg0: memref<256x256xf16>, %arg1: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%arg2) in (%c1) threads = 128 {
    %0 = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %1 = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
    %2 = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %c0_0 = arith.constant 0 : index
    %3 = arith.muli %c1, %c0_0 : index
    %4 = arith.addi %c0, %3 : index
    %c0_1 = arith.constant 0 : index
    %5 = arith.cmpi slt, %4, %arg1 : index
    %6 = arith.muli %4, %c32 : index
    %7 = tile.stage %0[%c0_1] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%c0, %6] [64, 32] to %7[%c0, %c0] [64, 32] if %5 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %8 = tile.stage %1[%c0_1] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%6, %c0] [32, 64] to %8[%c0, %c0] [32, 64] if %5 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    %c1_2 = arith.constant 1 : index
    %9 = arith.muli %c1, %c1_2 : index
    %10 = arith.addi %c0, %9 : index
    %c1_3 = arith.constant 1 : index
    %11 = arith.cmpi slt, %10, %arg1 : index
    %12 = arith.muli %10, %c32 : index
    %13 = tile.stage %0[%c1_3] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%c0, %12] [64, 32] to %13[%c0, %c0] [64, 32] if %11 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %14 = tile.stage %1[%c1_3] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.copy %arg0[%12, %c0] [32, 64] to %14[%c0, %c0] [32, 64] if %11 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    scf.for %arg3 = %c0 to %arg1 step %c1 {
      %15 = arith.subi %arg3, %c0 : index
      %16 = arith.divsi %15, %c1 : index
      %c3 = arith.constant 3 : index
      %17 = arith.remsi %16, %c3 : index
      nvvm.cp.async.wait.group 1
      gpu.barrier
      %c2 = arith.constant 2 : index
      %18 = arith.muli %c1, %c2 : index
      %19 = arith.addi %arg3, %18 : index
      %c3_4 = arith.constant 3 : index
      %c2_5 = arith.constant 2 : index
      %20 = arith.addi %16, %c2_5 : index
      %21 = arith.remsi %20, %c3_4 : index
      %22 = arith.cmpi slt, %19, %arg1 : index
      %23 = arith.muli %19, %c32 : index
      %24 = tile.stage %0[%21] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%c0, %23] [64, 32] to %24[%c0, %c0] [64, 32] if %22 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %25 = tile.stage %1[%21] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%23, %c0] [32, 64] to %25[%c0, %c0] [32, 64] if %22 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      %26 = tile.stage %0[%17] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %27 = tile.stage %1[%17] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      %28 = arith.muli %arg3, %c32 : index
      tile.gemm %26, %27, %2 : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      %zero = arith.constant 0.0 : f32
      tile.fill %2, %zero : memref<64x64xf32, #tile.space<fragment>>, f32
    } {tile.num_stages = 3 : i64}
    nvvm.cp.async.wait.group 0
  }
  return
}

// -----

// An NT gemm wgmma can run (64 x 128 x K 64, 128 threads = one warpgroup;
// the operands carry the 128-byte swizzle tile-swizzle-shared-memory gives).
// With wgmma: a fence.proxy.async before every barrier (the threads' shared
// writes, then the tensor cores' reads), descriptors from the operands'
// shared addresses, and between a wgmma.fence and a commit + wait one
// m64n128k16 per 16-deep K slice. Without it: ldmatrix + mma.sync.
// CHECK-LABEL: gpu.func @wgmma_gemm
// CHECK-NOT: wgmma
// CHECK: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync
// WGMMA-LABEL: gpu.func @wgmma_gemm
// WGMMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA-NEXT: gpu.barrier
// WGMMA: memref.extract_aligned_pointer_as_index
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// WGMMA: nvvm.wgmma.mma_async
// WGMMA: nvvm.wgmma.mma_async
// WGMMA: nvvm.wgmma.mma_async
// WGMMA-NOT: nvvm.wgmma.mma_async
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-NOT: nvgpu.ldmatrix
// WGMMA-NOT: nvgpu.mma.sync
func.func @wgmma_gemm(%A: memref<64x64xf16>, %B: memref<128x64xf16>, %C: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %B[%c0, %c0] [128, 64] to %b[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {clear_accum, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// A gemm issued with wg_wait = -1 commits its group and waits for nothing;
// tile.wait_wgmma is one inline PTX wait whose operands are the completed
// accumulator's 64 registers, tied in and out (no read of them moves above
// it). On mma.sync the wait lowers to nothing.
// CHECK-LABEL: gpu.func @wgmma_deferred
// CHECK: nvgpu.mma.sync
// CHECK-NOT: wgmma
// CHECK: gpu.return
// WGMMA-LABEL: gpu.func @wgmma_deferred
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NOT: nvvm.wgmma.wait.group.sync.aligned
// WGMMA: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "=f,=f,{{.*}},=f,0,1,2,{{.*}},62,63"
// WGMMA-NOT: nvvm.wgmma.wait.group.sync.aligned
// WGMMA: gpu.return
func.func @wgmma_deferred(%A: memref<64x64xf16>, %B: memref<128x64xf16>, %C: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %B[%c0, %c0] [128, 64] to %b[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {clear_accum, transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 0 : i64}
    tile.copy %c[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// Two warpgroups side by side along N (FullCol, 64 rows): each issues
// m64n128 wgmmas on its own half of B, 128 / 64 column blocks of 64 K rows x
// 128 bytes (16384 bytes) further for the second. The warpgroup index is
// broadcast from lane 0 (ptxas then keeps the descriptors in uniform
// registers).
// WGMMA-LABEL: gpu.func @wgmma_warpgroups_along_n
// WGMMA: gpu.shuffle  idx
// WGMMA: arith.divui %{{.*}}, %c2_i64 : i64
// WGMMA: %[[N:.*]] = arith.remui %{{.*}}, %c2_i64 : i64
// WGMMA: arith.muli %[[N]], %c16384_i64 : i64
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// WGMMA-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// WGMMA-NOT: nvvm.wgmma.mma_async
func.func @wgmma_warpgroups_along_n(%A: memref<64x64xf16>, %B: memref<64x256xf16>, %C: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<64x256xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x256xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %B[%c0, %c0] [64, 256] to %b[%c0, %c0] [64, 256] : memref<64x256xf16> to memref<64x256xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {clear_accum, policy = #tile.warp_policy<full_col>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x256xf16, #gpu.address_space<workgroup>>, memref<64x256xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 256] to %C[%c0, %c0] [64, 256] : memref<64x256xf32, #tile.space<fragment>> to memref<64x256xf32>
  }
  return
}

// -----

// In a loop over a persistent kernel's tiles (tile.tile_loop), the thread
// index is read anew at the top of the body by an opaque mov: the copy's
// per-thread offsets are computed from it inside the loop (the kernel's own
// gpu.thread_id is left unused and folded away).
// CHECK-LABEL: gpu.func @tile_loop
// CHECK-NOT: gpu.thread_id
// CHECK: scf.for
// CHECK-NEXT: %[[READ:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %tid.x;", "=r"  : () -> i32
// CHECK-NEXT: arith.index_castui %[[READ]] : i32 to index
// CHECK-NOT: gpu.thread_id
// CHECK: } {tile.tile_loop}
func.func @tile_loop(%A: memref<64x128xf32>, %B: memref<64x128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    scf.for %t = %c0 to %n step %c1 {
      tile.copy %A[%c0, %c0] [64, 128] to %f[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
      tile.copy %f[%c0, %c0] [64, 128] to %B[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
    } {tile.tile_loop}
  }
  return
}

// -----

// An NN gemm on wgmma: B (K x N) is stored as 64-column blocks, so its
// copy addresses ((n / 64) * 64 + k) * 64 + n % 64 before the swizzle; the
// B descriptors are N-major (leading offset 64 x 128 bytes between column
// blocks, 1024 between 8-row groups: 0x4000004002000000 plus the address)
// and the wgmma transposes B (layout row).
// WGMMA-LABEL: gpu.func @wgmma_nn
// WGMMA: arith.divui %{{.*}}, %c64 : index
// WGMMA: arith.remui %{{.*}}, %c64 : index
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA: arith.ori %{{.*}}, %c4611686293338849280_i64 : i64
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
func.func @wgmma_nn(%A: memref<64x64xf16>, %B: memref<64x128xf16>, %C: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<64x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %B[%c0, %c0] [64, 128] to %b[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {clear_accum} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [64, 128] to %C[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
  }
  return
}

// -----

// tile.shared_ptr: the shared-window address of the element (the view's
// aligned pointer plus its byte offset). In a warp-specialized kernel
// (tile.producer_threads) the program's barriers meet the consumer threads
// only: named barrier 1 over 128 threads, not the block's barrier 0.
// CHECK-LABEL: gpu.func @consumer_barriers
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK: %[[AT:.*]] = arith.addi %[[BASE]], %c8 : index
// CHECK: %[[I:.*]] = arith.index_castui %[[AT]] : index to i64
// CHECK: %[[P:.*]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[P]]
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
func.func @consumer_barriers(%out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %x = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    %p = tile.shared_ptr %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    nvvm.mbarrier.init %p, %one : !llvm.ptr<3>, i32
    %s = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
    tile.fill %s, %x : memref<64xf32, #gpu.address_space<workgroup>>, f32
    tile.copy %s[%c0] [64] to %out[%c0] [64] : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
  }
  return
}

// -----

// An atomic add into a global tensor in a parallel loop (T.atomic_add) is
// guarded by the tensor's bounds, like a store: outside it nothing is added.
// CHECK-LABEL: gpu.func @atomic_into_global
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: memref.atomic_rmw addf %{{.*}}, %{{.*}}[%{{.*}}] : (f32, memref<?xf32>) -> f32
func.func @atomic_into_global(%out: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    tile.parallel (%i) in [128] {
      %old = memref.atomic_rmw addf %x, %out[%i] : (f32, memref<?xf32>) -> f32
    }
  }
  return
}

// -----

// Adding into a fragment atomically means nothing: an error.
func.func @atomic_into_fragment() {
  %c1 = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
    tile.parallel (%i) in [128] {
      // expected-error @+1 {{'memref.atomic_rmw' op adds atomically into global tensors only}}
      %old = memref.atomic_rmw addf %x, %f[%i] : (f32, memref<128xf32, #tile.space<fragment>>) -> f32
    }
  }
  return
}
