// RUN: tlc-opt %s -split-input-file -convert-tile-to-gpu -canonicalize -verify-diagnostics | FileCheck %s

// Each case is a kernel as tile-outline-kernels leaves it: layouts, #tile.mma,
// #tile.shared, offsets and barriers already in the IR, so the conversion
// alone is tested (its patterns decide nothing).

// A dynamic-size tensor into a fragment: each thread issues 16-byte vector
// loads guarded by the bounds (zero outside) and by row alignment (else
// element-wise), into its register array.
// CHECK-LABEL: gpu.func @load_dynamic
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<8xf32>
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %c4
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK:   vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK:   memref.load
// CHECK: vector.store %{{.*}}, %[[REGS]][%c0] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[REGS]][%c4] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
// CHECK-NOT: tile.{{copy|fill|parallel|alloc}}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @load_dynamic_kernel {
    gpu.func @load_dynamic(%arg0: memref<?x?xf32>, %arg1: memref<8x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<8x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [8, 128] to %0[%c0, %c0] [8, 128] : memref<?x?xf32> to memref<8x128xf32, #tile.space<fragment>>
      tile.copy %0[%c0, %c0] [8, 128] to %arg1[%c0, %c0] [8, 128] : memref<8x128xf32, #tile.space<fragment>> to memref<8x128xf32>
      gpu.return
    }
  }
}

// -----

// A fragment's view is its allocation's registers (the loop over the 4 x 4
// x 32 view reads and writes the alloca, its 4 consecutive registers as one
// vector, no tile.view left); a loop over
// (j, k) reading acc[k, j] reads the same registers by constant index; a copy
// of the fragment's first 2 rows stores each register under `row < 2`.
// CHECK-LABEL: gpu.func @fragment_views
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK-NOT: tile.view
// CHECK: vector.store %{{.*}}, %[[REGS]][%c0]
// CHECK: %[[X:.*]] = vector.load %[[REGS]][%c0] : memref<4xf32>, vector<4xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[Y]], %[[REGS]][%c0] : memref<4xf32>, vector<4xf32>
// CHECK: %[[T:.*]] = memref.load %[[REGS]][%c0] : memref<4xf32>
// CHECK: memref.store %[[T]], %arg1[
// CHECK: arith.cmpi ult, %[[ROW:.*]], %c2 : index
// CHECK: scf.if
// CHECK-NEXT: vector.load %[[REGS]][%c0]
// CHECK: vector.store %{{.*}}, %arg2[%[[ROW]], %{{.*}}]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @fragment_views_kernel {
    gpu.func @fragment_views(%arg0: memref<4x128xf32>, %arg1: memref<128x4xf32>, %arg2: memref<2x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<4x128xf32, #tile.space<fragment>>
      %1 = tile.view %0 : memref<4x128xf32, #tile.space<fragment>> to memref<4x4x32xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [4, 128] to %0[%c0, %c0] [4, 128] : memref<4x128xf32> to memref<4x128xf32, #tile.space<fragment>>
      tile.parallel (%i, %g, %h) in [4, 4, 32] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128) floordiv 32, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 32)>} {
        %x = memref.load %1[%i, %g, %h] : memref<4x4x32xf32, #tile.space<fragment>>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %1[%i, %g, %h] : memref<4x4x32xf32, #tile.space<fragment>>
      }
      tile.parallel (%j, %k) in [128, 4] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128)>} {
        %x = memref.load %0[%k, %j] : memref<4x128xf32, #tile.space<fragment>>
        memref.store %x, %arg1[%j, %k] : memref<128x4xf32>
      }
      tile.copy %0[%c0, %c0] [2, 128] to %arg2[%c0, %c0] [2, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<2x128xf32>
      gpu.return
    }
  }
}

// -----

// A fragment indexed in the loop by a value the loop does not change
// (f[k, j], each thread holding all 8 rows of its column): the register is
// k x the loop's registers (1) + the loop's register (0), picked at run time.
// CHECK-LABEL: gpu.func @outer_rows
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<8xf32>
// CHECK: %[[X:.*]] = memref.load %[[REGS]][%arg1] : memref<8xf32>
// CHECK: memref.store %[[X]], %arg0[
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @outer_rows_kernel {
    gpu.func @outer_rows(%arg0: memref<128xf32>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d1 mod 8, d0)>} : memref<8x128xf32, #tile.space<fragment>>
      tile.parallel (%j) in [128] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} {
        %x = memref.load %0[%arg1, %j] : memref<8x128xf32, #tile.space<fragment>>
        memref.store %x, %arg0[%j] : memref<128xf32>
      }
      gpu.return
    }
  }
}

// -----

