// RUN: tlc-opt %s -split-input-file -tile-insert-mbarriers -verify-diagnostics | FileCheck %s

// tile-insert-mbarriers: the full and empty mbarriers of each tile.pipeline
// (the synchronisation of a warp-specialized loop), and the protocol checks.

// Two copies per stage, B in two 64-column blocks: one expect_tx of their
// 8192 + 16384 bytes on the stage's full barrier, then three TMA loads on it
// (coordinates innermost first; B's second block 64 columns on). Thread 0
// initialises full (1 arrival) and empty (4 consumer warps) per stage, the
// block meets; the producer waits on empty for the flipped parity, the
// consumers on full for the round's parity; lane 0 of each warp releases.
// CHECK-LABEL: func.func @two_loads
// CHECK: %[[FULL:.*]] = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: %[[EMPTY:.*]] = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK-NOT: tile.pipeline
// CHECK: %[[TID0:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID0]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[F0:.*]] = tile.shared_ptr %[[FULL]][%c0{{.*}}]
// CHECK: nvvm.mbarrier.init %[[F0]], %c1_i32
// CHECK: %[[E0:.*]] = tile.shared_ptr %[[EMPTY]][%c0{{.*}}]
// CHECK: nvvm.mbarrier.init %[[E0]], %c4_i32
// CHECK: %[[F1:.*]] = tile.shared_ptr %[[FULL]][%c1{{.*}}]
// CHECK: nvvm.mbarrier.init %[[F1]], %c1_i32
// CHECK: %[[E1:.*]] = tile.shared_ptr %[[EMPTY]][%c1{{.*}}]
// CHECK: nvvm.mbarrier.init %[[E1]], %c4_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier
// CHECK: scf.for %[[K:.*]] = %c0 to
// CHECK: arith.muli %[[K]], %c64
// CHECK: %[[S:.*]] = arith.remsi %[[K]], %c2
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[R:.*]] = arith.divsi %[[K]], %c2
// CHECK: %[[RB:.*]] = arith.andi %[[R]], %c1
// CHECK: %[[P:.*]] = arith.index_cast %[[RB]] : index to i32
// CHECK: %[[FREE:.*]] = arith.xori %[[P]], %c1_i32
// CHECK: %[[E:.*]] = tile.shared_ptr %[[EMPTY]][%[[S]]]
// CHECK: nvvm.mbarrier.try_wait.parity %[[E]], %[[FREE]], %c10000000_i32
// CHECK: %[[F:.*]] = tile.shared_ptr %[[FULL]][%[[S]]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[F]], %c24576_i32
// CHECK-NOT: tile.tma_load
// CHECK: %[[KK:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[ROW:.*]] = arith.index_cast %c64 : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[F]], box[%[[KK]], %[[ROW]]]
// CHECK: %[[COL:.*]] = arith.index_cast %c128 : index to i32
// CHECK: %[[ROWB:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[F]], box[%[[COL]], %[[ROWB]]]
// CHECK: %[[COL2:.*]] = arith.addi %[[COL]], %c64_i32
// CHECK: tile.shared_ptr %{{.*}}[%c0{{.*}}, %c64{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[F]], box[%[[COL2]], %[[ROWB]]]
// CHECK: } else {
// CHECK: scf.for %[[KC:.*]] = %c0 to
// CHECK: %[[SC:.*]] = arith.remsi %[[KC]], %c2
// CHECK: %[[RC:.*]] = arith.divsi %[[KC]], %c2
// CHECK: %[[RCB:.*]] = arith.andi %[[RC]], %c1
// CHECK: %[[PC:.*]] = arith.index_cast %[[RCB]] : index to i32
// CHECK: %[[FC:.*]] = tile.shared_ptr %[[FULL]][%[[SC]]]
// CHECK: nvvm.mbarrier.try_wait.parity %[[FC]], %[[PC]], %c10000000_i32
// CHECK: %[[SR:.*]] = arith.remsi %[[KC]], %c2
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[LEAD]] {
// CHECK-NEXT: %[[ER:.*]] = tile.shared_ptr %[[EMPTY]][%[[SR]]]
// CHECK-NEXT: nvvm.mbarrier.arrive %[[ER]]
// CHECK-NOT: tile.consumer
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @two_loads(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<stages = 2, column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x128xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c64, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
          %sb = tile.stage %b[%s] : memref<2x64x128xf16, #gpu.address_space<workgroup>> to memref<64x128xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%kk, %c128] to %sb, %pipe[%k] : memref<64x128xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// A pipeline whose stages are multicast to a cluster of two blocks
// (tile-pipeline-loops' tile.cluster_mask on the pipeline and on the load
// the blocks share): each empty barrier counts both blocks' 4 consumer warps,
// the barriers are initialised before a cluster barrier, the shared load is
// issued by the mask's lowest block into both (the other load is the
// block's own), and lane 0 of each consumer warp releases the stage at both
// blocks through their cluster addresses.
// CHECK-LABEL: func.func @multicast_pipeline
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask
// CHECK: }
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: multicast_mask
// CHECK: } else {
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: %[[E:.*]] = tile.shared_ptr
// CHECK:      %[[R0:.*]] = nvvm.mapa %[[E]], %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[R0]] : !llvm.ptr<7>
// CHECK:      %[[R1:.*]] = nvvm.mapa %[[E]], %c1_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[R1]] : !llvm.ptr<7>
// CHECK-NEXT: }
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @multicast_pipeline(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  tile.kernel blocks(%bx) in (%c2) threads = 128 attributes {tile.cluster_dims = array<i32: 2, 1, 1>, tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 {tile.cluster_mask = 3 : i64} : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          %col = arith.muli %bx, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c64, %kk] to %sa, %pipe[%k] {tile.cluster_mask = 3 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
          %sb = tile.stage %b[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%kk, %col] to %sb, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// One to four stages: S full and S empty barriers, iteration k on stage
// k mod S with the parity of round k / S. One stage: the producer refills
// it once the consumers of the round before released it (no overlap, but
// no hang). Four stages with a loop of two iterations (fewer than the
// stages): nothing assumes S iterations; round 0's waits on empty pass at
// once (parity 1 of a fresh barrier), stages 2 and 3 are never used.
// CHECK-LABEL: func.func @stages_1
// CHECK: tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK: tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: scf.for %[[K:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.muli %[[K]], %c64
// CHECK: arith.remsi %[[K]], %c1
// CHECK: arith.divsi %[[K]], %c1
// CHECK: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: } else {
// CHECK: scf.for %[[KC:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.remsi %[[KC]], %c1
// CHECK: arith.divsi %[[KC]], %c1
// CHECK-NOT: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stages_1(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 1, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<1x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 1, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 1 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<1x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// CHECK-LABEL: func.func @stages_2
// CHECK: tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: scf.for %[[K:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.muli %[[K]], %c64
// CHECK: arith.remsi %[[K]], %c2
// CHECK: arith.divsi %[[K]], %c2
// CHECK: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: } else {
// CHECK: scf.for %[[KC:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.remsi %[[KC]], %c2
// CHECK: arith.divsi %[[KC]], %c2
// CHECK-NOT: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stages_2(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// CHECK-LABEL: func.func @stages_3
// CHECK: tile.alloc_shared : memref<3xi64, #gpu.address_space<workgroup>>
// CHECK: tile.alloc_shared : memref<3xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: scf.for %[[K:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.muli %[[K]], %c64
// CHECK: arith.remsi %[[K]], %c3
// CHECK: arith.divsi %[[K]], %c3
// CHECK: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: } else {
// CHECK: scf.for %[[KC:.*]] = %c0 to %arg1 step %c1
// CHECK: arith.remsi %[[KC]], %c3
// CHECK: arith.divsi %[[KC]], %c3
// CHECK-NOT: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stages_3(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 3, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<3x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 3, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 3 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// CHECK-LABEL: func.func @stages_4
// CHECK: tile.alloc_shared : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK: tile.alloc_shared : memref<4xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: scf.for %[[K:.*]] = %c0 to %c2 step %c1
// CHECK: arith.muli %[[K]], %c64
// CHECK: arith.remsi %[[K]], %c4
// CHECK: arith.divsi %[[K]], %c4
// CHECK: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: } else {
// CHECK: scf.for %[[KC:.*]] = %c0 to %c2 step %c1
// CHECK: arith.remsi %[[KC]], %c4
// CHECK: arith.divsi %[[KC]], %c4
// CHECK-NOT: arith.xori
// CHECK: nvvm.mbarrier.try_wait.parity
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @stages_4(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 4, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<4x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 4, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 4 : index
        scf.for %k = %c0 to %c2 step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<4x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %c2 step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// 256 consumer threads: the empty barriers count 8 warps.
// CHECK-LABEL: func.func @two_warpgroups
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @two_warpgroups(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 256 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c256 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c256 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// A load no acquire precedes could overwrite a stage still being read.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @load_without_acquire(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          // expected-error @+1 {{'tile.tma_load' op loads into a pipeline stage no tile.producer_acquire before it in its block acquired}}
          tile.tma_load %mapa[%c0, %c0] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// A load after the acquire of another iteration.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @other_iteration(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %k1 = arith.addi %k, %c1 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          // expected-error @+1 {{'tile.tma_load' op loads iteration}}
          tile.tma_load %mapa[%c0, %c0] to %sa, %pipe[%k1] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// An acquired stage nothing fills: its consumers would read stale bytes.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @acquire_without_load(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          // expected-error @+1 {{'tile.producer_acquire' op acquires a stage that no tile.tma_load after it in its block fills}}
          tile.producer_acquire %pipe[%k] : !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// Consumers waiting on a pipeline no producer fills would hang.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @nothing_loads(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        // expected-error @+1 {{'tile.consumer_wait' op waits for a stage of a pipeline nothing loads: it would hang}}
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// A producer whose stages no consumer releases hangs once it used them all.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @never_released(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          // expected-error @+1 {{'tile.producer_acquire' op waits for stages of a 2-stage pipeline that no consumer releases: it would hang once the 2 stages are used}}
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %c0] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// Releasing stages the consumers never waited for.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @release_without_wait(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        // expected-error @+1 {{'tile.consumer_release' op releases a stage of a pipeline its consumers never wait for}}
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// An acquire every consumer thread runs: 128 expect_tx arrivals on a barrier that counts one.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @acquire_by_many(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        // expected-error @+1 {{'tile.producer_acquire' op is run by 128 threads of the block's 256; one thread acquires a stage (its expect_tx is the full barrier's one arrival a phase)}}
        tile.producer_acquire %pipe[%k] : !tile.pipeline
        %cS2 = arith.constant 2 : index
        %s2 = arith.remsi %k, %cS2 : index
        %sa2 = tile.stage %a[%s2] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
        %A_map = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        tile.tma_load %A_map[%c0, %c0] to %sa2, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// Only half the consumer threads release: the empty barrier would wait for 4 warps and get 2.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @half_the_consumers(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        %c64b = arith.constant 64 : index
        %low = arith.cmpi ult, %tid, %c64b : index
        scf.if %low {
          // expected-error @+1 {{'tile.consumer_release' op is run by 64 threads (2 warp leaders) of the block's 256, but the pipeline has 128 consumer threads: its empty barriers count 4 arrivals a phase, one per consumer warp}}
          tile.consumer_release %pipe[%k] : !tile.pipeline
        }
      }
    }
  }
  return
}
}

