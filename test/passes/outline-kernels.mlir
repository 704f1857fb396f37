// RUN: tlc-opt %s -split-input-file -tile-outline-kernels -verify-diagnostics | FileCheck %s

// The program becomes a gpu.func kernel; block indices become gpu.block_id;
// the grid, parameters and their access are launch metadata on the module.
// CHECK: module attributes {gpu.container_module, tile.kernels = {scale = {grid = ["ceildiv(M, 32)", "(N // 128)", "1"], params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["M", 128]}, {access = "write", dtype = "float16", kind = "tensor", name = "B", shape = ["B_0", "B_1"]}, {dtype = "int32", kind = "scalar", name = "N"}], shared_bytes = 0 : i64, threads = [64, 1, 1]}}}
// CHECK: gpu.module @scale_kernel
// CHECK: gpu.func @scale(%[[A:.*]]: memref<?x128xf32>, %[[B:.*]]: memref<?x?xf16>, %[[N:.*]]: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[BY:.*]] = gpu.block_id y
// CHECK: tile.alloc_fragment
// CHECK: arith.muli %[[BX]]
// CHECK: gpu.return
// CHECK-NOT: func.func @scale
func.func @scale(%A: memref<?x128xf32> {tile.name = "A", tile.dims = ["M"]},
                 %B: memref<?x?xf16> {tile.name = "B"},
                 %N: i32 {tile.name = "N"}) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %A, %c0 : memref<?x128xf32>
  %gx = arith.ceildivui %m, %c32 : index
  %n = arith.index_cast %N : i32 to index
  %gy = arith.divui %n, %c128 : index
  tile.kernel blocks(%bx, %by) in (%gx, %gy) threads = 64 {
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    %i = arith.muli %bx, %c32 : index
    tile.copy %A[%i, %c0] [32, 128] to %f[%c0, %c0] [32, 128] : memref<?x128xf32> to memref<32x128xf32, #tile.space<fragment>>
    tile.copy %f[%c0, %c0] [32, 128] to %B[%i, %c0] [32, 128] : memref<32x128xf32, #tile.space<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// T.annotate_min_blocks_per_sm: the kernel's tile.min_blocks_per_sm becomes
// NVVM's minctasm (PTX .minnctapersm).
// CHECK-LABEL: gpu.func @two_an_sm
// CHECK-SAME: nvvm.minctasm = 2 : i32
func.func @two_an_sm(%A: memref<128xf32> {tile.name = "A"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.min_blocks_per_sm = 2 : i64} {
  }
  return
}

// -----

// T.Kernel(..., cluster_dims=2): the kernel's tile.cluster_dims becomes NVVM's
// cluster_dim (PTX .reqnctapercluster) and the launch metadata's cluster_dims,
// which the launcher checks the grid against.
// CHECK: tile.kernels = {pairs = {cluster_dims = [2, 1, 1]
// ptxas would bound its registers below the launch's share (65536 / 128
// threads: 255 at most), so it gets that bound (nvvm.maxnreg).
// CHECK-LABEL: gpu.func @pairs
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-SAME: nvvm.maxnreg = 255 : i32
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @pairs(%A: memref<128xf32> {tile.name = "A"}) {
  %c4 = arith.constant 4 : index
  tile.kernel blocks(%bx) in (%c4) threads = 128 attributes {tile.cluster_dims = array<i32: 2, 1, 1>} {
  }
  return
}
}

// -----

// A cooperative launch (T.sync_grid) of a kernel launched in clusters is
// not one tlc makes: an error at the kernel.
module attributes {tile.target = #tile.target<"sm_90a">} {
func.func @cooperative_pairs(%A: memref<128xf32> {tile.name = "A"}) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{synchronises its whole grid (T.sync_grid), a cooperative launch, and is launched in thread-block clusters (cluster_dims)}}
  tile.kernel blocks(%bx) in (%c4) threads = 128 attributes {tile.cluster_dims = array<i32: 2, 1, 1>, tile.cooperative} {
  }
  return
}
}

// -----

