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

func.func @gemm_not_lowered() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    // expected-error @+1 {{'tile.gemm' op is not lowered by this version of tlc yet (the tensor-core and reduction lowerings come next)}}
    tile.gemm %a, %b, %c : memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
  }
  return
}