// -----

// Two releases of one iteration: the stage would be refilled while still read.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @released_twice(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        tile.consumer_release %pipe[%k] : !tile.pipeline
        // expected-error @+1 {{'tile.consumer_release' op is a second release of the pipeline in its block: the stage's empty barrier would complete a phase early}}
        tile.consumer_release %pipe[%k] : !tile.pipeline
      }
    }
  }
  return
}
}

// -----

// A condition on the thread index through a value only the launch knows: arrivals cannot be counted.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @unknown_threads(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    %tid = gpu.thread_id x
    %producer = arith.cmpi uge, %tid, %c128 : index
    scf.if %producer {
      %leader = arith.cmpi eq, %tid, %c128 : index
      scf.if %leader {
        %mapa = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
        %cS = arith.constant 2 : index
        scf.for %k = %c0 to %n step %c1 {
          %s = arith.remsi %k, %cS : index
          %kk = arith.muli %k, %c64 : index
          tile.producer_acquire %pipe[%k] : !tile.pipeline
          %sa = tile.stage %a[%s] : memref<2x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
          tile.tma_load %mapa[%c0, %kk] to %sa, %pipe[%k] : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
        }
      }
    } else {
      scf.for %k = %c0 to %n step %c1 {
        tile.consumer_wait %pipe[%k] : !tile.pipeline
        %dim = gpu.block_dim x
        %half = arith.divui %dim, %c2 : index
        %low = arith.cmpi ult, %tid, %half : index
        scf.if %low {
          // expected-error @+1 {{'tile.consumer_release' op runs under a condition on the thread index that tile-insert-mbarriers cannot evaluate}}
          tile.consumer_release %pipe[%k] : !tile.pipeline
        }
      }
    }
  }
  return
}
}