// A static, aligned tensor needs no element-wise fallback; writes are masked
// by the bounds alone. The parallel loop runs on the thread's registers, its
// run of 4 as one vector.
// CHECK-LABEL: gpu.func @double
// CHECK-NOT: arith.remui
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<100x128xf32>, vector<4xf32>
// CHECK: %[[X:.*]] = vector.load %[[REGS]][%c0] : memref<4xf32>, vector<4xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[X]], %[[X]] : vector<4xf32>
// CHECK-NEXT: vector.store %[[Y]], %[[REGS]][%c0] : memref<4xf32>, vector<4xf32>
// CHECK: vector.load %[[REGS]][%c0] {alignment = 16 : i64} : memref<4xf32>, vector<4xf32>
// CHECK: scf.if
// CHECK-NEXT: vector.store %{{.*}} {alignment = 16 : i64} : memref<100x128xf32>, vector<4xf32>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @double_kernel {
    gpu.func @double(%arg0: memref<100x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<4x128xf32, #tile.space<fragment>>
      %1 = arith.muli %block_id_x, %c4 : index
      tile.copy %arg0[%1, %c0] [4, 128] to %0[%c0, %c0] [4, 128] : memref<100x128xf32> to memref<4x128xf32, #tile.space<fragment>>
      tile.parallel (%arg1, %arg2) in [4, 128] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} {
        %2 = memref.load %0[%arg1, %arg2] : memref<4x128xf32, #tile.space<fragment>>
        %3 = arith.addf %2, %2 : f32
        memref.store %3, %0[%arg1, %arg2] : memref<4x128xf32, #tile.space<fragment>>
      }
      tile.copy %0[%c0, %c0] [4, 128] to %arg0[%1, %c0] [4, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<100x128xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @to_shared_kernel {
    gpu.func @to_shared(%arg0: memref<1024x1024xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 4096 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%c0, %c0] [64, 32] to %0[%c0, %c0] [64, 32] : memref<1024x1024xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// tile.view: the dynamic shared memory at the allocation's offset, with the
// view's shape and element type; an element store through it addresses that.
// CHECK-LABEL: gpu.func @shared_view
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[WORDS:.*]] = memref.view %[[SMEM]][%c1024][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[WORDS]][%c3, %c5] : memref<64x16xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @shared_view_kernel {
    gpu.func @shared_view() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 5120 : i64} {
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : index
      %f = arith.constant 1.0 : f32
      %0 = tile.alloc_shared {offset = 1024 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.view %0 : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x16xf32, #gpu.address_space<workgroup>>
      memref.store %f, %1[%c3, %c5] : memref<64x16xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// tile.view of a swizzled allocation in column blocks (a gemm operand's
// bytes as float32 scratch): a flat array of the view's elements; element
// (1, 2) of the 64 x 64 float32 view is bytes 264-267 of the float16
// allocation in row-major order, element (1, 4) of it, which the column
// blocks put at element 68 (byte 136) and the swizzle at byte 152: view
// element 38.
// CHECK-LABEL: gpu.func @swizzled_view
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[WORDS:.*]] = memref.view %[[SMEM]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[WORDS]][%c38] : memref<4096xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @swizzled_view_kernel {
    gpu.func @swizzled_view() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %f = arith.constant 1.0 : f32
      %0 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>
      %1 = tile.view %0 : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      memref.store %f, %1[%c1, %c2] : memref<64x64xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// A view whose elements the layout does not keep together (32-byte
// elements over 16-byte swizzle pieces): an error.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @split_view_kernel {
    gpu.func @split_view() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %0 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'tile.view' op views a buffer with elements of 32 bytes, which its layout (#tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>) does not keep together; view it with elements of at most 16 bytes}}
      %1 = tile.view %0 : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x8xi256, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// tile.transpose on 4 warps: 8 steps, lane l of warp w taking the 4 x 4
// block (row quad l, column quad l ^ (w + 4 step)): four 4-byte loads, eight
// byte permutes, four 4-byte stores (through the swizzled flat views).
// CHECK-LABEL: gpu.func @transpose_bytes
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK: scf.for %[[S:.*]] = %c0 to %c8 step %c1 {
// CHECK: arith.xori %[[LANE]]
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK-COUNT-2: nvvm.prmt <default> %c{{20800|29538}}_i32
// CHECK-COUNT-2: nvvm.prmt <default> %c{{20800|29538}}_i32
// CHECK-COUNT-2: nvvm.prmt <default> %c{{21520|30258}}_i32
// CHECK-COUNT-2: nvvm.prmt <default> %c{{21520|30258}}_i32
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-NOT: tile.transpose
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @transpose_bytes_kernel {
    gpu.func @transpose_bytes() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %a = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      %t = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 16384 : i64} : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      tile.transpose %a to %t : memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>> to memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @predicated_async_kernel {
    gpu.func @predicated_async(%arg0: memref<1024x1024xf16>, %arg1: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 4096 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%block_id_x, %c0] [64, 32] to %0[%c0, %c0] [64, 32] if %arg1 {async} : memref<1024x1024xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @loop_barriers_kernel {
    gpu.func @loop_barriers(%arg0: memref<1024x1024xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 4096 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %cst = arith.constant 0.000000e+00 : f16
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.pipelined %arg1 = %c0 to %c8 step %c1 num_stages = 3 {
        gpu.barrier
        tile.fill %0, %cst : memref<64x32xf16, #gpu.address_space<workgroup>>, f16
      }
      gpu.return
    }
  }
}

// -----

// A 64x64 gemm over 4 warps (2x2, 32x32 each): per 16-deep slice of K each
// warp loads 2 A atoms (ldmatrix.x4) and 4 B atoms (2 ldmatrix.x4.trans) and
// issues 2x4 mma.sync; K = 32 gives 16 in all, accumulating from zero.
// CHECK-LABEL: gpu.func @gemm_f16
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32xf32>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x32xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<32x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: memref.store %{{.*}}, %[[REGS]][%c31]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @gemm_f16_kernel {
    gpu.func @gemm_f16(%arg0: memref<64x32xf16>, %arg1: memref<32x64xf16>, %arg2: memref<64x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {offset = 4096 : i64} : memref<32x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 64] to %arg2[%c0, %c0] [64, 64] {tile.staging_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// bf16 with B stored N x K: non-transposed B loads, and nvvm.mma.sync on the
// packed registers (nvgpu.mma.sync does not type bf16).
// CHECK-LABEL: gpu.func @gemm_bf16_nt
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x32xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @gemm_bf16_nt_kernel {
    gpu.func @gemm_bf16_nt(%arg0: memref<64x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xbf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {offset = 4096 : i64} : memref<64x32xbf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      tile.gemm %0, %1, %2 {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>, transpose_b} : memref<64x32xbf16, #gpu.address_space<workgroup>>, memref<64x32xbf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 64] to %arg0[%c0, %c0] [64, 64] {tile.staging_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @swizzled_store_kernel {
    gpu.func @swizzled_store(%arg0: memref<64x32xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 4096 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.copy %arg0[%c0, %c0] [64, 32] to %0[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// A row max of an 8x256 tile over 128 threads: each thread folds its 4
// registers of a row, then 5 xor shuffles combine the warp's lanes, then the
// two warps holding a row meet in shared scratch (leaders write, barrier,
// everyone reads both). Nothing touched the scratch before: no barrier
// before the leaders write. NaNs are skipped (maxnumf: TileLang's default);
// with tile.nan_propagate (T.reduce_max(..., nan_propagate=True)) they are
// kept (maximumf, @row_max_nan below).
// CHECK-LABEL: gpu.func @row_max
// CHECK: arith.maxnumf
// CHECK-NOT: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: %[[SCRATCH:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x2xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @row_max_kernel {
    gpu.func @row_max(%arg0: memref<8x256xf32>, %arg1: memref<8xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 64 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [8, 256] to %0[%c0, %c0] [8, 256] : memref<8x256xf32> to memref<8x256xf32, #tile.space<fragment>>
      tile.reduce %0 to %1 {clear, dim = 1 : i64, kind = #tile.reduce_kind<max>, tile.scratch_offset = 0 : i64} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
      tile.copy %1[%c0] [8] to %arg1[%c0] [8] : memref<8xf32, #tile.space<fragment>> to memref<8xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: gpu.func @row_max_nan
// CHECK: arith.maximumf
// CHECK-NOT: arith.maxnumf
// CHECK: gpu.return
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @row_max_nan_kernel {
    gpu.func @row_max_nan(%arg0: memref<8x256xf32>, %arg1: memref<8xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 64 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [8, 256] to %0[%c0, %c0] [8, 256] : memref<8x256xf32> to memref<8x256xf32, #tile.space<fragment>>
      tile.reduce %0 to %1 {clear, dim = 1 : i64, kind = #tile.reduce_kind<max>, tile.nan_propagate, tile.scratch_offset = 0 : i64} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
      tile.copy %1[%c0] [8] to %arg1[%c0] [8] : memref<8xf32, #tile.space<fragment>> to memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A row vector in a loop over the tile: iteration (t, r) reads the row
// register its element's row lives in (here 4 elements per row register).
// CHECK-LABEL: gpu.func @subtract_row
// CHECK: %[[ROWS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: memref.load %[[ROWS]][%c0] : memref<4xf32>
// CHECK: arith.subf
// CHECK: memref.load %[[ROWS]][%c3] : memref<4xf32>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @subtract_row_kernel {
    gpu.func @subtract_row(%arg0: memref<8x256xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 64 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} : memref<8x256xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1 * 2 + d0 floordiv 64)>} : memref<8xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [8, 256] to %0[%c0, %c0] [8, 256] : memref<8x256xf32> to memref<8x256xf32, #tile.space<fragment>>
      tile.reduce %0 to %1 {clear, dim = 1 : i64, kind = #tile.reduce_kind<sum>, tile.scratch_offset = 0 : i64} : memref<8x256xf32, #tile.space<fragment>> to memref<8xf32, #tile.space<fragment>>
      tile.parallel (%arg1, %arg2) in [8, 256] attributes {layout = #tile.layout<threads = 128, regs = 16, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 256, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 256)>} {
        %2 = memref.load %0[%arg1, %arg2] : memref<8x256xf32, #tile.space<fragment>>
        %3 = memref.load %1[%arg1] : memref<8xf32, #tile.space<fragment>>
        %4 = arith.subf %2, %3 : f32
        memref.store %4, %0[%arg1, %arg2] : memref<8x256xf32, #tile.space<fragment>>
      }
      tile.copy %0[%c0, %c0] [8, 256] to %arg0[%c0, %c0] [8, 256] : memref<8x256xf32, #tile.space<fragment>> to memref<8x256xf32>
      gpu.return
    }
  }
}

// -----

// A fragment smaller than the block: threads t and t + 64 hold the same
// element (a copy). The sum combines lanes (5 shuffles) and the two warps
// that hold different elements (scratch[1][2]), never a copy twice.
// CHECK-LABEL: gpu.func @sum_of_copies
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x2xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @sum_of_copies_kernel {
    gpu.func @sum_of_copies(%arg0: memref<64xf32>, %arg1: memref<1xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 8 : i64} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 mod 64)>} : memref<64xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (0)>} : memref<1xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0] [64] to %0[%c0] [64] : memref<64xf32> to memref<64xf32, #tile.space<fragment>>
      tile.reduce %0 to %1 {clear, dim = 0 : i64, kind = #tile.reduce_kind<sum>, tile.scratch_offset = 0 : i64} : memref<64xf32, #tile.space<fragment>> to memref<1xf32, #tile.space<fragment>>
      tile.copy %1[%c0] [1] to %arg1[%c0] [1] : memref<1xf32, #tile.space<fragment>> to memref<1xf32>
      gpu.return
    }
  }
}

// -----

// A tensor at a run-time address (T.make_tensor): its descriptor built from
// the address (row-major strides, offset 0), cast to the memref its users
// read, and assumed 16-byte aligned as parameters are.
// CHECK-LABEL: gpu.func @pointer_table
// CHECK: %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x64xf32>
// CHECK: %[[A:.*]] = memref.assume_alignment %[[M]], 16 : memref<?x64xf32>
// CHECK: memref.load %[[A]]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @pointer_table_kernel {
    gpu.func @pointer_table(%arg0: memref<4xi64>, %arg1: index, %arg2: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %block_id_x = gpu.block_id  x
      %a = memref.load %arg0[%block_id_x] : memref<4xi64>
      %t = tile.make_tensor %a(%arg1) : memref<?x64xf32>
      tile.parallel (%j) in [64] attributes {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>} {
        %v = memref.load %t[%c0, %j] : memref<?x64xf32>
        memref.store %v, %arg2[%j] : memref<64xf32>
      }
      gpu.return
    }
  }
}

// -----

// The second gemm takes A from registers: its operand is built from the
// registers (no ldmatrix for A), after the fp32 -> fp16 copy converted each
// register in place.
// CHECK-LABEL: gpu.func @a_in_registers
// CHECK: %[[S:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32xf32>
// CHECK: %[[P:.*]] = memref.alloca() {alignment = 16 : i64} : memref<32xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %[[P]][%c31] : memref<32xf16>
// CHECK: memref.load %[[P]][%c0] : memref<32xf16>
// CHECK-NOT: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @a_in_registers_kernel {
    gpu.func @a_in_registers(%arg0: memref<64x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {offset = 4096 : i64} : memref<32x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %3 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 8) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      %4 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + (((d1 mod 8) floordiv 2) mod 2) * 8, ((d1 floordiv 8) mod 4) * 16 + (d0 mod 4) * 2 + d1 mod 2 + ((d1 mod 8) floordiv 4) * 8)>} : memref<64x64xf16, #tile.space<fragment>>
      %5 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 8) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      tile.gemm %0, %1, %3 {clear_accum, mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, policy = #tile.warp_policy<full_row>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      tile.copy %3[%c0, %c0] [64, 64] to %4[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
      tile.gemm %4, %2, %5 {clear_accum, mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 4, warps_n = 1, a = registers, depth = 0>, policy = #tile.warp_policy<full_row>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %5[%c0, %c0] [64, 64] to %arg0[%c0, %c0] [64, 64] {tile.staging_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @layouts_disagree_kernel {
    gpu.func @layouts_disagree() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {offset = 4096 : i64} : memref<32x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %3 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      %4 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 32) * 16 + (d0 mod 32) floordiv 4 + (((d1 mod 8) floordiv 2) mod 2) * 8, ((d1 floordiv 8) mod 4) * 16 + (d0 mod 4) * 2 + d1 mod 2 + ((d1 mod 8) floordiv 4) * 8)>} : memref<64x64xf16, #tile.space<fragment>>
      %5 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      tile.gemm %0, %1, %3 {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %3[%c0, %c0] [64, 64] to %4[%c0, %c0] [64, 64] {tile.staging_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf16, #tile.space<fragment>>
      tile.gemm %4, %2, %5 {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = registers, depth = 0>} : memref<64x64xf16, #tile.space<fragment>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// -----

// A conversion whose elements stay in their warps moves by shuffles, with no
// shared memory and no barrier: row i of the source is held by lanes 4i to
// 4i + 3 of its warp, so thread t (needing row t mod 8 of its warp's eight)
// reads lane 4 (t mod 8): bits 0-2 of the thread index, each moved up by two.
// 16-bit elements are widened to the shuffle's 32 bits and narrowed back.
// CHECK-LABEL: gpu.func @shuffle_conversion
// CHECK-NOT: memref.view
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[T32:.*]] = arith.index_cast %[[TID]] : index to i32
// CHECK: %[[WORD:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK: arith.andi %[[T32]], %c1_i32
// CHECK: arith.muli %{{.*}}, %c4_i32
// CHECK: arith.shrui %[[T32]], %c1_i32
// CHECK: arith.muli %{{.*}}, %c8_i32
// CHECK: arith.shrui %[[T32]], %c2_i32
// CHECK: arith.muli %{{.*}}, %c16_i32
// CHECK: %[[LANE:.*]] = arith.xori
// CHECK-NEXT: %[[MOVED:.*]], %{{.*}} = gpu.shuffle  idx %[[WORD]], %[[LANE]], %c32_i32 : i32
// CHECK: arith.trunci %[[MOVED]] : i32 to i16
// CHECK-NOT: gpu.barrier
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @shuffle_conversion_kernel {
    gpu.func @shuffle_conversion(%arg0: memref<16xf16>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0 floordiv 4)>} : memref<16xf16, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> ((d0 floordiv 32) * 8 + d0 mod 8)>} : memref<16xf16, #tile.space<fragment>>
      tile.copy %arg0[%c0] [16] to %0[%c0] [16] : memref<16xf16> to memref<16xf16, #tile.space<fragment>>
      tile.copy %0[%c0] [16] to %1[%c0] [16] : memref<16xf16, #tile.space<fragment>> to memref<16xf16, #tile.space<fragment>>
      tile.copy %1[%c0] [16] to %arg0[%c0] [16] : memref<16xf16, #tile.space<fragment>> to memref<16xf16>
      gpu.return
    }
  }
}