// Clusters need sm_90's: on sm_80 they are an error at the kernel.
module attributes {tile.target = #tile.target<"sm_80">} {
func.func @pairs_on_ampere(%A: memref<128xf32> {tile.name = "A"}) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{is launched in thread-block clusters (cluster_dims), which need sm_90a; the target is sm_80}}
  tile.kernel blocks(%bx) in (%c4) threads = 128 attributes {tile.cluster_dims = array<i32: 2, 1, 1>} {
  }
  return
}
}

// -----

// Functions without a tile.kernel are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: gpu.func @helper
func.func @helper(%x: f32) -> f32 {
  return %x : f32
}

// -----

func.func @float_grid(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %A, %c0 : memref<?xf32>
  %f = arith.index_cast %m : index to i64
  %g = arith.sitofp %f : i64 to f32
  // expected-error @+1 {{'arith.fptoui' op computes a grid size, which must come from constants, tensor sizes, integer parameters and integer arithmetic to be part of the launch metadata}}
  %h = arith.fptoui %g : f32 to i64
  %gx = arith.index_cast %h : i64 to index
  tile.kernel blocks(%bx) in (%gx) threads = 128 {
  }
  return
}

// -----

// A grid from a dimension the tensor does not have (found by the fuzzer:
// an assertion before).
func.func @grid_of_missing_dim(%A: memref<?x?xf16>) {
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'memref.dim' op asks for dimension 2 of a rank-2 tensor}}
  %m = memref.dim %A, %c2 : memref<?x?xf16>
  tile.kernel blocks(%bx) in (%m) threads = 128 {
  }
  return
}

// -----

// Several kernels in one function are launched in order: each becomes its
// own gpu.func (<func>_k<i>) with the function's ops before it, and the
// metadata lists the launches, the parameters' access over all of them and
// the scratch tensors (tile.scratch arguments) the launcher allocates.
// CHECK: tile.kernels = {pair = {launches = [{grid = ["ceildiv(N, 32)", "1", "1"], name = "pair_k0", params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["N"]}, {access = "read", dtype = "float32", kind = "tensor", name = "B", shape = ["N"]}, {access = "write", dtype = "float32", kind = "tensor", name = "S", shape = [2, "N"]}], shared_bytes = 0 : i64, threads = [32, 1, 1]}, {grid = ["1", "1", "1"], name = "pair_k1", params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["N"]}, {access = "write", dtype = "float32", kind = "tensor", name = "B", shape = ["N"]}, {access = "read", dtype = "float32", kind = "tensor", name = "S", shape = [2, "N"]}], shared_bytes = 0 : i64, threads = [64, 1, 1]}], params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["N"]}, {access = "write", dtype = "float32", kind = "tensor", name = "B", shape = ["N"]}], scratch = [{dtype = "float32", name = "S", shape = [2, "N"]}]}}
// CHECK: gpu.module @pair_k0_kernel
// CHECK: gpu.func @pair_k0(%[[A0:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[S0:.*]]: memref<2x?xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: %[[X:.*]] = memref.load %[[A0]]
// CHECK: memref.store %[[X]], %[[S0]]
// CHECK-NOT: memref.load %[[S0]]
// CHECK: gpu.return
// CHECK: gpu.module @pair_k1_kernel
// CHECK: gpu.func @pair_k1(%{{.*}}: memref<?xf32>, %[[B1:.*]]: memref<?xf32>, %[[S1:.*]]: memref<2x?xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK: %[[Y:.*]] = memref.load %[[S1]]
// CHECK: memref.store %[[Y]], %[[B1]]
// CHECK: gpu.return
// CHECK-NOT: func.func @pair
func.func @pair(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
                %B: memref<?xf32> {tile.name = "B", tile.dims = ["N"]},
                %S: memref<2x?xf32> {tile.name = "S", tile.dims = ["", "N"], tile.scratch}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c32 : index
  tile.kernel blocks(%bx) in (%g) threads = 32 {
    %x = memref.load %A[%bx] : memref<?xf32>
    memref.store %x, %S[%c1, %bx] : memref<2x?xf32>
  }
  tile.kernel blocks(%bx) in (%c1) threads = 64 {
    %y = memref.load %S[%c1, %c0] : memref<2x?xf32>
    memref.store %y, %B[%c0] : memref<?xf32>
  }
  return
}