// -----

// The mbarrier protocol of every kernel is checked after lowering (here one
// written by hand): an expect_tx whose byte count is not what the TMA loads
// after it bring would hang or release the stage early.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @wrong_bytes(%A: memref<1024x1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %bytes = arith.constant 8192 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %full = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    %bar = tile.shared_ptr %full[%c0] : memref<1xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    %map = tile.tensor_map %A {box = array<i64: 32, 64>, swizzle = 128} : memref<1024x1024xf16> -> !llvm.ptr
    // expected-error @+1 {{'nvvm.mbarrier.arrive.expect_tx' op expects 8192 bytes, but the TMA loads completing on this mbarrier after it bring 4096}}
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    %dst = tile.shared_ptr %a[%c0, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    %dst7 = llvm.addrspacecast %dst : !llvm.ptr<3> to !llvm.ptr<7>
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst7, %map, %bar, box[%c0_i32, %c0_i32] : !llvm.ptr<7>, !llvm.ptr
    nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %one : !llvm.ptr<3>, i32, i32
  }
  return
}
}

// -----

// A wait on an mbarrier that nothing arrives on would hang.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @no_arrive() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %empty = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    %bar = tile.shared_ptr %empty[%c0] : memref<1xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    // expected-error @+1 {{'nvvm.mbarrier.try_wait.parity' op waits on an mbarrier nothing arrives on: it would hang}}
    nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %one : !llvm.ptr<3>, i32, i32
  }
  return
}
}

