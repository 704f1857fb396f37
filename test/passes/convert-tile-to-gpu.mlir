// RUN: tlc-opt %s -split-input-file -tile-infer-layout -tile-allocate-shared-memory -tile-outline-kernels -convert-tile-to-gpu -canonicalize -verify-diagnostics | FileCheck %s

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
// of the block's dynamic shared memory, then all threads meet at a barrier.
// CHECK-LABEL: gpu.func @to_shared
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[VIEW:.*]] = memref.view %[[SMEM]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK:   vector.load %{{.*}} : memref<1024x1024xf16>, vector<8xf16>
// CHECK:   vector.store %{{.*}}, %[[VIEW]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: gpu.barrier
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

// Inside a loop, a write to shared memory waits for the previous iteration's
// readers first; tile.pipelined runs as a plain scf.for for now.
// CHECK-LABEL: gpu.func @loop_barriers
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK: gpu.barrier
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
    %s = tile.alloc_shared {swizzle = #tile.swizzle<bits = 2, base = 4, shift = 3>} : memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
  }
  return
}

// -----

// A row max of an 8x256 tile over 128 threads: each thread folds its 4
// registers of a row, then 5 xor shuffles combine the warp's lanes, then the
// two warps holding a row meet in shared scratch (leaders write, barrier,
// everyone reads both).
// CHECK-LABEL: gpu.func @row_max
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: %[[SCRATCH:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x2xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
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
// not: the copy between them would need a layout conversion.
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
    // expected-error @+1 {{'tile.copy' op copies between fragments of different layouts; layout conversion is not supported yet}}
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
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 8 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: scf.for
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
