// The tlc command: tile IR in, PTX out, with 16-byte global accesses.
// RUN: tlc %s | FileCheck %s
// RUN: tlc %s -o %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o %t.cubin %}

// CHECK: .target sm_90a
// CHECK: .visible .entry vadd(
// CHECK-COUNT-4: ld.global.v4.b32
// CHECK: add.rn.f32
// CHECK: st.global.v4.b32
// CHECK-NOT: .local

func.func @vadd(%A: memref<?x?xf32> {tile.name = "A", tile.dims = ["M", "N"]},
                %B: memref<?x?xf32> {tile.name = "B", tile.dims = ["M", "N"]},
                %C: memref<?x?xf32> {tile.name = "C", tile.dims = ["M", "N"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %A, %c0 : memref<?x?xf32>
  %n = memref.dim %A, %c1 : memref<?x?xf32>
  %gx = arith.ceildivui %n, %c128 : index
  %gy = arith.ceildivui %m, %c8 : index
  tile.kernel blocks(%bx, %by) in (%gx, %gy) threads = 128 {
    %a = tile.alloc_fragment : memref<8x128xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<8x128xf32, #tile.space<fragment>>
    %i = arith.muli %by, %c8 : index
    %j = arith.muli %bx, %c128 : index
    tile.copy %A[%i, %j] [8, 128] to %a[%c0, %c0] [8, 128] : memref<?x?xf32> to memref<8x128xf32, #tile.space<fragment>>
    tile.copy %B[%i, %j] [8, 128] to %b[%c0, %c0] [8, 128] : memref<?x?xf32> to memref<8x128xf32, #tile.space<fragment>>
    tile.parallel (%ii, %jj) in [8, 128] {
      %x = memref.load %a[%ii, %jj] : memref<8x128xf32, #tile.space<fragment>>
      %y = memref.load %b[%ii, %jj] : memref<8x128xf32, #tile.space<fragment>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %a[%ii, %jj] : memref<8x128xf32, #tile.space<fragment>>
    }
    tile.copy %a[%c0, %c0] [8, 128] to %C[%i, %j] [8, 128] : memref<8x128xf32, #tile.space<fragment>> to memref<?x?xf32>
  }
  return
}

// RUN: not tlc %S/Inputs/over-budget.mlir -o %t.bad.ptx 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not test -e %t.bad.ptx
// BUDGET: over-budget.mlir:4:3: error: the kernel needs 262144 bytes of shared memory but the target allows 232448 per block
// BUDGET-NEXT:   tile.kernel blocks(%bx) in (%c1) threads = 128 {
// BUDGET-NEXT:   ^