// -----

// A wait on an mbarrier no one initialises.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @never_initialised() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i32 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %empty = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    %bar = tile.shared_ptr %empty[%c0] : memref<1xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    // expected-error @+1 {{'nvvm.mbarrier.try_wait.parity' op waits on an mbarrier that is never initialised}}
    nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %one : !llvm.ptr<3>, i32, i32
  }
  return
}
}

// -----

// An mbarrier whose phase needs no arrivals can never flip.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @zero_count() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %empty = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    %bar = tile.shared_ptr %empty[%c0] : memref<1xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    // expected-error @+1 {{'nvvm.mbarrier.init' op initialises an mbarrier with 0 arrivals: its phase can never complete}}
    nvvm.mbarrier.init %bar, %zero : !llvm.ptr<3>, i32
  }
  return
}
}

// -----

// The program's own mbarriers: thread 0 initialises each with its count, a
// block barrier follows; a wait is a try_wait.parity on the parity's low bit;
// an arrival fences the async proxy first. The kernel is marked so that
// tile-insert-barriers leaves the bodies' ordering to them.
// CHECK-LABEL: func.func @program_barriers
// CHECK: tile.kernel {{.*}} attributes {tile.program_barriers}
// CHECK: %[[BARS:.*]] = tile.alloc_shared
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}}
// CHECK: scf.if %[[FIRST]] {
// CHECK:   %[[B0:.*]] = tile.shared_ptr %[[BARS]][%{{.*}}]
// CHECK:   nvvm.mbarrier.init %[[B0]], %c128_i32
// CHECK:   nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK:   nvvm.fence.mbarrier.init
// CHECK: }
// CHECK: nvvm.barrier
// CHECK: tile.ws warpgroups = [1] {
// CHECK:   %[[LOW:.*]] = arith.andi %{{.*}}, %c1
// CHECK:   %[[PAR:.*]] = arith.index_cast %[[LOW]] : index to i32
// CHECK:   nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PAR]]
// CHECK:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:   nvvm.mbarrier.arrive
// CHECK: }
// CHECK-NOT: tile.barrier_
func.func @program_barriers(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 256] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      tile.barrier_wait %bars[%c0], %k : memref<2xi64, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// A wait on a barrier nothing arrives at would hang: an error.
func.func @program_barrier_never_arrived(%k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      // expected-error @+1 {{waits on an mbarrier nothing arrives on: it would hang}}
      tile.barrier_wait %bars[%c0], %k : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}