// -----

// Layouts that give each thread the same elements in another register order
// convert in registers: no shuffle at all (register 0 of the result is the
// source's register 1 and the other way round).
// CHECK-LABEL: gpu.func @register_permutation
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @register_permutation_kernel {
    gpu.func @register_permutation(%arg0: memref<32x2xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 2, map = (d0, d1) -> (d0, d1)>} : memref<32x2xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 2, map = (d0, d1) -> (d0, (d1 + 1) mod 2)>} : memref<32x2xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [32, 2] to %0[%c0, %c0] [32, 2] : memref<32x2xf32> to memref<32x2xf32, #tile.space<fragment>>
      tile.copy %0[%c0, %c0] [32, 2] to %1[%c0, %c0] [32, 2] : memref<32x2xf32, #tile.space<fragment>> to memref<32x2xf32, #tile.space<fragment>>
      tile.copy %1[%c0, %c0] [32, 2] to %arg0[%c0, %c0] [32, 2] : memref<32x2xf32, #tile.space<fragment>> to memref<32x2xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @staged_epilogue_kernel {
    gpu.func @staged_epilogue(%arg0: memref<64x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
      tile.copy %0[%c0, %c0] [64, 64] to %arg0[%c0, %c0] [64, 64] {tile.staging_offset = 0 : i64} : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// Fragment prefetch: a loop tile-pipeline-loops made whose body is its
// copies and one gemm on the current stage, which prefetches (its
// `prefetch` stages): there is no wait and barrier at the top of the body;
// the first iteration's first K slice is loaded before the loop (after the
// pipeliner's wait and barrier there), and each iteration waits and meets
// after loading its last slice, then loads the next stage's first slice into
// the carried registers before issuing the last slice's mma.sync.
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @prefetch_loop_kernel {
    gpu.func @prefetch_loop(%arg0: memref<256x256xf16>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 24576 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<stages = 3, swizzle = <bits = 2, base = 4, shift = 3>>, offset = 0 : i64} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<stages = 3, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 12288 : i64} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
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
      %c0_4 = arith.constant 0 : index
      %15 = tile.stage %0[%c0_4] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
      %16 = tile.stage %1[%c0_4] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
      nvvm.cp.async.wait.group 1
      gpu.barrier
      scf.for %arg2 = %c0 to %arg1 step %c1 {
        %17 = arith.subi %arg2, %c0 : index
        %18 = arith.divsi %17, %c1 : index
        %c3 = arith.constant 3 : index
        %19 = arith.remsi %18, %c3 : index
        %c2 = arith.constant 2 : index
        %20 = arith.muli %c1, %c2 : index
        %21 = arith.addi %arg2, %20 : index
        %c3_5 = arith.constant 3 : index
        %c2_6 = arith.constant 2 : index
        %22 = arith.addi %18, %c2_6 : index
        %23 = arith.remsi %22, %c3_5 : index
        %24 = arith.cmpi slt, %21, %arg1 : index
        %25 = arith.muli %21, %c32 : index
        %26 = tile.stage %0[%23] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
        tile.copy %arg0[%c0, %25] [64, 32] to %26[%c0, %c0] [64, 32] if %24 {async} : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
        %27 = tile.stage %1[%23] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
        tile.copy %arg0[%25, %c0] [32, 64] to %27[%c0, %c0] [32, 64] if %24 {async} : memref<256x256xf16> to memref<32x64xf16, #gpu.address_space<workgroup>>
        nvvm.cp.async.commit.group
        %28 = tile.stage %0[%19] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
        %29 = tile.stage %1[%19] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
        %30 = arith.muli %arg2, %c32 : index
        %c3_7 = arith.constant 3 : index
        %c1_8 = arith.constant 1 : index
        %31 = arith.addi %18, %c1_8 : index
        %32 = arith.remsi %31, %c3_7 : index
        %33 = tile.stage %0[%32] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
        %34 = tile.stage %1[%32] : memref<3x32x64xf16, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
        tile.gemm %28, %29, %2 prefetch(%15, %16, %33, %34) {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>, prefetch_wait = 1 : i32} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>
      } {tile.num_stages = 3 : i64}
      nvvm.cp.async.wait.group 0
      gpu.return
    }
  }
}
// -----

// A gemm without `prefetch` (tile-pipeline-loops chose none: here a fill
// follows it): the loop keeps its wait and barrier at the top and no slice
// is carried.
// CHECK-LABEL: gpu.func @no_prefetch_loop
// CHECK-NOT: memref<32xf16>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.ldmatrix
// CHECK: } {tile.num_stages = 3 : i64}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @no_prefetch_loop_kernel {
    gpu.func @no_prefetch_loop(%arg0: memref<256x256xf16>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 24576 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 0 : i64} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<stages = 3>, offset = 12288 : i64} : memref<3x32x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d0 floordiv 32) floordiv 2) * 32 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 2) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x64xf32, #tile.space<fragment>>
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
      scf.for %arg2 = %c0 to %arg1 step %c1 {
        %15 = arith.subi %arg2, %c0 : index
        %16 = arith.divsi %15, %c1 : index
        %c3 = arith.constant 3 : index
        %17 = arith.remsi %16, %c3 : index
        nvvm.cp.async.wait.group 1
        gpu.barrier
        %c2 = arith.constant 2 : index
        %18 = arith.muli %c1, %c2 : index
        %19 = arith.addi %arg2, %18 : index
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
        %28 = arith.muli %arg2, %c32 : index
        tile.gemm %26, %27, %2 {mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2, warps_n = 2, a = shared, depth = 0>} : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
        %cst = arith.constant 0.000000e+00 : f32
        tile.fill %2, %cst : memref<64x64xf32, #tile.space<fragment>>, f32
      } {tile.num_stages = 3 : i64}
      nvvm.cp.async.wait.group 0
      gpu.return
    }
  }
}