// -----

// One kernel and a scratch tensor: a sequence of one launch, which keeps
// the function's name.
// CHECK: tile.kernels = {lone = {launches = [{grid = ["1", "1", "1"], name = "lone", params = [{access = "write", dtype = "float32", kind = "tensor", name = "S", shape = [4]}], shared_bytes = 0 : i64, threads = [32, 1, 1]}], params = [], scratch = [{dtype = "float32", name = "S", shape = [4]}]}}
// CHECK: gpu.func @lone(
func.func @lone(%S: memref<4xf32> {tile.name = "S", tile.scratch}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    memref.store %one, %S[%c0] : memref<4xf32>
  }
  return
}

// -----

// A stream-K kernel (tile.stream_k) runs on one block per SM whatever its
// tile count; its scratch may be sized by the SM count, and flags the
// launcher must zero say so (zero_fill).
// CHECK: tile.kernels = {sk = {launches = [{grid = ["__sm_count__", "1", "1"], name = "sk", params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["N"]}, {access = "write", dtype = "float32", kind = "tensor", name = "streamk_partials0", shape = ["__sm_count__", 8192]}, {access = "readwrite", dtype = "int32", kind = "tensor", name = "streamk_flags", shape = ["__sm_count__"]}], shared_bytes = 0 : i64, threads = [128, 1, 1]}], params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["N"]}], scratch = [{dtype = "float32", name = "streamk_partials0", shape = ["__sm_count__", 8192]}, {dtype = "int32", name = "streamk_flags", shape = ["__sm_count__"], zero_fill = true}]}}
func.func @sk(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
              %P: memref<?x8192xf32> {tile.name = "streamk_partials0", tile.dims = ["__sm_count__", ""], tile.scratch},
              %F: memref<?xi32> {tile.name = "streamk_flags", tile.dims = ["__sm_count__"], tile.scratch, tile.zero_fill}) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c64) threads = 128 attributes {tile.persistent, tile.stream_k} {
    %x = memref.load %A[%c0] : memref<?xf32>
    memref.store %x, %P[%c0, %c0] : memref<?x8192xf32>
    tile.semaphore_signal %F[%c0] : memref<?xi32>
  }
  return
}

// -----