// -----

// On sm_90a a tile.ws body's copies of whole global tiles just before an
// arrival become TMA loads completing on that barrier: the body's first
// thread (128) arrives expecting their 16384 + 16384 bytes and issues them
// (the buffers get TMA's 128-byte swizzle), the others arrive plainly. A
// copy that converts the dtype stays the threads' and ends the run.
// CHECK-LABEL: func.func @tma_before_arrival
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>}
// CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>}
// CHECK: tile.ws warpgroups = [1] {
// CHECK:   tile.copy %{{.*}} to %[[CVT:.*]][
// CHECK:   %[[TID:.*]] = gpu.thread_id x
// CHECK:   %[[LEAD:.*]] = arith.cmpi eq, %[[TID]], %c128
// CHECK:   scf.if %[[LEAD]] {
// CHECK:     nvvm.mbarrier.arrive.expect_tx %[[BAR:.*]], %c32768_i32
// CHECK:     tile.tensor_map %{{.*}} {box = array<i64: 128, 64>, swizzle = 128 : i64}
// CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:     tile.tensor_map
// CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:   } else {
// CHECK:     nvvm.mbarrier.arrive %[[BAR]]
// CHECK:   }
// CHECK-NOT: tile.copy
// CHECK-NOT: tile.barrier_arrive
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tma_before_arrival(%A: memref<1024x1024xf16>, %F: memref<1024x1024xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      tile.copy %F[%i, %c0] [128, 64] to %c[%c0, %c0] [128, 64] : memref<1024x1024xf32> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%i, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      %k = arith.addi %i, %c1 : index
      tile.copy %A[%k, %c0] [128, 64] to %b[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}
}

// -----

// A copy into one stage of a staged buffer (tile.stage) before an arrival is
// a TMA load into that stage; the allocation keeps its stages and gets TMA's
// swizzle.
// CHECK-LABEL: func.func @tma_into_stage
// CHECK: tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, base = 4, shift = 3>>}
// CHECK: %[[VIEW:.*]] = tile.stage
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: tile.shared_ptr %[[VIEW]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tma_into_stage(%A: memref<1024x1024xf16>, %i: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %all = tile.alloc_shared {layout = #tile.shared<stages = 2>} : memref<2x128x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      %view = tile.stage %all[%s] : memref<2x128x64xf16, #gpu.address_space<workgroup>> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.copy %A[%i, %c0] [128, 64] to %view[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%s] : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}
}

// -----

// A T.tma_copy in the kernel's own code, before an arrival every thread of
// the block makes (inside a serial loop): thread 0 expects the bytes and
// issues the load, every other thread arrives. Outside a branch, a plain
// copy (no tile.tma_required) stays a copy there.
// CHECK-LABEL: func.func @tma_in_every_thread
// CHECK: scf.for
// CHECK:   %[[TID:.*]] = gpu.thread_id x
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:   } else {
// CHECK:     nvvm.mbarrier.arrive %
// CHECK:   }
// CHECK: tile.copy
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tma_in_every_thread(%A: memref<1024x1024xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<1xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [256] : memref<1xi64, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c1 {
      tile.copy %A[%k, %c0] [128, 64] to %a[%c0, %c0] [128, 64] {tile.tma_required} : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c0] : memref<1xi64, #gpu.address_space<workgroup>>
    }
    tile.copy %A[%c0, %c0] [128, 64] to %b[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
    tile.barrier_arrive %bars[%c0] : memref<1xi64, #gpu.address_space<workgroup>>
  }
  return
}
}

