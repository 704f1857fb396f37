//===- Passes.td - tlc passes ------------------------------*- tablegen -*-===//

#ifndef TLC_PASSES_TD
#define TLC_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToGPU : Pass<"convert-tile-to-gpu", "ModuleOp"> {
  let summary = "Lower tile ops inside outlined kernels to per-thread code";
  let description = [{
    Rewrites the tile ops of every `gpu.func` made by `tile-outline-kernels`
    into code each thread runs: fragments become per-thread register arrays
    (`memref.alloca` with constant indices, which LLVM promotes to
    registers), shared buffers become views into the block's dynamic shared
    memory at the offsets `tile-allocate-shared-memory` assigned, copies
    become (masked) vector loads and stores by the layout of the fragment
    side or a coalesced default (cp.async for `async` copies; staged through
    shared memory where `tile.staging_offset` says so), `tile.parallel`
    becomes the thread's share of the iterations, unrolled (row vectors read
    by their row register), `tile.gemm` ldmatrix + mma.sync per warp,
    `tile.reduce` in-thread folds, xor shuffles and a shared-scratch exchange
    across warps, and `tile.pipelined` (when not pipelined) a plain `scf.for`.
    Barriers between ops come from `tile-insert-barriers`; the lowering adds
    only the one inside each of its own protocols (staging and reduction
    scratch: written, barrier, read). In a loop over a persistent kernel's
    tiles (`tile.tile_loop`) the thread index is read afresh at the top of
    the body, so per-thread addresses are not all hoisted before the loop
    and kept live across it. A `tile.ws` body becomes an `scf.if` on the
    thread index; its tile ops see its warpgroups as the block (the thread
    index counted from their first, their named barrier 1 + the first
    warpgroup's index).

    A gemm whose `#tile.mma` kind is `wgmma` becomes per warpgroup
    `wgmma.mma_async` m64nNk16 on shared-memory descriptors (128-byte
    swizzle; an N-major B read from its 64-column blocks) between
    `wgmma.fence` and a commit + `wgmma.wait_group depth`, and a
    `fence.proxy.async` precedes every barrier so that shared memory written
    by threads is visible to the tensor cores' reads.

    Before:

    ```mlir
    tile.copy %A[%i, %j] [32, 128] to %f[%c0, %c0] [32, 128] : ...
    ```

    After (one of each thread's eight 16-byte loads):

    ```mlir
    %ok = arith.andi %rowInside, %colInside : i1
    %v = scf.if %ok -> (vector<4xf32>) {
      %l = vector.load %A[%r, %c] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
      scf.yield %l : vector<4xf32>
    } else { ... }
    vector.store %v, %regs[%c0] : memref<32xf32>, vector<4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::gpu::GPUDialect", "::mlir::affine::AffineDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def TileAllocateSharedMemory : Pass<"tile-allocate-shared-memory", "ModuleOp"> {
  let summary = "Give every shared buffer a byte offset and check the budget";
  let description = [{
    Packs the `tile.alloc_shared` buffers of each kernel into one block of
    dynamic shared memory, each at a 128-byte aligned offset (1024 bytes for
    swizzled buffers, whose swizzle pattern repeats every 1024 bytes), and
    records the offsets and the kernel's total (`tile.shared_bytes`). It also
    reserves shared scratch for reductions across warps (pieces a `tile.ws`
    body uses keep their bytes for the whole kernel: its warpgroups run at
    their own pace)
    (`tile.scratch_offset`), and, where the budget has room, a staging buffer
    for copies of fragments holding short runs (mma accumulators) to global
    memory (`tile.staging_offset`), so those stores become 16-byte vectors.
    Reduction scratch gets bytes of its own for the whole kernel where the
    budget has room (then consecutive reductions need no barrier between
    them), else its lifetime like the rest. Other pieces whose lifetimes
    cannot overlap share bytes (first fit): a lifetime
    is the span of top-level ops, in the innermost block holding all of a
    piece's accesses, that contain them, so a buffer read for the last time
    before another is first written gives it its bytes, and the two branches
    of an `scf.if` (the roles of a warp-specialized kernel) never share;
    buffers accessed asynchronously (cp.async and TMA destinations, operands
    of wgmma groups left pending, mbarriers) or not at all keep their bytes
    for the whole kernel. `tile-insert-barriers` then orders the accesses to
    shared bytes like any others. A kernel whose pieces exceed the
    shared-memory limit of the module's `#tile.target` (232448 bytes on sm_90)
    is an error that gives both numbers and lists every buffer.

    Before:

    ```mlir
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    ```

    After:

    ```mlir
    tile.kernel blocks(%bx) in (%c1) threads = 128 attributes {tile.shared_bytes = 16384 : i64} {
      %a = tile.alloc_shared {offset = 0 : i64} : memref<128x32xf16, #gpu.address_space<workgroup>>
      %b = tile.alloc_shared {offset = 8192 : i64} : memref<32x128xf16, #gpu.address_space<workgroup>>
    }
    ```
  }];
}

