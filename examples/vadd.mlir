func.func @vadd(%A: memref<?x?xf32> {tile.name = "A", tile.dims = ["M", "N"]},
                %B: memref<?x?xf32> {tile.name = "B", tile.dims = ["M", "N"]},
                %C: memref<?x?xf32> {tile.name = "C", tile.dims = ["M", "N"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %A, %c0 : memref<?x?xf32>
  %n = memref.dim %A, %c1 : memref<?x?xf32>
  %gx = arith.ceildivui %n, %c128 : index
  %gy = arith.ceildivui %m, %c32 : index
  tile.kernel blocks(%bx, %by) in (%gx, %gy) threads = 128 {
    %a = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    %b = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    %i = arith.muli %by, %c32 : index
    %j = arith.muli %bx, %c128 : index
    tile.copy %A[%i, %j] [32, 128] to %a[%c0, %c0] [32, 128] : memref<?x?xf32> to memref<32x128xf32, #tile.space<fragment>>
    tile.copy %B[%i, %j] [32, 128] to %b[%c0, %c0] [32, 128] : memref<?x?xf32> to memref<32x128xf32, #tile.space<fragment>>
    tile.parallel (%ii, %jj) in [32, 128] {
      %x = memref.load %a[%ii, %jj] : memref<32x128xf32, #tile.space<fragment>>
      %y = memref.load %b[%ii, %jj] : memref<32x128xf32, #tile.space<fragment>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %a[%ii, %jj] : memref<32x128xf32, #tile.space<fragment>>
    }
    tile.copy %a[%c0, %c0] [32, 128] to %C[%i, %j] [32, 128] : memref<32x128xf32, #tile.space<fragment>> to memref<?x?xf32>
  }
  return
}
