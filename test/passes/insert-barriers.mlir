// RUN: tlc-opt %s -split-input-file -tile-insert-barriers | FileCheck %s

// RAW: a copy writes a shared buffer that a gemm then reads: one barrier
// between them. The two copies write different bytes: none between them.
// CHECK-LABEL: func.func @raw
// CHECK: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NOT: gpu.barrier
func.func @raw(%A: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// WAR across a loop's back edge: each iteration writes the buffer the
// previous one read, so a barrier goes before the write as well as between
// the write and the read; reads alone need none.
// CHECK-LABEL: func.func @war_in_loop
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: }
func.func @war_in_loop(%A: memref<64x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A tile loaded before a loop and read in every iteration: the barrier goes
// before the loop, not into its body. A loop whose body does not touch the
// bytes written before it gets none.
// CHECK-LABEL: func.func @hoisted
// CHECK: tile.copy
// CHECK-NEXT: scf.for
// CHECK-NEXT: tile.fill
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT: tile.fill
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
func.func @hoisted(%A: memref<64x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      tile.fill %c, %f0 : memref<64x64xf32, #tile.space<fragment>>, f32
    }
    scf.for %k = %c0 to %n step %c1 {
      tile.fill %c, %f0 : memref<64x64xf32, #tile.space<fragment>>, f32
      tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A pipelined loop as tile-pipeline-loops leaves it: async copies are
// ordered by its wait + barrier, which the pass counts; nothing is added.
// CHECK-LABEL: func.func @pipelined
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @pipelined(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 0 : i64} : memref<3x64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      nvvm.cp.async.wait.group 1
      gpu.barrier
      %next = tile.stage %all[%k] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c0, %k] [64, 64] to %next[%c0, %c0] [64, 64] if %true {async} : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      %cur = tile.stage %all[%k] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %cur, %cur, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Element stores in a T.Parallel body, then a read of the same bytes by
// another loop: RAW. A reduction across warps exchanges through its own
// scratch, which nothing before it touched: no barrier before it, although
// it follows a shared write (of other bytes).
// CHECK-LABEL: func.func @parallel_and_reduce
// CHECK: tile.parallel
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-NEXT: tile.parallel
// CHECK: memref.load
// CHECK: tile.parallel
// CHECK: memref.store
// CHECK-NOT: gpu.barrier
// CHECK: tile.reduce
func.func @parallel_and_reduce(%v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf32, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {offset = 16384 : i64} : memref<64x64xf32, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 32 + d1)>} : memref<64x64xf32, #tile.space<fragment>>
    %r = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 2)>} : memref<64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 64] {
      memref.store %v, %s[%i, %j] : memref<64x64xf32, #gpu.address_space<workgroup>>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %s[%i, %j] : memref<64x64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %f[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.parallel (%i, %j) in [64, 64] {
      memref.store %v, %t[%i, %j] : memref<64x64xf32, #gpu.address_space<workgroup>>
    }
    tile.reduce %f to %r {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear, tile.scratch_offset = 32768 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A reduction's scratch counts as written where it meets earlier accesses:
// the second reduction, on the same scratch bytes, waits for the first's
// reads (WAR); a third on scratch of its own does not wait (the second's
// barrier ordered everything before it); a write over the third's scratch
// afterwards waits for its reads.
// CHECK-LABEL: func.func @reduce_scratch_hazards
// CHECK: tile.reduce {{.*}}tile.scratch_offset = 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.reduce {{.*}}tile.scratch_offset = 0
// CHECK-NEXT: tile.reduce {{.*}}tile.scratch_offset = 512
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.parallel
func.func @reduce_scratch_hazards(%v: f32) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared {offset = 512 : i64} : memref<64x2xf32, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 32 + d1)>} : memref<64x64xf32, #tile.space<fragment>>
    %r = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 2)>} : memref<64xf32, #tile.space<fragment>>
    tile.reduce %f to %r {kind = #tile.reduce_kind<sum>, dim = 1 : i64, clear, tile.scratch_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.reduce %f to %r {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear, tile.scratch_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.reduce %f to %r {kind = #tile.reduce_kind<min>, dim = 1 : i64, clear, tile.scratch_offset = 512 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    tile.parallel (%i, %j) in [64, 2] {
      memref.store %v, %s[%i, %j] : memref<64x2xf32, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// The two sides of an scf.if join: a write on one side conflicts with a read
// after the if.
// CHECK-LABEL: func.func @branches
// CHECK: scf.if
// CHECK: tile.fill
// CHECK: } else {
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
func.func @branches(%p: i1, %z: f16) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.if %p {
      tile.fill %a, %z : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    } else {
    }
    tile.gemm %a, %a, %c : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Nothing in shared memory: nothing to order.
// CHECK-LABEL: func.func @no_shared
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @no_shared(%A: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<64x64xf32> to memref<64x64xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [64, 64] to %A[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// Async proxy: the threads write a wgmma gemm's operands (generic proxy),
// the tensor cores read them (async proxy): a fence.proxy.async goes before
// the barrier between, which every writer passes after its writes. An
// mma.sync gemm reads through ldmatrix (generic): no fence.
// CHECK-LABEL: func.func @fence_for_wgmma
// CHECK: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NOT: nvvm.fence.proxy
// CHECK-LABEL: func.func @no_fence_for_mma_sync
// CHECK: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NOT: nvvm.fence.proxy
func.func @fence_for_wgmma(%A: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
func.func @no_fence_for_mma_sync(%A: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %a, %c {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// cp.async writes through the generic proxy too: in a pipelined loop of
// wgmma gemms the fence goes before the pipeliner's own barrier, the one
// between each stage's copies and the gemm reading it, in the body (once),
// and no barrier is added.
// CHECK-LABEL: func.func @fence_in_pipeline
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.fence.proxy
// CHECK: return
func.func @fence_in_pipeline(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 0 : i64} : memref<3x64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      nvvm.cp.async.wait.group 1
      gpu.barrier
      %next = tile.stage %all[%k] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c0, %k] [64, 64] to %next[%c0, %c0] [64, 64] if %true {async} : memref<1024x1024xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      %cur = tile.stage %all[%k] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.gemm %cur, %cur, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// A tile the threads store before a loop and every iteration's wgmma reads
// (attention's Q): the fence goes before the barrier hoisted before the loop;
// a buffer the threads never write (a TMA destination) needs none.
// CHECK-LABEL: func.func @fence_hoisted
// CHECK: tile.copy
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @fence_hoisted(%A: memref<64x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %q = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %q[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %n step %c1 {
      tile.gemm %q, %k, %s {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    }
  }
  return
}

// -----

// Writes after the last barrier, separated from the wgmma only by the
// barrier inside a staged copy (no fence can go there): a fence and a barrier
// of their own before the gemm.
// CHECK-LABEL: func.func @fence_after_protocol
// CHECK: tile.copy {{.*}} to %[[A:.*]][
// CHECK-NEXT: tile.copy {{.*}}tile.staging_offset
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
func.func @fence_after_protocol(%A: memref<64x64xf16>, %O: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %d = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.copy %d[%c0, %c0] [64, 64] to %O[%c0, %c0] [64, 64] {tile.staging_offset = 16384 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
    tile.gemm %a, %a, %c {transpose_b, mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// A prefetching gemm meets the block inside (after reading its stage's last
// K slice; tile.gemm's `prefetch`): nothing goes before it in the loop, and a
// write after the loop into bytes it read waits at a barrier.
// CHECK-LABEL: func.func @prefetching_gemm
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: tile.gemm
// CHECK-NEXT: {{^ +}}}{{$}}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.fill
func.func @prefetching_gemm(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 0 : i64} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 12288 : i64} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
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
    tile.fill %as, %zero : memref<3x64x32xf16, #gpu.address_space<workgroup>>, f16
  }
  return
}

// -----

// A TMA store (tile.tma_store) reads its tile through the async proxy: the
// threads' writes of the tile are fenced (fence.proxy.async) before the
// barrier that orders them before the store. The store goes on reading
// after the op: the tile's next write (the next iteration's) waits for the
// read (cp.async.bulk.wait_group.read) with a barrier after it, and so does
// the end of the kernel. A buffer the store does not read is written with
// no wait.
// CHECK-LABEL: func.func @tma_store
// CHECK: scf.for
// CHECK-NEXT: tile.copy %{{.*}} to %{{[0-9]+}}[
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %[[TILE:[0-9]+]][
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.tma_store %[[TILE]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
func.func @tma_store(%C: memref<4096x4096xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<4096x4096xf16> -> !llvm.ptr
    %s = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %o = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<64x64xf16, #tile.space<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      tile.copy %f[%c0, %c0] [64, 64] to %o[%c0, %c0] [64, 64] : memref<64x64xf16, #tile.space<fragment>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %f[%c0, %c0] [64, 64] to %s[%c0, %c0] [64, 64] : memref<64x64xf16, #tile.space<fragment>> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.tma_store %s to %map[%k, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A TMA store before a loop whose body rewrites the tile: the wait and its
// barrier go before the loop, not into every iteration (whose barrier orders
// one iteration's fill after the previous one's).
// CHECK-LABEL: func.func @tma_store_before_loop
// CHECK: tile.tma_store
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.fill
// CHECK-NEXT: }
// CHECK-NOT: nvvm.cp.async.bulk.wait_group
func.func @tma_store_before_loop(%C: memref<4096x4096xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f16
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<4096x4096xf16> -> !llvm.ptr
    %s = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.tma_store %s to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      tile.fill %s, %cst : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
    }
  }
  return
}

// -----

// Bytes count, not buffers: a buffer given the stored tile's bytes (its
// lifetime begins after the store) waits for the store's read before it is
// written.
// CHECK-LABEL: func.func @tma_store_bytes_reused
// CHECK: tile.tma_store
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.fill
// CHECK-NOT: nvvm.cp.async.bulk.wait_group
func.func @tma_store_bytes_reused(%C: memref<4096x4096xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %map = tile.tensor_map %C {box = array<i64: 64, 64>, swizzle = 128 : i64} : memref<4096x4096xf16> -> !llvm.ptr
    %s = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {offset = 4096 : i64} : memref<256xf32, #gpu.address_space<workgroup>>
    tile.tma_store %s to %map[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>>
    tile.fill %t, %cst : memref<256xf32, #gpu.address_space<workgroup>>, f32
  }
  return
}

// -----

// tile.ws bodies: a barrier inside a body orders that body's own threads
// (a named barrier once lowered); the body whose ops read what the whole
// block wrote gets a block barrier before it (with a fence for the gemm's
// async reads); two bodies of disjoint warpgroups reading the same bytes need
// nothing between them. Across the back edge the block's copy rewrites what
// both bodies read: a barrier of the block before it.
// CHECK-LABEL: func.func @warp_groups
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.ws warpgroups = [0] {
// CHECK-NEXT: tile.copy
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm{{.*}}
// CHECK-NEXT: }
// CHECK-NEXT: tile.ws warpgroups = [1] {
// CHECK-NEXT: tile.copy
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm{{.*}}
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @warp_groups(%A: memref<64x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b0 = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b1 = tile.alloc_shared {offset = 16384 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c0f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %c1f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.ws warpgroups = [0] {
        tile.copy %A[%c0, %c0] [64, 64] to %b0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
        tile.gemm %a, %b0, %c0f {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      }
      tile.ws warpgroups = [1] {
        tile.copy %A[%c0, %c0] [64, 64] to %b1[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
        tile.gemm %a, %b1, %c1f {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      }
    }
  }
  return
}

// -----

// With mbarriers of the program's own (tile.program_barriers), conflicting
// accesses of disjoint warpgroups are the program's to order: the consumer's
// gemm gets no barrier (nor fence) for the producer's copy, the producer's
// copy none for the consumer's earlier read (only its warpgroup's own barrier
// for its write of the previous iteration). What the whole block wrote
// before the loop still gets a block barrier (and fence) before the loop.
// CHECK-LABEL: func.func @program_barriers
// CHECK: tile.copy
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT: tile.ws warpgroups = [0] {
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: }
// CHECK-NEXT: tile.ws warpgroups = [1] {
// CHECK-NEXT: tile.gemm{{.*}}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
func.func @program_barriers(%A: memref<64x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 attributes {tile.program_barriers} {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {offset = 8192 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [64, 64] to %a[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      tile.ws warpgroups = [0] {
        tile.copy %A[%c0, %c0] [64, 64] to %b[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      }
      tile.ws warpgroups = [1] {
        tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 64, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      }
    }
  }
  return
}


// -----

// Atomics into a shared buffer (a histogram) read and write its bytes: a
// barrier after the clear that precedes them and one before the copy that
// reads the counts.
// CHECK-LABEL: func.func @shared_atomics
// CHECK: tile.fill
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.parallel
// CHECK: memref.atomic_rmw addi
// CHECK: gpu.barrier
// CHECK-NEXT: tile.copy
func.func @shared_atomics(%X: memref<128xi32>, %H: memref<16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %c16 = arith.constant 16 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %h = tile.alloc_shared {offset = 0 : i64} : memref<16xi32, #gpu.address_space<workgroup>>
    tile.fill %h, %zero : memref<16xi32, #gpu.address_space<workgroup>>, i32
    tile.parallel (%i) in [128] {
      %x = memref.load %X[%i] : memref<128xi32>
      %b = arith.index_cast %x : i32 to index
      %k = arith.remui %b, %c16 : index
      %old = memref.atomic_rmw addi %one, %h[%k] : (i32, memref<16xi32, #gpu.address_space<workgroup>>) -> i32
    }
    tile.copy %h[%c0] [16] to %H[%c0] [16] : memref<16xi32, #gpu.address_space<workgroup>> to memref<16xi32>
  }
  return
}

// -----

// A view names its allocation's bytes: a write through the view and a read
// of the buffer (and the reverse) are separated by barriers.
// CHECK-LABEL: func.func @through_a_view
// CHECK: %[[A:.*]] = tile.alloc_shared
// CHECK: %[[FLAT:.*]] = tile.view %[[A]]
// CHECK: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.fill %[[FLAT]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %[[A]]
func.func @through_a_view(%A: memref<32x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<32x64xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %a : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<1024xf32, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [32, 64] to %a[%c0, %c0] [32, 64] : memref<32x64xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
    tile.fill %flat, %w : memref<1024xf32, #gpu.address_space<workgroup>>, f32
    tile.copy %a[%c0, %c0] [32, 64] to %A[%c0, %c0] [32, 64] : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16>
  }
  return
}

// -----

// A transpose reads its source and writes its destination: barriers after
// the copy into the source and before the copy out of the destination.
// CHECK-LABEL: func.func @transpose_between
// CHECK: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.transpose
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
func.func @transpose_between(%A: memref<128x128xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared {offset = 0 : i64} : memref<128x128xi8, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {offset = 16384 : i64} : memref<128x128xi8, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [128, 128] to %a[%c0, %c0] [128, 128] : memref<128x128xi8> to memref<128x128xi8, #gpu.address_space<workgroup>>
    tile.transpose %a to %t : memref<128x128xi8, #gpu.address_space<workgroup>> to memref<128x128xi8, #gpu.address_space<workgroup>>
    tile.copy %t[%c0, %c0] [128, 128] to %A[%c0, %c0] [128, 128] : memref<128x128xi8, #gpu.address_space<workgroup>> to memref<128x128xi8>
  }
  return
}

// -----

// Code only some threads run (tile.divergent: an `if` on the thread index):
// the barrier its write needs against the copy in goes before it, the copy
// out meets its write after it; inside, where the other threads would never
// arrive, none goes, not even between its own read and write.
// CHECK-LABEL: func.func @divergent_if
// CHECK: tile.copy
// CHECK-NEXT: gpu.thread_id
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK-NOT: gpu.barrier
// CHECK: } {tile.divergent}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
func.func @divergent_if(%A: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 64 {
    %s = tile.alloc_shared {offset = 0 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    tile.copy %A[%c0] [64] to %s[%c0] [64] : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
    %tx = gpu.thread_id x
    %low = arith.cmpi ult, %tx, %c32 : index
    scf.if %low {
      %i = arith.addi %tx, %c32 : index
      %v = memref.load %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %s[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    } {tile.divergent}
    tile.copy %s[%c0] [64] to %A[%c0] [64] : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
  }
  return
}

// -----

// The same `if` unmarked (every thread runs it or none): its barriers go
// inside, before the read (against the copy in) and between read and write.
// CHECK-LABEL: func.func @uniform_if
// CHECK: scf.if
// CHECK-NEXT: arith.addi
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store
func.func @uniform_if(%A: memref<64xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel blocks(%bx) in (%c1) threads = 64 {
    %s = tile.alloc_shared {offset = 0 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    tile.copy %A[%c0] [64] to %s[%c0] [64] : memref<64xf32> to memref<64xf32, #gpu.address_space<workgroup>>
    %tx = gpu.thread_id x
    scf.if %p {
      %i = arith.addi %tx, %c32 : index
      %v = memref.load %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %s[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    tile.copy %s[%c0] [64] to %A[%c0] [64] : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
  }
  return
}

// -----

// Bodies of warps: warp 0 writes a buffer that warps 1 and 2 then read (a
// block barrier between them); a barrier inside a body orders its own warps
// only; the two bodies writing disjoint buffers need nothing between them.
// CHECK-LABEL: func.func @warp_bodies
// CHECK: tile.ws warps = [0] {
// CHECK-NEXT: tile.fill
// CHECK-NEXT: }
// CHECK-NEXT: tile.ws warps = [1, 2] {
// CHECK-NEXT: tile.fill
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.ws warps = [1, 2] {
// CHECK-NEXT: tile.copy
// CHECK-NEXT: }
func.func @warp_bodies(%Y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 96 {
    %s = tile.alloc_shared {offset = 0 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {offset = 256 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
    tile.ws warps = [0] {
      tile.fill %s, %cst : memref<64xf32, #gpu.address_space<workgroup>>, f32
    }
    tile.ws warps = [1, 2] {
      tile.fill %t, %cst : memref<64xf32, #gpu.address_space<workgroup>>, f32
    }
    tile.ws warps = [1, 2] {
      tile.copy %s[%c0] [64] to %Y[%c0] [64] : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
    }
  }
  return
}

// -----

// A cp.async pipeline's first copies (before its loop) write bytes that a
// buffer read before them held (the allocator gave a drained pipeline's
// stages and that buffer the same bytes): a barrier before those copies.
// Inside the pipeline's loop its own waits and barriers order its copies.
// CHECK-LABEL: func.func @prologue_after_reuse
// CHECK: tile.copy %{{.*}} to %{{.*}} : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
// CHECK-NEXT: tile.stage
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy {{.*}} {async}
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.stage
// CHECK-NEXT: tile.copy {{.*}} {async}
// CHECK-NEXT: tile.copy
// CHECK-NEXT: }
func.func @prologue_after_reuse(%A: memref<256x256xf16>, %C: memref<64x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %before = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>, offset = 0 : i64, tile.drained} : memref<2x64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %before[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %before[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
    %s0 = tile.stage %all[%c0] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    tile.copy %A[%c0, %c0] [64, 32] to %s0[%c0, %c0] [64, 32] if %true {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      nvvm.cp.async.wait.group 0
      gpu.barrier
      %s = tile.stage %all[%c0] : memref<2x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] if %true {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %s[%c0, %c0] [64, 32] to %C[%c0, %c0] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
    } {tile.num_stages = 2 : i64}
  }
  return
}

// -----

// Per-thread element stores at indices of the thread's own (TileLang's
// fine-grained dequantizing: each thread writes its 8 values): no barrier
// between them, as in CUDA; one before the tile copy that reads them. Stores
// every thread makes to the same element keep their barrier (the later
// store must land last).
// CHECK-LABEL: func.func @own_element_stores
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[TID]]]
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[NEXT:.*]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%c0]
func.func @own_element_stores(%C: memref<256xf16>, %x: f16, %y: f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %s = tile.alloc_shared {offset = 0 : i64} : memref<256xf16, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {offset = 512 : i64} : memref<256xf16, #gpu.address_space<workgroup>>
    %tid = gpu.thread_id x
    %next = arith.addi %tid, %c128 : index
    memref.store %x, %s[%tid] : memref<256xf16, #gpu.address_space<workgroup>>
    memref.store %y, %s[%next] : memref<256xf16, #gpu.address_space<workgroup>>
    tile.copy %s[%c0] [256] to %C[%c0] [256] : memref<256xf16, #gpu.address_space<workgroup>> to memref<256xf16>
    memref.store %x, %t[%c0] : memref<256xf16, #gpu.address_space<workgroup>>
    memref.store %y, %t[%c0] : memref<256xf16, #gpu.address_space<workgroup>>
  }
  return
}