// -----

// An NT gemm wgmma can run (64 x 128 x K 64, 128 threads = one warpgroup;
// the operands carry the 128-byte swizzle tile-swizzle-shared-memory gives).
// With wgmma: the fence.proxy.async tile-insert-barriers put before the
// barrier (the threads' shared writes, then the tensor cores' reads) stays,
// descriptors from the operands' shared addresses, and between a wgmma.fence and a commit + wait one
// m64n128k16 per 16-deep K slice. Without it: ldmatrix + mma.sync.
// CHECK-LABEL: gpu.func @wgmma_gemm
// CHECK-NOT: wgmma
// CHECK: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @wgmma_gemm_kernel {
    gpu.func @wgmma_gemm(%arg0: memref<64x64xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<128x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 4) * 64 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 4) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [128, 64] to %1[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 1, warps_n = 4, a = shared, depth = 0>, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 0 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// An NT gemm wgmma can run (64 x 128 x K 64, 128 threads = one warpgroup;
// the operands carry the 128-byte swizzle tile-swizzle-shared-memory gives).
// With wgmma: the fence.proxy.async tile-insert-barriers put before the
// barrier (the threads' shared writes, then the tensor cores' reads) stays,
// descriptors from the operands' shared addresses, and between a wgmma.fence and a commit + wait one
// m64n128k16 per 16-deep K slice. Without it: ldmatrix + mma.sync.
// Each operand's first descriptor comes through an opaque move (LLVM keeps it
// beside the gemm, not hoisted out of loops), the K slices' are it plus the
// slice's offset >> 4 (32 bytes further along the swizzled rows: + 2).
// CHECK-LABEL: gpu.func @wgmma_gemm
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[DB:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l"
// CHECK: %[[DA:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l"
// CHECK-NEXT: nvvm.wgmma.mma_async %[[DA]], %[[DB]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NEXT: %[[DB1:.*]] = arith.addi %[[DB]], %c2_i64 : i64
// CHECK-NEXT: %[[DA1:.*]] = arith.addi %[[DA]], %c2_i64 : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[DA1]], %[[DB1]]
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-NOT: nvgpu.mma.sync
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_gemm_kernel {
    gpu.func @wgmma_gemm(%arg0: memref<64x64xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<128x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [128, 64] to %1[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, transpose_b} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 0 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// 128 rows on one warpgroup: two m64 row blocks, one m64n128k16 each per
// 16-deep K slice (A's descriptor 64 rows of 64 bytes = 4096 bytes further
// for the second), each into its own accumulator: half of the fragment's 128
// registers. K tiles of 32
// f16: rows of one 64-byte atom, descriptors in the 64-byte swizzle (mode 2
// in bits 62-63), 8-row groups 512 bytes apart (the stride field, 32 << 32):
// 2 << 62 | 32 << 32 | 1 << 16 = -9223371899415756800.
// CHECK-LABEL: gpu.func @wgmma_two_row_blocks
// CHECK-DAG: arith.constant -9223371899415756800 : i64
// CHECK-DAG: arith.constant 4096 : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_two_row_blocks_kernel {
    gpu.func @wgmma_two_row_blocks(%arg0: memref<128x32xf16>, %arg1: memref<128x32xf16>, %arg2: memref<128x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>, offset = 0 : i64} : memref<128x32xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>, offset = 8192 : i64} : memref<128x32xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 128, map = (d0, d1) -> (((d0 floordiv 32) floordiv 4) * 128 + ((d0 floordiv 32) mod 4) * 16 + (d1 floordiv 64) * 64 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<128x128xf32, #tile.space<fragment>>
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>, transpose_b} : memref<128x32xf16, #gpu.address_space<workgroup>>, memref<128x32xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @wgmma_deferred_kernel {
    gpu.func @wgmma_deferred(%arg0: memref<64x64xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {offset = 8192 : i64} : memref<128x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d0 floordiv 32) floordiv 4) * 64 + (d1 floordiv 16) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d0 floordiv 32) mod 4) * 32 + ((d1 floordiv 4) mod 4) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [128, 64] to %1[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 1, warps_n = 4, a = shared, depth = 0>, transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      tile.wait_wgmma {pending = 0 : i64}
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 0 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// A gemm issued with wg_wait = -1 commits its group and waits for nothing;
// tile.wait_wgmma is one inline PTX wait whose operands are the completed
// accumulator's 64 registers, tied in and out (no read of them moves above
// it). On mma.sync the wait lowers to nothing.
// CHECK-LABEL: gpu.func @wgmma_deferred
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "=f,=f,{{.*}},=f,0,1,2,{{.*}},62,63"
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: gpu.return
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_deferred_kernel {
    gpu.func @wgmma_deferred(%arg0: memref<64x64xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 57344 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<128x64xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [128, 64] to %1[%c0, %c0] [128, 64] : memref<128x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = -1>, transpose_b, wg_wait = -1 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<128x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      tile.wait_wgmma %2 {pending = 0 : i64} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 24576 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// Two warpgroups side by side along N (FullCol, 64 rows): each issues
// m64n128 wgmmas on its own half of B, 128 / 64 column blocks of 64 K rows x
// 128 bytes (16384 bytes) further for the second. The warpgroup index is
// broadcast from lane 0 (ptxas then keeps the descriptors in uniform
// registers).
// CHECK-LABEL: gpu.func @wgmma_warpgroups_along_n
// CHECK: gpu.shuffle  idx
// CHECK: arith.divui %{{.*}}, %c2_i64 : i64
// CHECK: %[[N:.*]] = arith.remui %{{.*}}, %c2_i64 : i64
// CHECK: arith.muli %[[N]], %c16384_i64 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_warpgroups_along_n_kernel {
    gpu.func @wgmma_warpgroups_along_n(%arg0: memref<64x64xf16>, %arg1: memref<64x256xf16>, %arg2: memref<64x256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.shared_bytes = 65536 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<64x256xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 256, regs = 64, map = (d0, d1) -> (((((d0 floordiv 32) floordiv 4) floordiv 2) * 4 + (d0 floordiv 32) mod 4) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, (((d0 floordiv 32) floordiv 4) mod 2) * 128 + ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x256xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [64, 256] to %1[%c0, %c0] [64, 256] : memref<64x256xf16> to memref<64x256xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 2, a = shared, depth = 0>, policy = #tile.warp_policy<full_col>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x256xf16, #gpu.address_space<workgroup>>, memref<64x256xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 256] to %arg2[%c0, %c0] [64, 256] {tile.staging_offset = 0 : i64} : memref<64x256xf32, #tile.space<fragment>> to memref<64x256xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @tile_loop_kernel {
    gpu.func @tile_loop(%arg0: memref<64x128xf32>, %arg1: memref<64x128xf32>, %arg2: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<64x128xf32, #tile.space<fragment>>
      scf.for %arg3 = %c0 to %arg2 step %c1 {
        tile.copy %arg0[%c0, %c0] [64, 128] to %0[%c0, %c0] [64, 128] : memref<64x128xf32> to memref<64x128xf32, #tile.space<fragment>>
        tile.copy %0[%c0, %c0] [64, 128] to %arg1[%c0, %c0] [64, 128] : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      } {tile.tile_loop}
      gpu.return
    }
  }
}

// -----

// An NN gemm on wgmma: B (K x N) is stored as 64-column blocks, so its
// copy addresses ((n / 64) * 64 + k) * 64 + n % 64 before the swizzle; the
// B descriptors are N-major (leading offset 64 x 128 bytes between column
// blocks, 1024 between 8-row groups: 0x4000004002000000 plus the address)
// and the wgmma transposes B (layout row).
// CHECK-LABEL: gpu.func @wgmma_nn
// CHECK: arith.divui %{{.*}}, %c64 : index
// CHECK: arith.remui %{{.*}}, %c64 : index
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.ori %{{.*}}, %c4611686293338849280_i64 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_nn_kernel {
    gpu.func @wgmma_nn(%arg0: memref<64x64xf16>, %arg1: memref<64x128xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [64, 128] to %1[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 0 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// A TN gemm on wgmma: A (K x M, transpose_a) is an M-major operand in
// 64-column blocks like an N-major B: its descriptors carry the leading
// offset 64 x 128 bytes (0x4000004002000000 plus the address), its K slices
// start 16 rows (2048 bytes, 128 in the start field) apart, and the wgmma
// transposes A (layout col).
// CHECK-LABEL: gpu.func @wgmma_tn
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[A0:.*]] = llvm.inline_asm has_side_effects {{.*}}"mov.b64 $0, $1;"
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK: arith.addi %[[A0]], %c128_i64 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @wgmma_tn_kernel {
    gpu.func @wgmma_tn(%arg0: memref<64x64xf16>, %arg1: memref<64x128xf16>, %arg2: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, shift = 3>>, offset = 8192 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [64, 64] to %0[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.copy %arg1[%c0, %c0] [64, 128] to %1[%c0, %c0] [64, 128] : memref<64x128xf16> to memref<64x128xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      tile.gemm %0, %1, %2 {clear_accum, transpose_a, mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 4, warps_n = 1, a = shared, depth = 0>} : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x128xf16, #gpu.address_space<workgroup>>, memref<64x128xf32, #tile.space<fragment>>
      gpu.barrier
      tile.copy %2[%c0, %c0] [64, 128] to %arg2[%c0, %c0] [64, 128] {tile.staging_offset = 0 : i64} : memref<64x128xf32, #tile.space<fragment>> to memref<64x128xf32>
      gpu.return
    }
  }
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
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @consumer_barriers_kernel {
    gpu.func @consumer_barriers(%arg0: memref<64xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64, tile.shared_bytes = 384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1_i32 = arith.constant 1 : i32
      %cst = arith.constant 1.000000e+00 : f32
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {offset = 0 : i64} : memref<2xi64, #gpu.address_space<workgroup>>
      %1 = tile.shared_ptr %0[%c1] : memref<2xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
      nvvm.mbarrier.init %1, %c1_i32 : !llvm.ptr<3>, i32
      %2 = tile.alloc_shared {offset = 128 : i64} : memref<64xf32, #gpu.address_space<workgroup>>
      tile.fill %2, %cst : memref<64xf32, #gpu.address_space<workgroup>>, f32
      gpu.barrier
      tile.copy %2[%c0] [64] to %arg0[%c0] [64] : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
      gpu.return
    }
  }
}

// -----

// An atomic add into a global tensor in a parallel loop (T.atomic_add) is
// guarded by the tensor's bounds, like a store: outside it nothing is added.
// CHECK-LABEL: gpu.func @atomic_into_global
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: memref.atomic_rmw addf %{{.*}}, %{{.*}}[%{{.*}}] : (f32, memref<?xf32>) -> f32
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @atomic_into_global_kernel {
    gpu.func @atomic_into_global(%arg0: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c1 = arith.constant 1 : index
      %cst = arith.constant 1.000000e+00 : f32
      %block_id_x = gpu.block_id  x
      tile.parallel (%arg1) in [128] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} {
        %0 = memref.atomic_rmw addf %cst, %arg0[%arg1] : (f32, memref<?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// T.atomic_addx2 (two adds marked as lanes 0 and 1 of a vector atomic): on
// sm_90 one vector reduction at the first element's address where both
// elements lie inside the tensor and that address is aligned to the pair's
// 8 bytes; elsewhere each element's own guarded add.
// CHECK-LABEL: gpu.func @vector_atomic_sm90
// CHECK: memref.extract_strided_metadata %{{.*}} : memref<8x?xf32>
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: %[[MIS:.*]] = arith.andi %{{.*}}, %c7_i64 : i64
// CHECK: arith.cmpi eq, %[[MIS]], %c0_i64 : i64
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .u64 ga;\0Acvta.to.global.u64 ga, $0;\0Ared.global.add.v2.f32 [ga], {$1, $2};\0A}", "l,f,f"
// CHECK: } else {
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_atomic_sm90_kernel {
    gpu.func @vector_atomic_sm90(%arg0: memref<8x?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %cst = arith.constant 1.000000e+00 : f32
      tile.parallel (%i, %j) in [8, 16] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 16, d0 mod 16)>} {
        %j2 = arith.muli %j, %c2 : index
        %j3 = arith.addi %j2, %c1 : index
        %0 = memref.atomic_rmw addf %cst, %arg0[%i, %j2] {tile.vector_atomic = 2 : i64, tile.vector_lane = 0 : i64} : (f32, memref<8x?xf32>) -> f32
        %1 = memref.atomic_rmw addf %cst, %arg0[%i, %j3] {tile.vector_atomic = 2 : i64, tile.vector_lane = 1 : i64} : (f32, memref<8x?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// T.atomic_add of a tile whose layout gives each thread pairs of consecutive
// columns (an mma accumulator's): on sm_90 the two registers' adds are one
// vector reduction where the pair lies inside and is aligned (a run-time
// check), else each element's own guarded add.
// CHECK-LABEL: gpu.func @atomic_register_pairs
// CHECK-COUNT-1: memref.extract_aligned_pointer_as_index
// CHECK: %[[MIS:.*]] = arith.andi %{{.*}}, %c7_i64 : i64
// CHECK: arith.cmpi eq, %[[MIS]], %c0_i64 : i64
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .u64 ga;\0Acvta.to.global.u64 ga, $0;\0Ared.global.add.v2.f32 [ga], {$1, $2};\0A}", "l,f,f"
// CHECK: } else {
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK-NOT: memref.atomic_rmw
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @atomic_register_pairs_kernel {
    gpu.func @atomic_register_pairs(%arg0: memref<16x?xf32>, %off: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c16 = arith.constant 16 : index
      %base = arith.muli %off, %c16 : index
      %cst = arith.constant 1.000000e+00 : f32
      tile.parallel (%i, %j) in [16, 16] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d0 floordiv 8, (d0 mod 8) * 2 + d1)>} {
        %col = arith.addi %base, %j : index
        %0 = memref.atomic_rmw addf %cst, %arg0[%i, %col] : (f32, memref<16x?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// A shared tile added into a global tensor (T.atomic_add(C[...], s)) in a
// loop whose layout gives each thread runs of 4 columns: on sm_90 a vector
// load from shared memory and one 4-wide vector reduction a run.
// CHECK-LABEL: gpu.func @shared_tile_add_runs
// CHECK: vector.load %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: %[[MIS:.*]] = arith.andi %{{.*}}, %c15_i64 : i64
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .u64 ga;\0Acvta.to.global.u64 ga, $0;\0Ared.global.add.v4.f32 [ga], {$1, $2, $3, $4};\0A}", "l,f,f,f,f"
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @shared_tile_add_runs_kernel {
    gpu.func @shared_tile_add_runs(%arg0: memref<16x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 4096 : i64} {
      %s = tile.alloc_shared {offset = 0 : i64} : memref<16x64xf32, #gpu.address_space<workgroup>>
      tile.parallel (%i, %j) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (d0 floordiv 16 + (d1 floordiv 4) * 8, (d0 mod 16) * 4 + d1 mod 4)>} {
        %v = memref.load %s[%i, %j] : memref<16x64xf32, #gpu.address_space<workgroup>>
        %0 = memref.atomic_rmw addf %v, %arg0[%i, %j] : (f32, memref<16x64xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// The same on sm_80: each register's own guarded add.
// CHECK-LABEL: gpu.func @atomic_register_pairs_sm80
// CHECK-NOT: llvm.inline_asm
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @atomic_register_pairs_sm80_kernel {
    gpu.func @atomic_register_pairs_sm80(%arg0: memref<16x?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %cst = arith.constant 1.000000e+00 : f32
      tile.parallel (%i, %j) in [16, 16] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d0 floordiv 8, (d0 mod 8) * 2 + d1)>} {
        %0 = memref.atomic_rmw addf %cst, %arg0[%i, %j] : (f32, memref<16x?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// Before sm_90 (no vector reductions) each element is its own guarded add.
// CHECK-LABEL: gpu.func @vector_atomic_sm80
// CHECK-NOT: llvm.inline_asm
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @vector_atomic_sm80_kernel {
    gpu.func @vector_atomic_sm80(%arg0: memref<8x?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %cst = arith.constant 1.000000e+00 : f32
      tile.parallel (%i, %j) in [8, 16] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 16, d0 mod 16)>} {
        %j2 = arith.muli %j, %c2 : index
        %j3 = arith.addi %j2, %c1 : index
        %0 = memref.atomic_rmw addf %cst, %arg0[%i, %j2] {tile.vector_atomic = 2 : i64, tile.vector_lane = 0 : i64} : (f32, memref<8x?xf32>) -> f32
        %1 = memref.atomic_rmw addf %cst, %arg0[%i, %j3] {tile.vector_atomic = 2 : i64, tile.vector_lane = 1 : i64} : (f32, memref<8x?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// A vector atomic's lanes must come in a row: an error otherwise.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_atomic_apart_kernel {
    gpu.func @vector_atomic_apart(%arg0: memref<8x?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %cst = arith.constant 1.000000e+00 : f32
      tile.parallel (%i, %j) in [8, 16] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d0 floordiv 16, d0 mod 16)>} {
        %j2 = arith.muli %j, %c2 : index
        // expected-error @+1 {{'memref.atomic_rmw' op has lane 1 of its T.atomic_addx2 missing or apart}}
        %0 = memref.atomic_rmw addf %cst, %arg0[%i, %j2] {tile.vector_atomic = 2 : i64, tile.vector_lane = 0 : i64} : (f32, memref<8x?xf32>) -> f32
        %j3 = arith.addi %j2, %c1 : index
        %1 = memref.atomic_rmw addf %cst, %arg0[%i, %j3] {tile.vector_atomic = 2 : i64, tile.vector_lane = 1 : i64} : (f32, memref<8x?xf32>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// return_prev: the guarded add yields the value it found (0 where the index
// is outside the tensor and nothing was added), which the store uses.
// CHECK-LABEL: gpu.func @atomic_return_prev
// CHECK: %[[OLD:.*]] = scf.if %{{.*}} -> (i32) {
// CHECK-NEXT: %[[GOT:.*]] = memref.atomic_rmw addi %{{.*}}, %{{.*}}[%{{.*}}] : (i32, memref<?xi32>) -> i32
// CHECK-NEXT: scf.yield %[[GOT]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %c0_i32{{.*}} : i32
// CHECK: memref.store %[[OLD]]
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @atomic_return_prev_kernel {
    gpu.func @atomic_return_prev(%arg0: memref<?xi32>, %arg1: memref<128xi32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      tile.parallel (%arg2) in [128] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} {
        %0 = memref.atomic_rmw addi %one, %arg0[%c0] : (i32, memref<?xi32>) -> i32
        memref.store %0, %arg1[%arg2] : memref<128xi32>
      }
      gpu.return
    }
  }
}

// -----

// Adding into a fragment atomically means nothing: an error.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @atomic_into_fragment_kernel {
    gpu.func @atomic_into_fragment() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c1 = arith.constant 1 : index
      %cst = arith.constant 1.000000e+00 : f32
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} : memref<128xf32, #tile.space<fragment>>
      tile.parallel (%arg0) in [128] attributes {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} {
        // expected-error @+1 {{'memref.atomic_rmw' op works atomically on global tensors, shared buffers and reducer partials only}}
        %1 = memref.atomic_rmw addf %cst, %0[%arg0] : (f32, memref<128xf32, #tile.space<fragment>>) -> f32
      }
      gpu.return
    }
  }
}

// -----

// What the patterns need must be in the IR: a fragment's layout.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @no_layout_kernel {
    gpu.func @no_layout() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %cst = arith.constant 0.0 : f32
      // expected-error @+1 {{'tile.alloc_fragment' op has no layout; run tile-infer-layout first}}
      %0 = tile.alloc_fragment : memref<128xf32, #tile.space<fragment>>
      tile.fill %0, %cst : memref<128xf32, #tile.space<fragment>>, f32
      gpu.return
    }
  }
}

// -----

// A gemm's instruction.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @no_mma_kernel {
    gpu.func @no_mma() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %a = tile.alloc_shared {offset = 0 : i64} : memref<16x16xf16, #gpu.address_space<workgroup>>
      %b = tile.alloc_shared {offset = 512 : i64} : memref<16x8xf16, #gpu.address_space<workgroup>>
      %c = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = (d0, d1) -> (d0 floordiv 4 + (d1 floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)>} : memref<16x8xf32, #tile.space<fragment>>
      // expected-error @+1 {{'tile.gemm' op has no #tile.mma: run tile-select-mma first}}
      tile.gemm %a, %b, %c : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// -----

// A shared buffer's offset.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @no_offset_kernel {
    gpu.func @no_offset() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %cst = arith.constant 0.0 : f16
      // expected-error @+1 {{'tile.alloc_shared' op has no offset; run tile-allocate-shared-memory first}}
      %0 = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
      tile.fill %0, %cst : memref<64x32xf16, #gpu.address_space<workgroup>>, f16
      gpu.return
    }
  }
}

// -----

// A fragment element read outside a parallel loop has no thread to run it.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @fragment_outside_kernel {
    gpu.func @fragment_outside(%out: memref<1xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 1, map = (d0, d1) -> (d1 * 128 + d0)>} : memref<128xf32, #tile.space<fragment>>
      // expected-error @+1 {{'memref.load' op uses a fragment in a way tlc cannot lower yet}}
      %1 = memref.load %0[%c0] : memref<128xf32, #tile.space<fragment>>
      memref.store %1, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}

// -----

// tile.tma_store: thread 0 issues one bulk tensor store per 64-column block
// (coordinates innermost first, the second block 64 columns on, from the
// block's first element: 64 x 64 x 2 bytes past the first) and commits them
// as one group.
// CHECK-LABEL: gpu.func @tma_store
// CHECK-SAME: %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[MAP:[^:]*]]: !llvm.ptr
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0 : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[COL:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: %[[ROW:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %{{.*}}, box[%[[COL]], %[[ROW]]]
// CHECK: arith.addi %{{.*}}, %c8192 : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[COL]], %c64_i32 : i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %{{.*}}, box[%[[NEXT]], %[[ROW]]]
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @tma_store_kernel {
    gpu.func @tma_store(%arg0: memref<4096x4096xf16>, %i: index, %j: index, %map: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64, tile.tensor_maps = 1 : i64} {
      %0 = tile.alloc_shared {layout = #tile.shared<column_block = 64, swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x128xf16, #gpu.address_space<workgroup>>
      tile.tma_store %0 to %map[%i, %j] : memref<64x128xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// A vector store of a 16-byte run into a swizzled shared buffer (as
// T.c2d_im2col writes its tile) stays one vector store, of the flat view at
// the run's swizzled first element: the 128-byte swizzle moves whole 16-byte
// chunks. One per register of the loop.
// CHECK-LABEL: gpu.func @vector_into_swizzled
// CHECK: %[[FLAT:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NOT: vector.store
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_into_swizzled_kernel {
    gpu.func @vector_into_swizzled(%arg0: memref<64x64xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.parallel (%arg1, %arg2) in [64, 8] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> ((d1 * 128 + d0) floordiv 8, (d1 * 128 + d0) mod 8)>} {
        %j = arith.muli %arg2, %c8 : index
        %v = vector.load %arg0[%arg1, %j] {alignment = 16 : i64} : memref<64x64xf16>, vector<8xf16>
        vector.store %v, %0[%arg1, %j] {alignment = 16 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      }
      gpu.return
    }
  }
}

// -----

// A run the op does not promise to be aligned could straddle two swizzled
// chunks: an error, not a silently scattered store.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_unaligned_kernel {
    gpu.func @vector_unaligned(%arg0: memref<64x64xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.parallel (%arg1, %arg2) in [64, 8] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> ((d1 * 128 + d0) floordiv 8, (d1 * 128 + d0) mod 8)>} {
        %j = arith.muli %arg2, %c8 : index
        %v = vector.load %arg0[%arg1, %j] {alignment = 16 : i64} : memref<64x64xf16>, vector<8xf16>
        // expected-error @+1 {{'vector.store' op accesses 8 elements of a laid-out shared buffer at once: a vector of 16 bytes needs an alignment of at least 16 bytes (a power of two) to stay contiguous in a laid-out shared buffer}}
        vector.store %v, %0[%arg1, %j] {alignment = 2 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      }
      gpu.return
    }
  }
}

// -----

// A swizzle of 8-byte chunks splits a 16-byte run.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_small_chunks_kernel {
    gpu.func @vector_small_chunks(%arg0: memref<64x64xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %block_id_x = gpu.block_id  x
      %0 = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 3, shift = 3>>, offset = 0 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>
      tile.parallel (%arg1, %arg2) in [64, 8] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> ((d1 * 128 + d0) floordiv 8, (d1 * 128 + d0) mod 8)>} {
        %j = arith.muli %arg2, %c8 : index
        %v = vector.load %arg0[%arg1, %j] {alignment = 16 : i64} : memref<64x64xf16>, vector<8xf16>
        // expected-error @+1 {{'vector.store' op accesses 8 elements of a laid-out shared buffer at once: the swizzle moves 8-byte chunks, smaller than the 16-byte vector}}
        vector.store %v, %0[%arg1, %j] {alignment = 16 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      }
      gpu.return
    }
  }
}

// -----

// A loop over global tensors whose layout gives each thread runs of 8
// consecutive f16 (tile-infer-layout's choice when the body allows it) moves
// each run as one vector: a guarded vector load per input, the sum on
// vector<8xf16>, a guarded vector store; 4 runs of the 32 registers.
// CHECK-LABEL: gpu.func @vector_runs
// CHECK-COUNT-8: vector.load %{{.*}} : memref<64x256xf16>, vector<8xf16>
// CHECK-NOT: vector.load %{{.*}} : memref<64x256xf16>, vector<8xf16>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK: vector.store %{{.*}} : memref<64x256xf16>, vector<8xf16>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_runs_kernel {
    gpu.func @vector_runs(%A: memref<64x256xf16>, %B: memref<64x256xf16>, %C: memref<64x256xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c128 = arith.constant 128 : index
      %block_id_x = gpu.block_id  x
      %col0 = arith.muli %block_id_x, %c128 : index
      tile.parallel (%i, %j) in [32, 128] attributes {layout = #tile.layout<threads = 128, regs = 32, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 128, ((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) mod 128)>} {
        %col = arith.addi %col0, %j : index
        %a = memref.load %A[%i, %col] : memref<64x256xf16>
        %b = memref.load %B[%i, %col] : memref<64x256xf16>
        %s = arith.addf %a, %b : f16
        memref.store %s, %C[%i, %col] : memref<64x256xf16>
      }
      gpu.return
    }
  }
}

// -----

// Runs into a swizzled shared buffer, with a value the run shares: the
// shared element is loaded once per run (guarded), broadcast, and each run
// stored as one vector of the flat view at its swizzled first element.
// CHECK-LABEL: gpu.func @vector_runs_shared
// CHECK: %[[FLAT:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<16xf16>
// CHECK: vector.broadcast %{{.*}} : f16 to vector<8xf16>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<1024xf16, #gpu.address_space<workgroup>>, vector<8xf16>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @vector_runs_shared_kernel {
    gpu.func @vector_runs_shared(%A: memref<16x64xf16>, %scale: memref<16xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 2048 : i64} {
      %block_id_x = gpu.block_id  x
      %s = tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>, offset = 0 : i64} : memref<16x64xf16, #gpu.address_space<workgroup>>
      tile.parallel (%i, %j) in [16, 64] attributes {layout = #tile.layout<threads = 128, regs = 8, map = (d0, d1) -> (((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) floordiv 64, ((d1 floordiv 8) * 1024 + d0 * 8 + d1 mod 8) mod 64)>} {
        %x = memref.load %A[%i, %j] : memref<16x64xf16>
        %r = memref.load %scale[%i] : memref<16xf16>
        %y = arith.mulf %x, %r : f16
        memref.store %y, %s[%i, %j] : memref<16x64xf16, #gpu.address_space<workgroup>>
      }
      gpu.return
    }
  }
}

// -----

// A reducer's update combines into the running thread's register of the
// element (the partials' row-major position, dimension 0 left out: here the
// loop's row); a fragment every thread holds whole is read outside loops
// from its registers, and copied out by thread 0 alone.
// CHECK-LABEL: gpu.func @reducer_update
// CHECK: memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: %[[P:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: %[[R:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: %[[OLD:.*]] = memref.load %[[P]][%{{.*}}] : memref<4xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK: memref.store %[[NEW]], %[[P]][%{{.*}}] : memref<4xf32>
// CHECK: gpu.shuffle  xor
// CHECK: %[[S:.*]] = memref.load %[[R]][%c2] : memref<4xf32>
// CHECK: memref.store %[[S]], %arg1[%c0] : memref<1xf32>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: vector.store %{{.*}}, %arg2[%c0] {{.*}} : memref<4xf32>, vector<4xf32>
// CHECK-NOT: tile.{{copy|fill|parallel|alloc|reduce}}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @reducer_update_kernel {
    gpu.func @reducer_update(%arg0: memref<4x128xf32>, %arg1: memref<1xf32>, %arg2: memref<4xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 2048 : i64} {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %zero = arith.constant 0.0 : f32
      %a = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<4x128xf32, #tile.space<fragment>>
      %p = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d0, d1)>, tile.reducer} : memref<128x4xf32, #tile.space<fragment>>
      %r = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (d1)>} : memref<4xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [4, 128] to %a[%c0, %c0] [4, 128] : memref<4x128xf32> to memref<4x128xf32, #tile.space<fragment>>
      tile.fill %p, %zero : memref<128x4xf32, #tile.space<fragment>>, f32
      tile.parallel (%i, %j) in [4, 128] attributes {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} {
        %x = memref.load %a[%i, %j] : memref<4x128xf32, #tile.space<fragment>>
        %w = memref.atomic_rmw addf %x, %p[%c0, %i] : (f32, memref<128x4xf32, #tile.space<fragment>>) -> f32
      }
      tile.reduce %p to %r {kind = #tile.reduce_kind<sum>, dim = 0 : i64, clear, tile.scratch_offset = 0 : i64} : memref<128x4xf32, #tile.space<fragment>> to memref<4xf32, #tile.space<fragment>>
      %s = memref.load %r[%c2] : memref<4xf32, #tile.space<fragment>>
      memref.store %s, %arg1[%c0] : memref<1xf32>
      tile.copy %r[%c0] [4] to %arg2[%c0] [4] : memref<4xf32, #tile.space<fragment>> to memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A tile.ws body becomes an scf.if on the thread index: warpgroup 1 (threads
// 128 to 255) runs it, its tile ops indexing their layouts with the thread's
// index among those 128 (tid - 128), and a barrier in it is the named
// barrier 2 of its 128 threads; the block's own barrier stays bar.sync 0.
// CHECK-LABEL: gpu.func @warp_group
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: gpu.barrier
// CHECK: %[[LO:.*]] = arith.cmpi uge, %[[TID]], %c128
// CHECK: %[[HI:.*]] = arith.cmpi ult, %[[TID]], %c256
// CHECK: %[[IN:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK: scf.if %[[IN]] {
// CHECK:   %[[OWN:.*]] = arith.subi %[[TID]], %c128
// CHECK:   nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
// CHECK:   affine.apply #{{.*}}()[%[[OWN]]]
// CHECK: }
// CHECK-NOT: tile.{{ws|fill|copy|alloc}}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @warp_group_kernel {
    gpu.func @warp_group(%arg0: memref<4x128xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 4, map = (d0, d1) -> (((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) floordiv 128, ((d1 floordiv 4) * 512 + d0 * 4 + d1 mod 4) mod 128)>} : memref<4x128xf32, #tile.space<fragment>>
      gpu.barrier
      tile.ws warpgroups = [1] {
        tile.fill %0, %zero : memref<4x128xf32, #tile.space<fragment>>, f32
        gpu.barrier
        tile.copy %0[%c0, %c0] [4, 128] to %arg0[%c0, %c0] [4, 128] : memref<4x128xf32, #tile.space<fragment>> to memref<4x128xf32>
      }
      gpu.return
    }
  }
}

