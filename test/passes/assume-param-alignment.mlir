// RUN: tlc-opt %s -split-input-file -tile-assume-param-alignment | FileCheck %s

// Each global memref parameter of a kernel goes through one
// memref.assume_alignment 16, and the body uses its result; shared and
// register buffers, scalars and unused parameters are left alone.
// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: (%[[A:.*]]: memref<1024xf16>, %[[B:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[U:.*]]: memref<8xf32>)
// CHECK-NEXT: %[[AA:.*]] = memref.assume_alignment %[[A]], 16 : memref<1024xf16>
// CHECK-NEXT: %[[BA:.*]] = memref.assume_alignment %[[B]], 16 : memref<?x?xf32>
// CHECK-NOT: memref.assume_alignment
// CHECK: memref.load %[[AA]][%[[N]]] : memref<1024xf16>
// CHECK: memref.store %{{.*}}, %[[BA]][%[[N]], %[[N]]] : memref<?x?xf32>
// CHECK: memref.load %[[AA]][%{{.*}}] : memref<1024xf16>
gpu.module @m {
  gpu.func @kernel(%A: memref<1024xf16>, %B: memref<?x?xf32>, %n: index, %unused: memref<8xf32>) kernel {
    %x = memref.load %A[%n] : memref<1024xf16>
    %y = arith.extf %x : f16 to f32
    memref.store %y, %B[%n, %n] : memref<?x?xf32>
    %c1 = arith.constant 1 : index
    %m = arith.addi %n, %c1 : index
    %z = memref.load %A[%m] : memref<1024xf16>
    gpu.return
  }
}

// -----

// A function that is not a kernel, and a kernel run through the pass twice
// (its parameters are assumed once).
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: memref.assume_alignment
// CHECK-LABEL: gpu.func @again
// CHECK-COUNT-1: memref.assume_alignment
// CHECK-NOT: memref.assume_alignment
gpu.module @m {
  gpu.func @helper(%A: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %x = memref.load %A[%c0] : memref<16xf32>
    gpu.return
  }
  gpu.func @again(%A: memref<16xf32>) kernel {
    %a = memref.assume_alignment %A, 16 : memref<16xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<16xf32>
    gpu.return
  }
}
