// RUN: tlc-opt %s -split-input-file -tile-grid-constant-params | FileCheck %s

// The last tile.tensor_maps parameters become 128-byte byval grid constants;
// the count attribute is consumed and the other parameters keep theirs.
// CHECK-LABEL: llvm.func @two_maps
// CHECK-SAME: (%arg0: !llvm.ptr {llvm.noalias}, %arg1: i64,
// CHECK-SAME: %arg2: !llvm.ptr {llvm.align = 128 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %arg3: !llvm.ptr {llvm.align = 128 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: tile.tensor_maps
gpu.module @k {
  llvm.func @two_maps(%a: !llvm.ptr {llvm.noalias}, %n: i64, %m0: !llvm.ptr, %m1: !llvm.ptr) attributes {nvvm.kernel, tile.tensor_maps = 2 : i64} {
    llvm.return
  }
}

// -----

// Kernels without tensor maps are left alone.
// CHECK-LABEL: llvm.func @no_maps
// CHECK-SAME: (%arg0: !llvm.ptr, %arg1: !llvm.ptr)
// CHECK-NOT: grid_constant
gpu.module @k {
  llvm.func @no_maps(%a: !llvm.ptr, %b: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}