// -----

// Bodies of warps (a 96-thread block: warp 0, warps 1-2): each is an scf.if
// on its threads, its thread index counted from its first, and its barriers
// are named barriers of its own, one per set of warps in order (1: 32
// threads, 2: 64), whatever warpgroup they are in.
// CHECK-LABEL: gpu.func @warp_bodies
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[HI0:.*]] = arith.cmpi ult, %[[TID]], %c32
// CHECK: scf.if
// CHECK:   nvvm.barrier id = %c1_i32 number_of_threads = %c32_i32
// CHECK: }
// CHECK: %[[LO:.*]] = arith.cmpi uge, %[[TID]], %c32
// CHECK: %[[HI:.*]] = arith.cmpi ult, %[[TID]], %c96
// CHECK: scf.if
// CHECK:   %[[OWN:.*]] = arith.subi %[[TID]], %c32
// CHECK:   nvvm.barrier id = %c2_i32 number_of_threads = %c64_i32
// CHECK: }
// CHECK-NOT: tile.{{ws|fill|copy|alloc}}
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @warp_bodies_kernel {
    gpu.func @warp_bodies(%arg0: memref<64xf32>) kernel attributes {known_block_size = array<i32: 96, 1, 1>, tile.shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %0 = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 2, map = (d0, d1) -> (d1 * 32 + d0)>} : memref<64xf32, #tile.space<fragment>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 64, regs = 1, map = (d0, d1) -> (d0)>} : memref<64xf32, #tile.space<fragment>>
      tile.ws warps = [0] {
        tile.fill %0, %zero : memref<64xf32, #tile.space<fragment>>, f32
        gpu.barrier
        tile.copy %0[%c0] [64] to %arg0[%c0] [64] : memref<64xf32, #tile.space<fragment>> to memref<64xf32>
      }
      tile.ws warps = [1, 2] {
        tile.fill %1, %zero : memref<64xf32, #tile.space<fragment>>, f32
        gpu.barrier
        tile.copy %1[%c0] [64] to %arg0[%c0] [64] : memref<64xf32, #tile.space<fragment>> to memref<64xf32>
      }
      gpu.return
    }
  }
}