func.func @after_last(%A: memref<4xf32> {tile.name = "A"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  // expected-error @+1 {{'memref.load' op follows the last tile.kernel of its function, where nothing runs it}}
  %x = memref.load %A[%c0] : memref<4xf32>
  return
}

// -----

func.func @writes_between(%A: memref<4xf32> {tile.name = "A"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  // expected-error @+1 {{'memref.store' op is outside every tile.kernel but writes memory or has regions; only values the kernels read may be computed between them}}
  memref.store %one, %A[%c0] : memref<4xf32>
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  return
}

// -----

func.func @in_loop(%A: memref<4xf32> {tile.name = "A"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @+1 {{'tile.kernel' op must be directly in its function, outside any loop or condition}}
    tile.kernel blocks(%bx) in (%c1) threads = 32 {
    }
  }
  return
}

// -----

// expected-error @+1 {{scratch tensor 'S' dim 0 is the size 'K', which no tensor parameter has}}
func.func @unsized(%S: memref<?xf32> {tile.name = "S", tile.dims = ["K"], tile.scratch}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  return
}

// -----

func.func @scratch_first(%S: memref<4xf32> {tile.name = "S", tile.scratch},
                         // expected-error @+1 {{parameter 'A' follows a scratch tensor; scratch tensors (tile.scratch) must be the last arguments}}
                         %A: memref<4xf32> {tile.name = "A"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  return
}

// -----

func.func private @pair_k1()
func.func @pair(%A: memref<4xf32> {tile.name = "A"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  // expected-error @+1 {{'tile.kernel' op is launch 1 of 'pair', named 'pair_k1', but the module already has a symbol 'pair_k1'}}
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
  }
  return
}

// -----

func.func @returns_value() -> index {
  %c1 = arith.constant 1 : index
  // expected-error @-2 {{'func.func' op a tile program returns nothing; it writes its outputs into tensor arguments}}
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
  }
  return %c1 : index
}

// -----

// T.use_swizzle: the block indices are renumbered in panels of 4 rows,
// snaking column by column (row order).
// CHECK-LABEL: gpu.func @raster
// CHECK-DAG: %[[BX:.*]] = gpu.block_id x
// CHECK-DAG: %[[BY:.*]] = gpu.block_id y
// CHECK-DAG: %[[GX:.*]] = gpu.grid_dim x
// CHECK-DAG: %[[GY:.*]] = gpu.grid_dim y
// CHECK: %[[ID:.*]] = arith.addi %{{.*}}, %[[BX]] : index
// CHECK: %[[PANEL:.*]] = arith.muli %c4, %[[GX]] : index
// CHECK: arith.remui %[[ID]], %[[PANEL]]
// CHECK: arith.ceildivui
// CHECK: arith.select
// CHECK: %[[COL:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COL]]]
func.func @raster(%A: memref<64x64xf32>) {
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx, %by) in (%c8, %c8) threads = 32 attributes {tile.rasterization = {order = "row", panel_size = 4 : i64}} {
    memref.store %one, %A[%by, %bx] : memref<64x64xf32>
  }
  return
}

// -----

// Each distinct tile.tensor_map (tensor, box, swizzle) becomes one !llvm.ptr
// parameter after the ordinary ones, described in the metadata; the tensor
// it maps counts as read. A producer warpgroup adds its threads to the
// launch and to the kernel's known block size.
// CHECK: tile.kernels = {tma = {grid = ["1", "1", "1"], params = [{access = "read", dtype = "float16", kind = "tensor", name = "A", shape = ["M", 1024]}, {access = "write", dtype = "float32", kind = "tensor", name = "C", shape = [64, 64]}], shared_bytes = 0 : i64, tensor_maps = [{box = [64, 64], fill = "zero", param = "A", swizzle = 128 : i64}, {box = [128, 64], fill = "zero", param = "A", swizzle = 128 : i64}], threads = [256, 1, 1]}}
// CHECK: gpu.func @tma(%[[A:.*]]: memref<?x1024xf16>, %{{.*}}: memref<64x64xf32>, %[[M0:.*]]: !llvm.ptr, %[[M1:.*]]: !llvm.ptr) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.producer_threads = 128 : i64, tile.tensor_maps = 2 : i64}
// CHECK: llvm.ptrtoint %[[M0]]
// CHECK: llvm.ptrtoint %[[M0]]
// CHECK: llvm.ptrtoint %[[M1]]
// CHECK-NOT: tile.tensor_map
func.func @tma(%A: memref<?x1024xf16> {tile.name = "A", tile.dims = ["M"]},
               %C: memref<64x64xf32> {tile.name = "C"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.producer_threads = 128 : i64} {
    %m0 = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
    %m1 = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
    %m2 = tile.tensor_map %A {box = array<i64: 128, 64>, swizzle = 128} : memref<?x1024xf16> -> !llvm.ptr
    %i0 = llvm.ptrtoint %m0 : !llvm.ptr to i64
    %i1 = llvm.ptrtoint %m1 : !llvm.ptr to i64
    %i2 = llvm.ptrtoint %m2 : !llvm.ptr to i64
    %f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    %c0 = arith.constant 0 : index
    tile.copy %f[%c0, %c0] [64, 64] to %C[%c0, %c0] [64, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<64x64xf32>
  }
  return
}

// -----

// A persistent kernel (tile-pipeline-loops walks the tiles itself) launches
// at most one block per SM: its grid is min(tiles, __sm_count__), which the
// runtime evaluates with the device's multiprocessor count; T.use_swizzle's
// renumbering was applied per tile, not here.
// CHECK: tile.kernels = {walk = {grid = ["min(ceildiv(N, 256) * ceildiv(M, 128), __sm_count__)", "1", "1"]
// CHECK-NOT: arith.remui
func.func @walk(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "N"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %m = memref.dim %A, %c0 : memref<?x?xf16>
  %n = memref.dim %A, %c1 : memref<?x?xf16>
  %gx = arith.ceildivsi %n, %c256 : index
  %gy = arith.ceildivsi %m, %c128 : index
  tile.kernel blocks(%bx, %by) in (%gx, %gy) threads = 128 attributes {tile.persistent, tile.rasterization = {panel_size = 8 : i64}} {
    %f = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
  }
  return
}

// -----

// Vector loads read a tensor and vector stores write one (T.c2d_im2col's
// 16-byte runs), as element loads and stores do.
// CHECK: tile.kernels = {vectors = {grid = ["1", "1", "1"], params = [{access = "read", dtype = "float16", kind = "tensor", name = "X", shape = [64]}, {access = "write", dtype = "float16", kind = "tensor", name = "Y", shape = [64]}], shared_bytes = 0 : i64, threads = [8, 1, 1]}}
func.func @vectors(%X: memref<64xf16> {tile.name = "X"}, %Y: memref<64xf16> {tile.name = "Y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 8 {
    %v = vector.load %X[%c0] : memref<64xf16>, vector<8xf16>
    vector.store %v, %Y[%c0] : memref<64xf16>, vector<8xf16>
  }
  return
}

// -----

// A tensor stored with strides (T.StridedTensor): its params entry lists them,
// ints and the symbols named by tile.strides (a default name where none is).
// CHECK-LABEL: tile.kernels = {strided = {grid = ["1", "1", "1"], params = [{access = "read", dtype = "float32", kind = "tensor", name = "A", shape = ["M", "N"], strides = ["dM", 1]}, {access = "write", dtype = "float32", kind = "tensor", name = "B", shape = ["M", "N"], strides = [1, "B_stride1"]}], shared_bytes = 0 : i64, threads = [32, 1, 1]}}
// CHECK: gpu.func @strided(%{{.*}}: memref<?x?xf32, strided<[?, 1]>>, %{{.*}}: memref<?x?xf32, strided<[1, ?]>>)
func.func @strided(%A: memref<?x?xf32, strided<[?, 1]>> {tile.name = "A", tile.dims = ["M", "N"], tile.strides = ["dM", ""]},
                   %B: memref<?x?xf32, strided<[1, ?]>> {tile.name = "B", tile.dims = ["M", "N"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // Reading its strides is no access of its elements.
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %A : memref<?x?xf32, strided<[?, 1]>> -> memref<f32>, index, index, index, index, index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %v = memref.load %A[%strides#0, %c0] : memref<?x?xf32, strided<[?, 1]>>
    memref.store %v, %B[%c0, %c0] : memref<?x?xf32, strided<[1, ?]>>
  }
  return
}

// -----

// expected-error @+1 {{parameter 'A' must be a global tensor, row-major or with strides at offset 0, got 'memref<4xf32, strided<[1], offset: 2>>'}}
func.func @offset(%A: memref<4xf32, strided<[1], offset: 2>> {tile.name = "A"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %v = memref.load %A[%c0] : memref<4xf32, strided<[1], offset: 2>>
    memref.store %v, %A[%c0] : memref<4xf32, strided<[1], offset: 2>>
  }
  return
}

// -----

// T.sync_grid's kernel (tile.cooperative) is launched cooperatively.
// CHECK-LABEL: tile.kernels = {coop = {cooperative = true, grid = ["4", "1", "1"]
// CHECK-NOT: tile.cooperative
func.func @coop(%A: memref<4xf32> {tile.name = "A"}) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  tile.kernel blocks(%bx) in (%c4) threads = 32 attributes {tile.cooperative} {
    %v = memref.load %A[%c0] : memref<4xf32>
    memref.store %v, %A[%bx] : memref<4xf32>
  }
  return
}