def TileAssumeParamAlignment : Pass<"tile-assume-param-alignment"> {
  let summary = "Tell each kernel that its tensor parameters are 16-byte aligned";
  let description = [{
    The runtime launches a kernel only with tensor data pointers aligned to
    16 bytes (it refuses others, naming the parameter) and passes each memref
    descriptor's offset as 0. This pass states it: at the entry of every
    kernel `gpu.func`, each global memref parameter goes through
    `memref.assume_alignment 16` (an `llvm.assume` with an `align` bundle on
    its aligned pointer once lowered), and the body uses the result. LLVM's
    load/store vectorizer can then merge scalar accesses of neighbouring
    elements (the iterations of a `T.vectorized` loop, say) into one vector
    access: `ld.global.v4.b32` for eight fp16 elements instead of eight
    `ld.global.b16`. Run after `convert-tile-to-gpu` (the parameters' uses
    are final; the launch metadata was taken before).

    Before:

    ```mlir
    gpu.func @k(%A: memref<1024xf16>) kernel {
      %x = memref.load %A[%i] : memref<1024xf16>
    ```

    After:

    ```mlir
    gpu.func @k(%A: memref<1024xf16>) kernel {
      %a = memref.assume_alignment %A, 16 : memref<1024xf16>
      %x = memref.load %a[%i] : memref<1024xf16>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TileInferLayout : Pass<"tile-infer-layout", "ModuleOp"> {
  let summary = "Assign a layout to every fragment and parallel loop";
  let description = [{
    Gives every `tile.alloc_fragment` without a layout a blocked layout:
    each thread holds runs of contiguous elements along the last dimension,
    16 bytes wide where the tile allows (of the narrowest element type the
    fragment is copied to or from), and consecutive threads hold consecutive
    runs, so copies to and from global memory are coalesced 16-byte
    accesses. Gemm accumulators (and A operands in registers) take the
    tensor-core layouts of the gemm's `#tile.mma` (from `tile-select-mma`) first, reduction results the source's layout sliced.
    Each `tile.parallel` takes the layout of the first placed fragment its
    body indexes; a loop that touches no fragment gets a blocked layout of
    its own, in runs of 16 bytes a thread when it indexes only global
    tensors and shared buffers, each by its last index in the last place
    (`x + j`, x a known multiple of the run) or, for a value it reads, not
    at all, so that the lowering moves each run as one vector. A fragment placed otherwise gets a copy of its own in the loop's
    layout, converted in before the loop (when read) and out after it (when
    written) by fragment copies, which go through shared memory.

    Before:

    ```mlir
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    ```

    After (128 threads):

    ```mlir
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32,
        map = (d0, d1) -> ((d1 floordiv 4) * 4 + d0 floordiv 32, (d0 mod 32) * 4 + d1 mod 4)>}
        : memref<32x128xf32, #tile.space<fragment>>
    ```
  }];
}