// -----

// Stream-K's exchange between blocks. tile.store_partials: registers
// 4q .. 4q + 3 of thread t go to columns (q x 128 + t) x 4 of the row as one
// 16-byte store (a warp's stores are 512 contiguous bytes);
// tile.semaphore_signal: the consumers' barrier, then thread 0 fences at GPU
// scope and sets the flag; tile.semaphore_wait: thread 0 spins on an atomic
// read of the flag until it reaches level 1 and fences, then the barrier;
// tile.add_partials: every
// vector of the row loaded first, then added register by register.
// CHECK-LABEL: gpu.func @stream_k_exchange
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[COL0:.*]] = arith.muli %[[TID]], %c4 : index
// CHECK: %[[COL1:.*]] = arith.addi %[[COL0]], %c512 : index
// CHECK: %[[V0:.*]] = vector.from_elements
// CHECK: vector.store %[[V0]], %arg0[%arg2, %[[COL0]]] {alignment = 16 : i64} : memref<?x8192xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg0[%arg2, %[[COL1]]] {alignment = 16 : i64} : memref<?x8192xf32>, vector<4xf32>
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0 : index
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: memref.atomic_rmw assign %c1_i32{{.*}}, %arg1[%arg2] : (i32, memref<?xi32>) -> i32
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: scf.while : () -> () {
// CHECK-NEXT: %[[FLAG:.*]] = memref.atomic_rmw addi %c0_i32, %arg1[%arg3] : (i32, memref<?xi32>) -> i32
// CHECK-NEXT: %[[UNSET:.*]] = arith.cmpi slt, %[[FLAG]], %c1_i32{{.*}} : i32
// CHECK-NEXT: scf.condition(%[[UNSET]])
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: %[[THEIRS:.*]] = vector.load %arg0[%arg3, %{{.*}}] {alignment = 16 : i64} : memref<?x8192xf32>, vector<4xf32>
// CHECK-COUNT-15: vector.load %arg0[%arg3
// CHECK: %[[MINE:.*]] = memref.load %[[REGS:.*]][%c0] : memref<64xf32>
// CHECK: %[[LANE:.*]] = vector.extract %[[THEIRS]][0] : f32 from vector<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[MINE]], %[[LANE]] : f32
// CHECK: memref.store %[[SUM]], %[[REGS]][%c0] : memref<64xf32>
// CHECK-NOT: {{(^ +|= )}}tile.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @stream_k_exchange_kernel {
    gpu.func @stream_k_exchange(%arg0: memref<?x8192xf32>, %arg1: memref<?xi32>, %arg2: index, %arg3: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64} {
      %acc = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.store_partials %acc to %arg0[%arg2] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
      tile.semaphore_signal %arg1[%arg2] : memref<?xi32>
      tile.semaphore_wait %arg1[%arg3] : memref<?xi32>
      tile.add_partials %arg0[%arg3] to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
      gpu.return
    }
  }
}