// -----

// T.tma_copy(..., cluster_mask = 3) in a kernel launched in clusters of two
// blocks: the body's first thread expects the tile's bytes on its own block's
// barrier, and the mask's lowest block (rank 0) issues one multicast load
// into both (a block outside the mask would load its own: mask 1 << rank).
// The program's barriers are initialised before a cluster barrier, not a
// block one. The producer's wait on a barrier only the other block's
// consumers arrive at (through mapa) is a wait something arrives on.
// CHECK-LABEL: func.func @multicast
// CHECK:       nvvm.mbarrier.init
// CHECK:       nvvm.fence.mbarrier.init
// CHECK:       }
// CHECK-NEXT:  nvvm.cluster.arrive {aligned}
// CHECK-NEXT:  nvvm.cluster.wait {aligned}
// CHECK:       tile.ws warpgroups = [1]
// CHECK:       nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK:       %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK:       %[[LOWEST:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32
// CHECK:       %[[ISSUE:.*]] = arith.ori %[[LOWEST]]
// CHECK:       %[[MASK:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK:       scf.if %[[ISSUE]] {
// CHECK:         nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %[[MASK]]
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @multicast(%A: memref<1024x64xf16>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i32
  tile.kernel blocks(%bx) in (%c2) threads = 256 attributes {tile.cluster_dims = array<i32: 2, 1, 1>} {
    %a = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [1, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      tile.barrier_wait %bars[%c1], %k : memref<2xi64, #gpu.address_space<workgroup>>
      tile.copy %A[%k, %c0] [64, 64] to %a[%c0, %c0] [64, 64] {tile.cluster_mask = 3 : i64, tile.tma_required} : memref<1024x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c0] : memref<2xi64, #gpu.address_space<workgroup>>
    }
    tile.ws warpgroups = [0] {
      tile.barrier_wait %bars[%c0], %k : memref<2xi64, #gpu.address_space<workgroup>>
      %p = tile.shared_ptr %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
      %r = nvvm.mapa %p, %one : !llvm.ptr<3> -> !llvm.ptr<7>
      nvvm.mbarrier.arrive %r {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
    }
  }
  return
}
}

// -----

// A copy the program asked to be TMA (T.tma_copy: tile.tma_required) that
// cannot be one (it converts f32 to f16) is an error at the copy.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @tma_required_converting(%F: memref<1024x1024xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      // expected-error @+1 {{is a T.tma_copy that cannot be a TMA load}}
      tile.copy %F[%i, %c0] [128, 64] to %a[%c0, %c0] [128, 64] {tile.tma_required} : memref<1024x1024xf32> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    }
  }
  return
}
}

// -----

// A buffer the copying warpgroup itself reads later (or the whole block
// does) keeps the threads' copy: a TMA load could still be writing it when
// they read it (their own copy was ordered by the compiler's barriers).
// CHECK-LABEL: func.func @copy_read_by_its_own_warpgroup
// CHECK: tile.ws warpgroups = [1] {
// CHECK-NEXT: tile.copy
// CHECK-NOT: cp.async.bulk.tensor
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @copy_read_by_its_own_warpgroup(%A: memref<1024x1024xf16>, %C: memref<1024x1024xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    tile.ws warpgroups = [1] {
      tile.copy %A[%i, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<1024x1024xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
      tile.copy %a[%c0, %c0] [128, 64] to %C[%i, %c0] [128, 64] : memref<128x64xf16, #gpu.address_space<workgroup>> to memref<1024x1024xf16>
    }
  }
  return
}
}

// -----

// T.set_max_nreg on a target without setmaxnreg: an error at the op.
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @setmaxnreg_on_sm80() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    tile.ws warpgroups = [1] {
      // expected-error @+1 {{'nvvm.setmaxregister' op (T.set_max_nreg) needs setmaxnreg (sm_90a); the target has none}}
      nvvm.setmaxregister decrease 40
    }
  }
  return
}
}