def TileInsertBarriers : Pass<"tile-insert-barriers", "ModuleOp"> {
  let summary = "Place block barriers where shared-memory accesses conflict";
  let description = [{
    Computes, from the bytes of the kernel's shared memory each tile op reads
    and writes (buffer offsets from `tile-allocate-shared-memory`), where
    threads must meet: walking each kernel in program order, a `gpu.barrier`
    goes before an op that reads bytes written since the last barrier (RAW)
    or writes bytes read or written since then (WAR, WAW). Loops are walked
    until the state at their head stops growing, so an iteration that
    rewrites what the previous one read gets a barrier too; the two sides of
    an `scf.if` join by union. Ops whose lowering exchanges data through
    shared memory themselves (reductions across warps, staged or converting
    copies: write, barrier, read) count as writing those bytes where they
    meet earlier accesses, their own barrier orders everything before it,
    and they leave the bytes read; async copies are ordered by the wait and
    barrier of `tile-pipeline-loops`; existing barriers count. No barrier
    goes where no hazard is.

    In a `tile.ws` body each access is tagged with the body's warpgroups: a
    barrier placed there (lowered as their named barrier) orders only
    theirs; a body whose ops meet other threads' accesses no barrier ordered
    gets a block barrier before it; accesses of bodies of disjoint
    warpgroups in a kernel with mbarriers of its own
    (`tile.program_barriers`) are left to those.

    Proxies: shared bytes the threads wrote (stores, cp.async: the generic
    proxy) that a wgmma gemm then reads (the async proxy) need a
    `fence.proxy.async` between, run by the writers after their writes: it
    goes just before the last barrier between the writes and the gemm (the
    pipeliner's, or the one hoisted before a loop), once; where no one barrier
    is on every path there (or only the barrier inside a staged copy or a
    reduction), a fence and a barrier of their own go before the gemm. Bytes
    only TMA writes need none.

    Before:

    ```mlir
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : ...
    tile.gemm %s, %b, %c : ...
    ```

    After:

    ```mlir
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : ...
    gpu.barrier
    tile.gemm %s, %b, %c : ...
    ```

    With a wgmma gemm (`mma = #tile.mma<kind = wgmma, ...>`) reading `%s`:

    ```mlir
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : ...
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    gpu.barrier
    tile.gemm %s, %b, %c {mma = #tile.mma<kind = wgmma, ...>} : ...
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect"];
}

def TileLowerFp8Conversions : Pass<"tile-lower-fp8-conversions"> {
  let summary = "Lower conversions from and to fp8 to NVVM's paired cvt ops";
  let description = [{
    LLVM has no fp8 type, so `arith.extf` and `arith.truncf` involving
    `f8E4M3FN` or `f8E5M2` have no upstream lowering to NVVM. This pass
    rewrites them. On a target with the `fp8_convert` feature (sm_89 on):
    an extension puts the byte in a pair and converts it with
    `nvvm.convert.f8x2.to.f16x2`, then widens the f16; a truncation narrows
    to f32 and converts with `nvvm.convert.f32x2.to.f8x2` (round to nearest
    even, saturating to the largest finite value), taking the upper byte.
    Without it (sm_80, sm_86), the same conversions in integer arithmetic on
    the bits: the same rounding and saturation, subnormals and NaN kept.
    Other arithmetic on fp8 values is an error.

    Before:

    ```mlir
    %y = arith.extf %x : f8E4M3FN to f32
    ```

    After:

    ```mlir
    %b = arith.bitcast %x : f8E4M3FN to i8
    %p = vector.from_elements %b, %c0_i8 : vector<2xi8>
    %h = nvvm.convert.f8x2.to.f16x2 %p : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
    %e = vector.extract %h[0] : f16 from vector<2xf16>
    %y = arith.extf %e : f16 to f32
    ```
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileDivideWarpgroupRoles : Pass<"tile-divide-warpgroup-roles", "ModuleOp"> {
  let summary = "Give a FullCol row-block gemm too narrow to split to one warpgroup";
  let description = [{
    FlashMLA's division, derived from a program that splits every gemm of
    its two warpgroups by columns (`GemmWarpPolicy.FullCol`). In a kernel of
    256 threads whose one `tile.pipelined` loop (from 0, step 1) holds FullCol
    gemms of one m64 row block, some narrow (the scores: N < 128, so each
    warpgroup's half would be under 64 columns, m64n32 wgmmas that read the
    row block's A twice for half the work each) and one wide (the output:
    `P x B -> O`, N a multiple of 128 up to 512), where P is 16-bit and
    written in the loop by one copy of a fragment (into the shared tile the
    gemm reads, into the fragment it reads, or into a shared tile copied into
    that fragment: TileLang's `acc_s_cast`), the kernel is
    rewritten into three `tile.ws` bodies with mbarriers of its own
    (`tile.init_barriers`, waited and arrived as a program would):

    - warpgroup 2 loads each iteration's tiles (the loop's copies of global
      tiles into whole shared buffers) into rings of `num_stages` stages
      (`full` / `empty` barriers per stage);
    - warpgroup 0 runs the narrow gemms whole (m64nN), every op on the other
      fragments (the online softmax: row maxima, sums, the rescale factor),
      and the left half of the wide gemm with P from registers; before it
      overwrites P it waits for warpgroup 1 to be done with the last one
      (`p_free`), then publishes P (in the program's shared tile, or one the
      pass adds) and the row vectors the output's column loops read in
      shared memory (`p_ready`), and after the loop the row vectors read
      there (`l_ready`; the row role may write them again after the column
      role's last read, as TileLang's log-sum-exp does);
    - warpgroup 1 runs the right half of every op on the wide accumulator,
      reading the published row vectors, one iteration behind warpgroup 0.

    The wide gemm's B, and the A of each narrow gemm that reads it
    transposed (contracting over its columns), are cut into left and right
    column halves (separate buffers; each narrow gemm on them becomes two);
    the wide accumulator becomes two fragments; its copy out through a
    shared staging tile becomes each half's copy to the tensor. The kernel
    gets 384 threads, and setmaxnreg of 56 / 240 / 208 registers.

    Anything else stays as written (the FullCol split): other thread counts,
    loops or barriers of the program's own, thread indices, ops this pass
    does not follow, column loops reading other than row vectors of the
    other fragments, a row vector written after the column role reads it.
    sm_90a only (wgmma, setmaxnreg); runs before `tile-select-mma`.

    Before (inside `tile.kernel ... threads = 256`, abridged):

    ```mlir
    tile.pipelined %i = %c0 to %n step %c1 num_stages = 2 {
      tile.copy %cache[...] [1, 64, 512] to %kv[%c0, %c0] [64, 512] : ...
      tile.gemm %q, %kv, %s {policy = #tile.warp_policy<full_col>, transpose_b} : ...
      tile.reduce %s to %m {dim = 1 : i64, kind = #tile.reduce_kind<max>} : ...
      tile.parallel (%r, %j) in [64, 512] { ... %o[%r, %j] * %corr[%r] ... }
      tile.copy %s[%c0, %c0] [64, 64] to %p[%c0, %c0] [64, 64] : ...
      tile.gemm %p, %kv, %o {policy = #tile.warp_policy<full_col>} : ...
    }
    ```

    After (threads = 384):

    ```mlir
    tile.ws warpgroups = [2] {  // the loads, into %kv_l / %kv_r rings
    tile.ws warpgroups = [0] {
      scf.for %i = %c0 to %n step %c1 {
        tile.barrier_wait %full[%st], %round : ...
        tile.gemm %q_l, %kv_l_st, %s {transpose_b} : ...
        tile.gemm %q_r, %kv_r_st, %s {transpose_b} : ...
        ...  // the softmax; o_l *= corr
        tile.barrier_wait %p_free[%c0], %was : ...
        tile.copy %s ... to %p_local ...; tile.copy %p_local ... to %p ...
        tile.copy %corr ... to %corr_shared ...
        tile.barrier_arrive %p_ready[%c0] : ...
        tile.gemm %p_local, %kv_l_st, %o_l : ...
        tile.barrier_arrive %empty[%st] : ...
    tile.ws warpgroups = [1] {
      scf.for %i = %c0 to %n step %c1 {
        tile.barrier_wait %p_ready[%c0], %parity : ...
        tile.parallel (%r, %j) in [64, 256] { ... %o_r[%r, %j] * %corr_shared[%r] ... }
        tile.gemm %p, %kv_r_st, %o_r : ...
        tile.barrier_arrive %p_free[%c0] : ...
        tile.barrier_arrive %empty[%st] : ...
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileGridConstantParams : Pass<"tile-grid-constant-params"> {
  let summary = "Pass tensor maps as 128-byte __grid_constant__ kernel parameters";
  let description = [{
    A TMA copy reads its tensor map (CUtensorMap, 128 bytes) through a
    generic address; the map is best passed by value as a kernel parameter
    that the kernel only takes the address of (`__grid_constant__`), so a
    launch carries it and nothing is copied to global memory.
    `tile-outline-kernels` appends one `!llvm.ptr` parameter per map and
    counts them in the kernel's `tile.tensor_maps`; after the GPU-to-NVVM
    conversion this pass marks those last parameters of each `llvm.func`
    `llvm.byval = !llvm.array<128 x i8>`, `nvvm.grid_constant` and 128-byte
    aligned, which the NVPTX backend emits as `.param .align 128 .b8 p[128]`
    read through `cvta.param`.

    Before:

    ```mlir
    llvm.func @k(%a: !llvm.ptr, %map: !llvm.ptr) attributes {nvvm.kernel, tile.tensor_maps = 1 : i64}
    ```

    After:

    ```mlir
    llvm.func @k(%a: !llvm.ptr, %map: !llvm.ptr {llvm.align = 128 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}) attributes {nvvm.kernel}
    ```
  }];
}

def TileOutlineKernels : Pass<"tile-outline-kernels", "ModuleOp"> {
  let summary = "Turn each tile program into a GPU kernel and its launch metadata";
  let description = [{
    Moves every `func.func` holding a `tile.kernel` into a `gpu.module` as a
    `gpu.func` kernel with the same arguments, replacing block indices with
    `gpu.block_id` and recording the block size. The host side is not code
    but metadata, put on the top-level module as `tile.kernels` (a dictionary
    per kernel): the grid as expressions over the tensors' dynamic sizes
    (`"ceildiv(M, 128)"`), the thread count, the dynamic shared memory, and
    each parameter's name, dtype, shape (static sizes or size names) and
    whether the kernel reads or writes it. Grid sizes must be computed from
    constants, tensor sizes and `arith` integer ops; anything else is an
    error at the grid operand. A kernel's `tile.cluster_dims` becomes the
    function's `nvvm.cluster_dim` (PTX .reqnctapercluster) with `nvvm.maxnreg`
    of the launch's share, and `cluster_dims` in its metadata (sm_90a only).

    A function may hold several `tile.kernel`s, directly in its body, the
    last one ending it: they are launched in order, each outlined into its
    own `gpu.func` `<func>_k<i>` with the function's ops before it (which
    may only compute values: no writes, no regions). Arguments marked
    `tile.scratch` (global scratch tensors, T.alloc_global) follow the
    parameters; the launcher allocates them, sized by static sizes and the
    parameters' size names. Such a function's metadata has `launches` (one
    dictionary per kernel, in order, with its name), `params` (the
    parameters, with their access over all the kernels) and `scratch` (the
    name, dtype and shape of each scratch tensor).

    Before:

    ```mlir
    func.func @scale(%A: memref<?x128xf32> {tile.name = "A", tile.dims = ["M"]}) {
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %m = memref.dim %A, %c0 : memref<?x128xf32>
      %g = arith.ceildivui %m, %c32 : index
      tile.kernel blocks(%bx) in (%g) threads = 128 { ... }
      return
    }
    ```

    After:

    ```mlir
    module attributes {gpu.container_module, tile.kernels = {scale = {grid = ["ceildiv(M, 32)", "1", "1"], ...}}} {
      gpu.module @scale_kernel {
        gpu.func @scale(%A: memref<?x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
          %bx = gpu.block_id x
          ...
        }
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TilePipelineLoops : Pass<"tile-pipeline-loops", "ModuleOp"> {
  let summary = "Overlap a pipelined loop's global->shared copies with its compute";
  let description = [{
    Rewrites each `tile.pipelined` loop (num_stages = S >= 2) whose body
    begins with copies from global memory into shared buffers used only in
    the loop: the buffers get S stages (`tile.stage`), the copies become
    cp.async issued S-1 iterations ahead, with one commit group per
    iteration, a `cp.async.wait.group S-2` and one barrier at the top of each
    iteration. A copy's start may be read from a tensor nothing in the kernel
    writes (a paged cache's block table): an entry for an iteration ahead is
    read only when that iteration is inside the loop. Loops of any other
    shape are left unchanged (they run as plain loops, correct but not
    overlapped). A loop marked `copies_last` (the program's manual
    schedule) issues its copies ahead after the body's other ops instead,
    and its gemm does not prefetch.

    On sm_90a a loop of TMA-shaped copies feeding wgmma gemms is instead
    warp-specialized (a producer warpgroup issuing TMA loads,
    `tile.tma_load`, into the stages of a `tile.pipeline` it acquires, the
    program's threads as consumers waiting for and releasing them;
    `tile-insert-mbarriers` makes the mbarriers) and, with a 1-d or
    2-d grid and bounds independent of the block indices, persistent: each
    role walks the grid's tiles in an `scf.for` marked `tile.tile_loop`.
    A kernel launched in clusters (`tile.cluster_dims`) is not persistent;
    with clusters along one grid dimension (and no rasterization), a copy
    whose tile and the loop's bounds do not depend on the block index along
    it is marked `tile.cluster_mask` (every block of the cluster), as is the
    pipeline: it is the same tile in each block, loaded once by multicast.

    A persistent loop that only accumulates gemms into fp32 fragments
    zeroed before it (a GEMM's main loop) is stream-K (with `stream-k`, the
    default) where that pays: where a share plus an estimated 48 iterations
    of fix-up is at most a tile's K iterations (decided here on 132 SMs
    when the tile and iteration counts are constants, leaving out grids of
    one row or column of more than 132 / 8 tiles, which stream the other
    operand once; else by the kernel at each launch, which
    then also carries the plain persistent loop, an `scf.if` choosing one
    per launch). The kernel runs on one block per SM; after the full waves
    of tiles, the remaining tiles' K iterations are shared evenly by the
    blocks (at least 8 each; cut into equal shares per tile, the same K
    iterations in every tile, where that costs at most 1/8 more per share),
    a block whose share starts inside a tile
    storing its partial sums of it (`tile.store_partials`) and raising a
    flag (`tile.semaphore_signal`), the block with the tile's first
    iterations waiting for the flags of the blocks after it
    (`tile.semaphore_wait`), adding their partials in block order
    (`tile.add_partials`) and running the epilogue. With equal per-tile
    shares, a tile's blocks instead reduce-scatter: each stores its
    partials and raises its flag, waits for all of the tile's flags at once
    (`tile.semaphore_wait ... count`), sums one slice of every block's
    partials in block order (`tile.reduce_partials`) and raises its flag to
    level 2; the owner waits for those and gathers the slices
    (`tile.add_partials ... count`) before its epilogue: each block reads
    one tile's worth of partials, not the owner all of them. The scratch (one
    `[SMs, tile elements]` tensor per accumulator, the int32 flags zeroed by
    the launcher) is appended to the function's arguments (`tile.scratch`).

    Before:

    ```mlir
    tile.pipelined %k = %c0 to %n step %c1 num_stages = 3 {
      tile.copy %A[%i, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : ...
      tile.gemm %a, %b, %c : ...
    }
    ```

    After:

    ```mlir
    %a3 = tile.alloc_shared : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    scf.if %first { tile.copy %A[...] to %stage0[...] {async} }  nvvm.cp.async.commit.group
    scf.if %second { ... }                                         nvvm.cp.async.commit.group
    scf.for %k = %c0 to %n step %c1 {
      nvvm.cp.async.wait.group 1
      gpu.barrier
      scf.if %ahead { tile.copy ... {async} }  nvvm.cp.async.commit.group
      %s = tile.stage %a3[%k mod 3] ...
      tile.gemm %s, ...
    } {tile.num_stages = 3 : i64}
    nvvm.cp.async.wait.group 0
    ```
  }];
  let options = [
    Option<"streamK", "stream-k", "bool", "true",
           "Share the K iterations of the last wave's tiles of a persistent GEMM "
           "between all blocks (stream-K)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect"];
}

def TileInsertMbarriers : Pass<"tile-insert-mbarriers", "ModuleOp"> {
  let summary = "Give each warp-specialized pipeline its full and empty mbarriers";
  let description = [{
    Lowers each `tile.pipeline` (the stages of a warp-specialized loop, as
    `tile-pipeline-loops` records them) to two mbarriers per stage: `full`
    (one arrival and the stage's TMA bytes) and `empty` (one arrival per
    consumer warp), initialised by thread 0 where the pipeline is, the block
    meeting after. Iteration `k` uses stage `k mod S` in round `k / S`:
    `tile.producer_acquire` waits on the stage's empty barrier for the
    flipped parity of its round (the first round passes at once) and expects
    the bytes of the `tile.tma_load`s after it on the full barrier; each load
    becomes one `cp.async.bulk.tensor` per column block completing on it;
    `tile.consumer_wait` waits on the full barrier for the round's parity;
    `tile.consumer_release` is lane 0 of each warp arriving on the empty one.
    A pipeline marked `tile.cluster_mask` (multicast, from
    `tile-pipeline-loops`): each empty barrier counts the consumer warps of
    every block of the mask, a release arrives at each of them (`nvvm.mapa`,
    cluster scope), a marked load is issued by the mask's lowest block into
    all of them, and the block barrier after the init is the cluster's.

    The program's own mbarriers (T.alloc_barrier) are lowered here too:
    `tile.init_barriers` to thread 0's init of each (and, on sm_90, the init
    fence) and a block barrier (a cluster barrier in a kernel launched in
    clusters), `tile.barrier_wait` to a try_wait.parity loop
    (sm_80: test_wait), `tile.barrier_arrive` to a fence.proxy.async (sm_90)
    and an arrive; the kernel is marked `tile.program_barriers`. On sm_90a
    the copies of whole global tiles a `tile.ws` body makes just before an
    arrival, into buffers only other warpgroups' bodies use, become TMA
    loads completing on that barrier (the body's first thread expects their
    bytes and issues them), and so do T.tma_copy's copies just before an
    arrival the kernel's own code makes in every thread (outside any branch;
    the block's first thread issues them; with `tile.cluster_mask`, the
    mask's lowest block issues one multicast load into every block of it,
    each expecting the bytes); a `tile.tma_required` copy (T.tma_copy) that
    cannot be one is an error, as is an `nvvm.setmaxregister`
    (T.set_max_nreg) outside a body or on a target without setmaxnreg.

    The protocol is checked, an error rather than a hang: before lowering, a
    load with no acquire of its iteration before it in its block, an acquire
    no load fills, waits on a pipeline nothing loads, a producer whose stages
    no consumer releases, releases with no waits, and the arrivals a phase
    gets (the threads the `scf.if` conditions on the thread index around
    each op let through: exactly one per acquire, `consumers` threads with
    one leader per consumer warp per release, one acquire and one release of
    a pipeline per block); after it, in every kernel,
    each `mbarrier.arrive.expect_tx` against the bytes of the TMA loads that
    complete on its barrier after it, each wait against an init with a
    positive count and an arrival.

    Before:

    ```mlir
    %pipe = tile.pipeline stages = 2, consumers = 128 : !tile.pipeline
    ...
    tile.producer_acquire %pipe[%k] : !tile.pipeline
    tile.tma_load %map[%row, %col] to %stage, %pipe[%k] : memref<64x64xf16, ...>, !tile.pipeline
    ...
    tile.consumer_wait %pipe[%k] : !tile.pipeline
    tile.gemm ...
    tile.consumer_release %pipe[%k] : !tile.pipeline
    ```

    After:

    ```mlir
    %full = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    %empty = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    scf.if %thread0 { nvvm.mbarrier.init ... nvvm.fence.mbarrier.init }
    nvvm.barrier
    ...
    nvvm.mbarrier.try_wait.parity %empty_s, %free_parity, %ticks
    nvvm.mbarrier.arrive.expect_tx %full_s, %c8192_i32
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %map, %full_s, box[%col, %row]
    ...
    nvvm.mbarrier.try_wait.parity %full_s, %parity, %ticks
    tile.gemm ...
    scf.if %lane0 { nvvm.mbarrier.arrive %empty_s }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def TileSelectMma : Pass<"tile-select-mma", "ModuleOp"> {
  let summary = "Choose each gemm's tensor-core instruction and warp partition";
  let description = [{
    Decides once, from the module's `#tile.target`, the gemm's shapes, element
    types, operand places, warp policy and the kernel's thread count, how each
    `tile.gemm` runs, and records it as its `mma` attribute (`#tile.mma`);
    layout inference and the lowering read it. On a target with `wgmma`, a
    gemm runs on wgmma when A and B are in shared memory (or A, 16-bit, in
    registers), A stored M x K with K rows of whole 128-byte atoms (or, 16-bit,
    of one 64- or 32-byte atom), B stored N x K, or K x N with N a multiple
    of 64 (its buffer then kept as 64-column blocks, `column_block = 64` in
    its `#tile.shared` layout), 16-bit or fp8 inputs with an f32
    accumulator, and the m64 row blocks spread evenly: each row block gets
    the same number of warpgroups, which split N between them (each a
    multiple of 8 columns up to 256, of 64 with an N-major B; no split under
    the FullRow policy), or, with more row blocks than warpgroups, each
    warpgroup takes the same number of consecutive row blocks; every other
    gemm runs on mma.sync m16n8k16 with the warps split by its policy. A
    gemm's `wg_wait` becomes the wgmma depth when the loop allows it (else
    an error at the gemm saying why), as is a positive `wg_wait` on a gemm
    that runs on mma.sync. A gemm with `wg_wait = -1` is completed by a
    later `tile.wait_wgmma`, which gets the accumulators it completes as
    operands; nothing may touch those or write the gemm's operands before it
    (an error naming both). In a loop's body the wait may be in the next
    iteration (then also after the loop; under an `if` on the iteration not
    being the first, as a K loop writes it): the body is checked again with
    the gemms its end leaves running, and a `tile.pipelined` loop records
    their groups (`tile.carried_wgmma`) so that tile-pipeline-loops keeps
    their stages that much longer (at most `num_stages - 2`).

    Before (sm_90a, 256 threads):

    ```mlir
    tile.gemm %a, %b, %c {transpose_b} : memref<128x64xf16, #gpu.address_space<workgroup>>,
        memref<128x64xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #tile.space<fragment>>
    ```

    After:

    ```mlir
    tile.gemm %a, %b, %c {mma = #tile.mma<kind = wgmma, m = 64, n = 128, k = 16,
        warps_m = 8, warps_n = 1, a = shared, depth = 0>, transpose_b} : ...
    ```
  }];
}

def TileSelectTmaStores : Pass<"tile-select-tma-stores", "ModuleOp"> {
  let summary = "Store shared tiles to global tensors through TMA";
  let description = [{
    On a target with TMA (`#tile.target` feature `tma`), rewrites each
    `tile.copy` of a whole 2-d shared tile to a global tensor parameter inside
    a loop of the kernel into a `tile.tma_store`: the epilogue a program
    stages through shared memory (`T.copy(C_local, C_shared); T.copy(C_shared,
    C[by * 128, bx * 256])`), in a persistent kernel's loop over its tiles,
    leaves the block through one bulk tensor store instead of every thread's
    loads and stores, and the block goes on with its next tile. A whole
    fragment copied straight to the tensor (`T.copy(C_local, C[...])`) is
    first copied into a shared tile of the tensor's element type that the
    pass adds, when the kernel's shared buffers (counted without any reuse)
    leave room for it; then stored the same way. A store that
    ends the kernel stays the threads': the block would wait for the TMA
    unit's read of the tile before it exits (measured slower on the H200). The tile gets TMA's 128-byte swizzle as its
    `#tile.shared` layout (column blocks of 128 bytes, `#tile.swizzle<bits =
    3, base = 4, shift = 3>`), and a `tile.tensor_map` of the tensor (box: one
    column block) goes to the top of the kernel. A copy stays as it is when
    the tile is staged, has fewer than 8 or more than 256 rows, rows that are
    not whole 128-byte blocks, a layout set for another use that is not
    TMA's, a predicate or `disable_tma`; when the tensor TMA cannot map
    (strides not multiples of 16 bytes), the element types differ, or the
    kernel touches the tensor anywhere else (the store lands after the op
    returns), other than by the same store in another branch (a stream-K
    kernel's pieces and its plain loop), which shares the tile and tensor
    map. Runs after `tile-pipeline-loops` and before
    `tile-swizzle-shared-memory`; `tile-insert-barriers` orders the store.

    Before:

    ```mlir
    %s = tile.alloc_shared : memref<128x256xf16, #gpu.address_space<workgroup>>
    scf.for %t = %bx to %tiles step %blocks {
      ...
      tile.copy %s[%c0, %c0] [128, 256] to %C[%i, %j] [128, 256]
          : memref<128x256xf16, #gpu.address_space<workgroup>> to memref<4096x4096xf16>
    }
    ```

    After:

    ```mlir
    %map = tile.tensor_map %C {box = array<i64: 128, 64>, swizzle = 128 : i64}
        : memref<4096x4096xf16> -> !llvm.ptr
    %s = tile.alloc_shared {layout = #tile.shared<column_block = 64,
           swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>}
        : memref<128x256xf16, #gpu.address_space<workgroup>>
    scf.for %t = %bx to %tiles step %blocks {
      ...
      tile.tma_store %s to %map[%i, %j] : memref<128x256xf16, #gpu.address_space<workgroup>>
    }
    ```
  }];
}

def TileSetTarget : Pass<"tile-set-target", "ModuleOp"> {
  let summary = "Put a #tile.target on the module";
  let description = [{
    Sets the module's `tile.target` to the known architecture `arch`, with
    that architecture's features and limits. A module that already names
    another target is an error (a file written for sm_80 is not silently
    compiled for sm_90a). `tlc-opt --tile-target=ARCH` runs this pass first.

    Before: `module {}`; after (`arch=sm_90a`):

    ```mlir
    module attributes {tile.target = #tile.target<"sm_90a">} {}
    ```
  }];
  let dependentDialects = ["::mlir::tile::TileDialect"];
  let options = [
    Option<"arch", "arch", "std::string", "\"\"",
           "The architecture (sm_80, sm_86, sm_89, sm_90, sm_90a)">
  ];
}

def TileSwizzleSharedMemory : Pass<"tile-swizzle-shared-memory", "ModuleOp"> {
  let summary = "XOR-swizzle the shared buffers that gemms read with ldmatrix";
  let description = [{
    Gives every shared buffer used as a `tile.gemm` operand, and not already
    swizzled, the swizzle that makes ldmatrix (8 rows, one 16-byte chunk
    each) and the 16-byte copies filling it bank-conflict free: rows of
    128 * 2^s bytes get `#tile.swizzle<bits = 3, base = 4, shift = 3 + s>`,
    64-byte rows `bits = 2`, 32-byte rows `bits = 1` (`shift = 3`). A buffer
    stored as 64-column blocks (`column_block` in its `#tile.shared` layout, an N-major wgmma
    operand) has 128-byte rows within each block: `bits = 3, shift = 3`,
    the 128-byte swizzle wgmma's descriptors name. A shared tile that a
    fragment is copied into (an epilogue staged through shared memory) gets
    the swizzle of its row length too: a warp's stores cover 8 rows at once.

    Before:

    ```mlir
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c : ...
    ```

    After:

    ```mlir
    %a = tile.alloc_shared {swizzle = #tile.swizzle<bits = 2, base = 4, shift = 3>}
        : memref<128x32xf16, #gpu.address_space<workgroup>>
    ```
  }];
}

#endif // TLC_PASSES_TD