// -----

// Stream-K's reduce-scatter. tile.semaphore_wait with a count: thread t
// spins on flags first + t, first + t + 128, ... below the count until each
// reaches the level, fences, then the barrier. tile.reduce_partials: slice
// r of a row's V = 2048 vectors is [r V / n, (r + 1) V / n); thread t sums
// its vectors of it over the n rows eight loads at a time (rows past n read
// row `first` and are not added) and stores each sum to row first + r.
// tile.add_partials with a count: vector p comes from row
// first + ((p + 1) n - 1) / V, the slice holding it, and replaces the
// registers (no add: the slices are the whole sums).
// CHECK-LABEL: gpu.func @stream_k_reduce_scatter
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: scf.for %[[T:.*]] = %[[TID]] to %arg3 step %c128 {
// CHECK: %[[AT:.*]] = arith.addi %arg2, %[[T]] : index
// CHECK: scf.while : () -> () {
// CHECK: %[[FLAG:.*]] = memref.atomic_rmw addi %c0_i32, %arg1[%[[AT]]] : (i32, memref<?xi32>) -> i32
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[FLAG]], %c2_i32 : i32
// CHECK: scf.condition(%[[BELOW]])
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: %[[B0:.*]] = arith.muli %arg4, %c2048 : index
// CHECK: %[[BEGIN:.*]] = arith.divui %[[B0]], %arg3 : index
// CHECK: %[[NEXT:.*]] = arith.addi %arg4, %c1 : index
// CHECK: %[[E0:.*]] = arith.muli %[[NEXT]], %c2048 : index
// CHECK: %[[END:.*]] = arith.divui %[[E0]], %arg3 : index
// CHECK: %[[DST:.*]] = arith.addi %arg2, %arg4 : index
// CHECK: %[[FROM:.*]] = arith.addi %[[BEGIN]], %[[TID]] : index
// CHECK: scf.for %[[P:.*]] = %[[FROM]] to %[[END]] step %c128 {
// CHECK: %[[COL:.*]] = arith.muli %[[P]], %c4 : index
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %arg3 step %c8 iter_args(%{{.*}} = %cst) -> (vector<4xf32>) {
// CHECK-COUNT-8: vector.load %arg0[%{{.*}}, %[[COL]]]
// CHECK: scf.yield
// CHECK: vector.store %[[SUM]], %arg0[%[[DST]], %[[COL]]] {alignment = 16 : i64} : memref<?x8192xf32>, vector<4xf32>
// CHECK: %[[R:.*]] = arith.divui %{{.*}}, %c2048 : index
// CHECK: %[[ROW:.*]] = arith.addi %arg2, %[[R]] : index
// CHECK: %[[G:.*]] = vector.load %arg0[%[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<?x8192xf32>, vector<4xf32>
// CHECK-NOT: arith.addf
// CHECK: vector.store %{{.*}}, %arg0[%arg4, %{{.*}}]
// CHECK-NOT: {{(^ +|= )}}tile.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @stream_k_reduce_scatter_kernel {
    gpu.func @stream_k_reduce_scatter(%arg0: memref<?x8192xf32>, %arg1: memref<?xi32>, %arg2: index, %arg3: index, %arg4: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64} {
      %acc = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> ((d0 floordiv 32) * 16 + (d1 floordiv 64) * 16 + (d0 mod 32) floordiv 4 + ((d1 mod 4) floordiv 2) * 8, ((d1 floordiv 4) mod 16) * 8 + (d0 mod 4) * 2 + d1 mod 2)>} : memref<64x128xf32, #tile.space<fragment>>
      tile.semaphore_wait %arg1[%arg2] count %arg3 {level = 2 : i32} : memref<?xi32>
      tile.reduce_partials %arg0[%arg2] count %arg3 slice %arg4 : memref<?x8192xf32>
      tile.add_partials %arg0[%arg2] count %arg3 to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
      tile.store_partials %acc to %arg0[%arg4] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
      gpu.return
    }
  }
}

// -----

// A fragment whose layout holds elements twice (each thread all of a row
// vector, say) has no one-register-per-element row: an error.
module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">} {
  gpu.module @partials_replicated_kernel {
    gpu.func @partials_replicated(%arg0: memref<?x64xf32>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %v = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 64, map = (d0, d1) -> (d1)>} : memref<64xf32, #tile.space<fragment>>
      // expected-error @+1 {{'tile.store_partials' op needs a fragment layout that holds each element once, in a multiple of 4 registers (64 registers x 128 threads for 64 elements)}}
      tile.store_partials %v to %arg0[%arg1] : memref<64xf32, #tile.space<fragment>> to memref<?x64xf32>
      gpu.return
    }
  }
}

// -----

// A serial loop whose index picks a fragment's registers (w[k, j], each
// thread holding its column for every k) is unrolled first: the four
// iterations read registers 0 to 3 by constants, no scf.for is left and the
// registers stay an array the LLVM passes promote (no run-time index).
// CHECK-LABEL: gpu.func @unrolled
// CHECK-NOT: scf.for
// CHECK: memref.load %[[W:alloca[_0-9]*]][%c0] : memref<4xf32>
// CHECK: memref.load %[[W]][%c1] : memref<4xf32>
// CHECK: memref.load %[[W]][%c2] : memref<4xf32>
// CHECK: memref.load %[[W]][%c3] : memref<4xf32>
// CHECK-NOT: scf.for
// CHECK: gpu.return
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @unrolled_kernel {
    gpu.func @unrolled(%arg0: memref<4x32xf32>, %arg1: memref<32xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %w = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = (d0, d1) -> (d1, d0)>} : memref<4x32xf32, #tile.space<fragment>>
      %t = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} : memref<32xf32, #tile.space<fragment>>
      tile.copy %arg0[%c0, %c0] [4, 32] to %w[%c0, %c0] [4, 32] : memref<4x32xf32> to memref<4x32xf32, #tile.space<fragment>>
      tile.parallel (%j) in [32] attributes {layout = #tile.layout<threads = 32, regs = 1, map = (d0, d1) -> (d0)>} {
        %zero = arith.constant 0.0 : f32
        memref.store %zero, %t[%j] : memref<32xf32, #tile.space<fragment>>
        scf.for %k = %c0 to %c4 step %c1 {
          %a = memref.load %w[%k, %j] : memref<4x32xf32, #tile.space<fragment>>
          %s = memref.load %t[%j] : memref<32xf32, #tile.space<fragment>>
          %q = arith.addf %s, %a : f32
          memref.store %q, %t[%j] : memref<32xf32, #tile.space<fragment>>
        }
      }
      tile.copy %t[%c0] [32] to %arg1[%c0] [32] : memref<32xf32, #tile.space<fragment>> to memref<32xf32>
      gpu.return
    }
  }
}

// -----

// A padded loop layout (129 iterations on 128 threads): register 0 of every
// thread is inside, so its iteration runs unguarded (the store's own bound
// check on the tensor aside); register 1 (t + 128) only where t + 128 < 129.
// CHECK-LABEL: gpu.func @padded_loop
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[OWN:.*]] = arith.cmpi ult, %[[TID]], %c129
// CHECK: scf.if %[[OWN]] {
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[TID]]] : memref<129xf32>
// CHECK: }
// CHECK: %[[SECOND:.*]] = affine.apply #{{.*}}()[%[[TID]]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[SECOND]], %c129
// CHECK: scf.if %[[IN]] {
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[SECOND]]] : memref<129xf32>
module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">} {
  gpu.module @padded_loop_kernel {
    gpu.func @padded_loop(%arg0: memref<129xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64} {
      %one = arith.constant 1.0 : f32
      tile.parallel (%i) in [129] attributes {layout = #tile.layout<threads = 128, regs = 2, map = (d0, d1) -> (d1 * 128 + d0)>} {
        memref.store %one, %arg0[%i] : memref<129xf32>
      }
      gpu.return
    }
  }
}
