//===- TileOps.td - tile dialect operations ----------------*- tablegen -*-===//

#ifndef TILE_OPS_TD
#define TILE_OPS_TD

include "dialects/tile/TileDialect.td"
include "dialects/tile/TileAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

def Tile_KernelOp : Tile_Op<"kernel", [
    NoTerminator, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "A grid of thread blocks running the region once per block";
  let description = [{
    Launches a grid of 1 to 3 dimensions (`grid` sizes are `index` values,
    constant or computed from tensor sizes) of blocks of `threads` threads.
    The region runs once per block; its arguments are the block's indices,
    one per grid dimension. `threads` is the number of threads per block
    (1 to 1024). Values defined above the kernel (tensor arguments, sizes,
    constants) may be used inside it.

    Example:

    ```mlir
    func.func @scale(%A: memref<1024x1024xf32>) {
      %c8 = arith.constant 8 : index
      tile.kernel blocks(%bx, %by) in (%c8, %c8) threads = 128 {
        %f = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
      }
      return
    }
    ```
  }];
  let arguments = (ins Variadic<Index>:$grid, I64Attr:$threads);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The block-index arguments of the body, one per grid dimension.
    ::mlir::Block::BlockArgListType getBlockIndices() {
      return getBody().front().getArguments();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def Tile_AllocSharedOp : Tile_Op<"alloc_shared", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "Allocate a tile in shared memory";
  let description = [{
    A buffer in the block's shared memory (`#gpu.address_space<workgroup>`),
    statically shaped. The optional `layout` (`#tile.shared`) says where each
    element sits: pipeline stages, wgmma's column blocks and the XOR swizzle
    of the byte offsets; without it the buffer is row-major. `offset` is the
    byte offset in the block's shared memory, assigned by
    `tile-allocate-shared-memory`.

    Example:

    ```mlir
    %s = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %t = tile.alloc_shared {layout = #tile.shared<swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>}
        : memref<64x64xf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins OptionalAttr<Tile_SharedLayoutAttr>:$layout,
                       OptionalAttr<I64Attr>:$offset);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_AllocFragmentOp : Tile_Op<"alloc_fragment", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "Allocate a tile in registers, spread over the block's threads";
  let description = [{
    A register tile (`#tile.space<fragment>`). The `layout` attribute says
    which thread and register hold each element; `tile-infer-layout` assigns
    it when the program does not. The verifier checks that a given layout
    covers the shape exactly and that its thread count is the kernel's.

    Example:

    ```mlir
    %f = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 32,
           map = (d0, d1) -> ((d1 floordiv 4) * 4 + d0 floordiv 32, (d0 mod 32) * 4 + d1 mod 4)>}
        : memref<32x128xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins OptionalAttr<Tile_LayoutAttr>:$layout);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_AllocLocalOp : Tile_Op<"alloc_local", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "Allocate a small per-thread array";
  let description = [{
    Every thread holds its own copy of the whole buffer
    (`#tile.space<local>`), typically in registers.

    Example:

    ```mlir
    %acc = tile.alloc_local : memref<4xf32, #tile.space<local>>
    ```
  }];
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_StageOp : Tile_Op<"stage", [Pure]> {
  let summary = "One stage of a multi-buffered shared allocation";
  let description = [{
    `tile-pipeline-loops` gives a shared buffer that a pipelined loop fills
    one leading dimension of stages, `memref<S x M x K>`, and says so in its
    layout (`#tile.shared<stages = S>`, checked here); `tile.stage %buf[%s]`
    names stage `%s` (taken modulo nothing: 0 <= %s < S) as an M x K buffer
    that the loop's tile ops read and write like the original.

    Example:

    ```mlir
    %c1 = arith.constant 1 : index
    %all = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x64x32xf16, #gpu.address_space<workgroup>>
    %one = tile.stage %all[%c1] : memref<3x64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source, Index:$index);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

def Tile_TransposeOp : Tile_Op<"transpose"> {
  let summary = "Transpose a shared tile of bytes into another shared tile";
  let description = [{
    `dst[j, i] = src[i, j]` for two whole 2-d shared buffers of one 8-bit
    element type, the source's rows a multiple of 128 and its columns whole
    128-byte blocks and at most one of 64 or 32 bytes. The frontend emits it
    for an fp8 gemm operand stored other than K-major (an N-major B, an
    M-major A): wgmma reads fp8 operands K-major only. The threads running
    it move 4 x 4 blocks of bytes: four 4-byte loads, a byte permutation in
    registers, four 4-byte stores; within a warp the 32 blocks of one
    instruction are (g ^ a, g) for lane g and a step a of the warp, so that
    in tiles of 128-byte rows under the 128-byte swizzle, on both sides,
    no two lanes touch the same bank (tile-insert-barriers orders it
    against the buffers' other accesses).

    Example:

    ```mlir
    %b = tile.alloc_shared : memref<128x256xf8E4M3FN, #gpu.address_space<workgroup>>
    %bt = tile.alloc_shared : memref<256x128xf8E4M3FN, #gpu.address_space<workgroup>>
    tile.transpose %b to %bt : memref<128x256xf8E4M3FN, #gpu.address_space<workgroup>> to memref<256x128xf8E4M3FN, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$src, AnyStaticShapeMemRef:$dst);
  let assemblyFormat = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)";
  let hasVerifier = 1;
}

def Tile_ViewOp : Tile_Op<"view", [Pure]> {
  let summary = "Another shape for a whole fragment, or shape or element type for a shared buffer";
  let description = [{
    `T.reshape(buf, shape)` and `T.view(buf, shape, dtype)` of a fragment or
    a shared buffer.

    A fragment's view holds the same registers, indexed row-major with the
    result's shape (as many elements, the same element type): each register
    holds the element at the same row-major position in both. Its layout is
    the allocation's seen through the reshape (tile-infer-layout places the
    allocation, whichever name a loop or reduction reaches it by), and it
    lowers to the allocation's registers. The source is a
    `tile.alloc_fragment` (not a reducer's partials) or a view of one.

    A shared buffer's view: the same bytes (the allocation's elements in
    row-major order), addressed row-major with the result's shape and
    element type (both may change; the byte size may not), each byte where
    the allocation's `#tile.shared` layout puts it: a gemm operand's swizzle
    and column blocks apply to both names (a view's element must lie in bytes
    the layout keeps together: an error of the conversion otherwise). Writes
    through either name are seen through the other: tile-insert-barriers
    orders accesses by the bytes they touch, and tile-allocate-shared-memory
    counts a view's accesses as its allocation's. The source is a
    `tile.alloc_shared` or a view of one. A viewed allocation has no stages
    (a pipelined copy into it stays synchronous).

    Example:

    ```mlir
    %s = tile.alloc_shared : memref<64x128xf16, #gpu.address_space<workgroup>>
    %flat = tile.view %s : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<8192xf16, #gpu.address_space<workgroup>>
    %words = tile.view %s : memref<64x128xf16, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
    %f = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %heads = tile.view %f : memref<64x128xf32, #tile.space<fragment>> to memref<64x4x32xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Addresses for the asynchronous machinery (TMA, mbarriers)
//===----------------------------------------------------------------------===//

def Tile_LLVMPointer : Type<CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
                            "LLVM pointer", "::mlir::LLVM::LLVMPointerType">;

def Tile_GenericPointer : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self) && "
          "::llvm::cast<::mlir::LLVM::LLVMPointerType>($_self).getAddressSpace() == 0">,
    "generic LLVM pointer", "::mlir::LLVM::LLVMPointerType"> {
  let builderCall = "::mlir::LLVM::LLVMPointerType::get($_builder.getContext())";
}

def Tile_TensorMapOp : Tile_Op<"tensor_map", [Pure]> {
  let summary = "The TMA descriptor of a global tensor argument";
  let description = [{
    Names the tensor map (CUtensorMap) through which `cp.async.bulk.tensor`
    reads boxes of `box` elements (outermost dimension first) of the global
    tensor `src`, a kernel argument, with the shared-memory swizzle of
    `swizzle` bytes (0, 32, 64 or 128); elements outside the tensor read as
    zero. The result is the generic address of the descriptor.

    `tile-pipeline-loops` creates these for the copies it turns into TMA
    loads. `tile-outline-kernels` makes each one a 128-byte
    `__grid_constant__` kernel parameter after the ordinary ones and
    describes it in the launch metadata (`tensor_maps`); the runtime encodes
    the descriptor from the argument's pointer, sizes and strides at launch.
    Every stride must be a multiple of 16 bytes (TMA's rule): the sizes
    inside the outermost dynamic one must be static, with strides that are
    multiples of 16 bytes up to it (a dynamic sequence length in
    [batch, seq, heads, dim] is fine); the innermost box extent must fit the
    swizzle span.

    Example:

    ```mlir
    func.func @maps(%A: memref<?x4096xf16>) {
      %map = tile.tensor_map %A {box = array<i64: 128, 64>, swizzle = 128}
          : memref<?x4096xf16> -> !llvm.ptr
      return
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$src, DenseI64ArrayAttr:$box, I64Attr:$swizzle);
  let results = (outs Tile_LLVMPointer:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_MakeTensorOp : Tile_Op<"make_tensor", [Pure]> {
  let summary = "A global tensor at an address the kernel computes (a pointer table's entry)";
  let description = [{
    `T.make_tensor(ptr, shape, dtype)`: the row-major, contiguous global
    tensor of the result's shape and element type whose first element is at
    the 64-bit address `address`, a value the kernel reads at run time (an
    entry of a `T.Tensor([G], T.ptr)` pointer table, or a `T.ptr`
    parameter). `sizes` gives the result's dynamic dimensions, in order.
    The address must be 16-byte aligned (the kernel's vector accesses and
    cp.async assume it, as for tensor parameters). The tensor is addressed
    like a tensor parameter (element accesses, T.copy regions, atomics),
    except by TMA, whose tensor maps the host encodes from parameters.
    `convert-tile-to-gpu` builds its memref descriptor from the address.

    Example:

    ```mlir
    func.func @table(%ptrs: memref<4xi64>, %m: index) {
      %c1 = arith.constant 1 : index
      %a = memref.load %ptrs[%c1] : memref<4xi64>
      %t = tile.make_tensor %a(%m) : memref<?x64xf16>
      return
    }
    ```
  }];
  let arguments = (ins I64:$address, Variadic<Index>:$sizes);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = "$address `(` $sizes `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SharedPtrOp : Tile_Op<"shared_ptr", [Pure]> {
  let summary = "The shared-memory address of an element of a shared buffer";
  let description = [{
    The address (in the shared address space) of element `indices` of the
    shared buffer `buffer` (an allocation or one stage of one), after
    `tile-allocate-shared-memory` has placed it and with the buffer's swizzle
    and column blocks applied: what a TMA copy writes to, where an mbarrier
    lives. `tile-insert-mbarriers` uses it for the stage a TMA load fills
    and for the mbarriers of each stage; `convert-tile-to-gpu` computes it.

    Example:

    ```mlir
    %bars = tile.alloc_shared : memref<4xi64, #gpu.address_space<workgroup>>
    %c1 = arith.constant 1 : index
    %p = tile.shared_ptr %bars[%c1] : memref<4xi64, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$buffer, Variadic<Index>:$indices);
  let results = (outs Tile_LLVMPointer:$result);
  let assemblyFormat = "$buffer `[` $indices `]` attr-dict `:` type($buffer) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_TmaStoreOp : Tile_Op<"tma_store"> {
  let summary = "Store a shared tile to a global tensor through TMA (bulk tensor store)";
  let description = [{
    Writes the whole 2-d shared buffer `src` (an `R x C` tile) into the
    global tensor `map` describes (a `tile.tensor_map`, after outlining its
    kernel parameter), at element `coordinates` (one per tensor dimension,
    outermost first): `cp.async.bulk.tensor` from shared to global, issued by
    one thread and committed as one bulk async group. The map's box is one
    `R x B` column block of the tile (its outer extents multiply to `R`, the
    innermost is `B`: the buffer's `column_block`, else `C`); the tile is
    `C / B` boxes side by side along the innermost dimension. Elements the
    box puts outside the tensor are not written (the hardware clips them).
    The buffer's swizzle must be the map's: 128-byte boxes with
    `#tile.swizzle<bits = 3, base = 4, shift = 3>`, or whole rows of 64 or
    32 bytes with `bits = 2` or `1` (the map's swizzle = the row's bytes).

    With `add` (T.atomic_add(..., use_tma=True)), the tile is added into
    the tensor instead (`cp.reduce.async.bulk.tensor ... .add`: each
    element's add is atomic, as other blocks' adds into the same elements
    may run at once); the tile's dtype is then f32, f16, bf16 or i32.

    The store reads `src` through the async proxy and after the op returns:
    `tile-insert-barriers` puts a `fence.proxy.async` and a barrier between
    the threads' writes of `src` and the store, and a
    `cp.async.bulk.wait_group.read` (and a barrier) before anything writes
    those bytes again and before the kernel ends. `tile-select-tma-stores`
    makes these from `tile.copy`s of a shared tile to a global tensor on
    targets with TMA.

    Example:

    ```mlir
    func.func @store(%C: memref<4096x4096xf16>, %i: index, %j: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %s = tile.alloc_shared {layout = #tile.shared<column_block = 64,
               swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>}
            : memref<128x256xf16, #gpu.address_space<workgroup>>
        %map = tile.tensor_map %C {box = array<i64: 128, 64>, swizzle = 128}
            : memref<4096x4096xf16> -> !llvm.ptr
        tile.tma_store %s to %map[%i, %j] : memref<128x256xf16, #gpu.address_space<workgroup>>
        // the same tile added into C (a split-K partial)
        tile.tma_store %s to %map[%i, %j] add : memref<128x256xf16, #gpu.address_space<workgroup>>
      }
      return
    }
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$src, Tile_GenericPointer:$map,
                       Variadic<Index>:$coordinates, UnitAttr:$add);
  let assemblyFormat =
      "$src `to` $map `[` $coordinates `]` (`add` $add^)? attr-dict `:` type($src)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Columns of one box: the buffer's column block, else all its columns.
    int64_t getBoxColumns();
  }];
}

//===----------------------------------------------------------------------===//
// Pipelines of a warp-specialized loop (before tile-insert-mbarriers)
//===----------------------------------------------------------------------===//

def Tile_PipelineType : TypeDef<Tile_Dialect, "Pipeline"> {
  let mnemonic = "pipeline";
  let summary = "A ring of shared-memory stages a producer fills and consumers drain";
  let description = [{
    The handle of a `tile.pipeline`: its stages, the TMA loads that fill
    them and the waits and releases of the threads that read them.
    `tile-insert-mbarriers` turns each into a full and an empty mbarrier per
    stage.
  }];
}

def Tile_PipelineOp : Tile_Op<"pipeline"> {
  let summary = "A producer/consumer pipeline of `stages` shared-memory stages";
  let description = [{
    The synchronization of a warp-specialized loop, as `tile-pipeline-loops`
    decides it and before any mbarrier exists: a ring of `stages` stages,
    iteration `k` of the loop using stage `k mod stages` in round
    `k / stages`. A producer thread acquires a stage
    (`tile.producer_acquire`), fills it with TMA loads (`tile.tma_load`); the
    `consumers` threads wait for it (`tile.consumer_wait`), read it and
    release it (`tile.consumer_release`, every consumer thread, so once per
    consumer warp), after which the producer may refill it for round
    `k / stages + 1`.

    `tile-insert-mbarriers` gives each stage a full mbarrier (one arrival
    and the stage's TMA bytes) and an empty one (one arrival per consumer
    warp), initialised by thread 0 where this op is, the whole block meeting
    after; it must be directly in a `tile.kernel`, where every thread runs
    it.

    Example:

    ```mlir
    %pipe = tile.pipeline stages = 3, consumers = 256 : !tile.pipeline
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$stages,
                       ConfinedAttr<I64Attr, [IntMinValue<32>]>:$consumers);
  let results = (outs Tile_PipelineType:$pipeline);
  let assemblyFormat = "`stages` `=` $stages `,` `consumers` `=` $consumers attr-dict `:` qualified(type($pipeline))";
  let hasVerifier = 1;
}

def Tile_ProducerAcquireOp : Tile_Op<"producer_acquire"> {
  let summary = "The producer waits until iteration k's stage is free";
  let description = [{
    The thread running it waits until every consumer released stage
    `k mod S` of `pipeline` in the round before (`k / S - 1`; the first
    round's stages are free at once). The `tile.tma_load`s of iteration `k`
    that follow it in its block fill the stage; `tile-insert-mbarriers`
    expects their bytes on the stage's full mbarrier here.

    Example:

    ```mlir
    %k = arith.constant 5 : index
    %pipe = tile.pipeline stages = 3, consumers = 128 : !tile.pipeline
    tile.producer_acquire %pipe[%k] : !tile.pipeline
    ```
  }];
  let arguments = (ins Tile_PipelineType:$pipeline, Index:$iteration);
  let assemblyFormat = "$pipeline `[` $iteration `]` attr-dict `:` qualified(type($pipeline))";
}

def Tile_TmaLoadOp : Tile_Op<"tma_load"> {
  let summary = "Load a global box into one stage of a pipeline through TMA";
  let description = [{
    Fills the whole 2-d shared buffer `dst` (an `R x C` stage, a
    `tile.stage` of a staged allocation) from the global tensor `map`
    describes, at element `coordinates` (one per tensor dimension, outermost
    first): `C / B` boxes side by side along the innermost dimension, `B`
    the buffer's `column_block` (else `C`), completing on iteration `k`'s
    stage of `pipeline`. Boxes that overhang the tensor read zeros. It must
    follow a `tile.producer_acquire` of the same iteration in its block.
    The boxes' rows and swizzle are tile.tma_store's: 128-byte rows with the
    128-byte swizzle, or whole rows of 64 / 32 bytes (K tiles of 32 / 16
    16-bit elements) with the 64- / 32-byte one.

    Example:

    ```mlir
    func.func @load(%A: memref<1024x1024xf16>, %row: index, %col: index, %k: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %all = tile.alloc_shared {layout = #tile.shared<stages = 3,
                 swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>}
            : memref<3x64x64xf16, #gpu.address_space<workgroup>>
        %pipe = tile.pipeline stages = 3, consumers = 128 : !tile.pipeline
        %map = tile.tensor_map %A {box = array<i64: 64, 64>, swizzle = 128}
            : memref<1024x1024xf16> -> !llvm.ptr
        %view = tile.stage %all[%c1] : memref<3x64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
        tile.producer_acquire %pipe[%k] : !tile.pipeline
        tile.tma_load %map[%row, %col] to %view, %pipe[%k]
            : memref<64x64xf16, #gpu.address_space<workgroup>>, !tile.pipeline
      }
      return
    }
    ```
  }];
  let arguments = (ins Tile_GenericPointer:$map, Variadic<Index>:$coordinates,
                       AnyStaticShapeMemRef:$dst, Tile_PipelineType:$pipeline,
                       Index:$iteration);
  let assemblyFormat = [{
    $map `[` $coordinates `]` `to` $dst `,` $pipeline `[` $iteration `]` attr-dict
    `:` type($dst) `,` qualified(type($pipeline))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Columns of one box: the staged buffer's column block, else all.
    int64_t getBoxColumns();
  }];
}

def Tile_ConsumerWaitOp : Tile_Op<"consumer_wait"> {
  let summary = "A consumer waits until iteration k's stage is loaded";
  let description = [{
    The thread running it waits until the TMA loads of iteration `k` into
    stage `k mod S` of `pipeline` have landed.

    Example:

    ```mlir
    %k = arith.constant 5 : index
    %pipe = tile.pipeline stages = 3, consumers = 128 : !tile.pipeline
    tile.consumer_wait %pipe[%k] : !tile.pipeline
    ```
  }];
  let arguments = (ins Tile_PipelineType:$pipeline, Index:$iteration);
  let assemblyFormat = "$pipeline `[` $iteration `]` attr-dict `:` qualified(type($pipeline))";
}

def Tile_ConsumerReleaseOp : Tile_Op<"consumer_release"> {
  let summary = "The consumers stop reading iteration k's stage";
  let description = [{
    Every consumer thread runs it once it (and the asynchronous reads it
    started, such as wgmma groups it waited for) no longer reads stage
    `k mod S` of `pipeline`; once all of them have, the producer may refill
    the stage. Lowered to one arrival per warp.

    Example:

    ```mlir
    %k = arith.constant 5 : index
    %pipe = tile.pipeline stages = 3, consumers = 128 : !tile.pipeline
    tile.consumer_release %pipe[%k] : !tile.pipeline
    ```
  }];
  let arguments = (ins Tile_PipelineType:$pipeline, Index:$iteration);
  let assemblyFormat = "$pipeline `[` $iteration `]` attr-dict `:` qualified(type($pipeline))";
}

//===----------------------------------------------------------------------===//
// Warp groups and the program's own mbarriers (hand-written warp
// specialization: T.ws, T.alloc_barrier)
//===----------------------------------------------------------------------===//

def Tile_WarpGroupsOp : Tile_Op<"ws", [
    NoTerminator, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Code that only some warpgroups of the block run";
  let description = [{
    The body runs on the threads of the listed warpgroups (warpgroup `w` is
    threads `128 w` to `128 w + 127`; the list is ascending and contiguous)
    and is skipped by the others; or, written `warps = [...]`, on the
    listed warps (warp `w` is threads `32 w` to `32 w + 31`; ascending and
    contiguous), for a branch on the thread index over part of a warpgroup
    (a body of warps cannot use wgmma or move registers, which work on whole
    warpgroups). Inside it the tile program sees a block of
    those threads: fragments the body uses are laid out over them, a gemm
    partitions its warps among them, and barriers the compiler inserts there
    are named barriers of those threads only. Accesses of two bodies with
    disjoint warpgroups that conflict are ordered by a block barrier between
    them, unless the kernel has mbarriers of its own (`tile.init_barriers`):
    then ordering them is the program's, through `tile.barrier_wait` and
    `tile.barrier_arrive`. It sits in a `tile.kernel` (possibly in loops and
    branches), not in a `tile.parallel`, a `tile.pipelined` or another
    `tile.ws`; the kernel's threads are a multiple of 128 (of 32 for a body
    of warps). Shared buffers the body uses keep their bytes for the whole
    kernel.

    Example:

    ```mlir
    func.func @halves(%C: memref<128x128xf32>) {
      %c1 = arith.constant 1 : index
      %c0 = arith.constant 0 : index
      tile.kernel blocks(%bx) in (%c1) threads = 256 {
        %acc = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
        %zero = arith.constant 0.0 : f32
        tile.ws warpgroups = [1] {
          tile.fill %acc, %zero : memref<128x128xf32, #tile.space<fragment>>, f32
          tile.copy %acc[%c0, %c0] [128, 128] to %C[%c0, %c0] [128, 128]
              : memref<128x128xf32, #tile.space<fragment>> to memref<128x128xf32>
        }
      }
      return
    }
    ```

    A body of the block's warps 1 and 2 (threads 32 to 95):

    ```mlir
    tile.ws warps = [1, 2] {
      tile.fill %row, %zero : memref<64xf32, #tile.space<fragment>>, f32
    }
    ```
  }];
  let arguments = (ins OptionalAttr<DenseI64ArrayAttr>:$warpgroups,
                       OptionalAttr<DenseI64ArrayAttr>:$warps);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`warpgroups` `=` $warpgroups^)? (`warps` `=` $warps^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's first warp and how many warps it has (of either form).
    int64_t getFirstWarp() {
      return getWarpgroups() ? 4 * getWarpgroups()->front() : getWarps()->front();
    }
    int64_t getWarpCount() {
      return getWarpgroups() ? 4 * int64_t(getWarpgroups()->size())
                             : int64_t(getWarps()->size());
    }
    /// The first thread of the body's threads, and how many there are.
    int64_t getFirstThread() { return 32 * getFirstWarp(); }
    int64_t getThreadCount() { return 32 * getWarpCount(); }
  }];
}

def Tile_InitBarriersOp : Tile_Op<"init_barriers"> {
  let summary = "Initialise the program's own mbarriers";
  let description = [{
    `barriers` (a 1-d `i64` buffer of `tile.alloc_shared`) holds `N`
    mbarriers; barrier `i` completes a phase once `counts[i]` arrivals
    (`tile.barrier_arrive`, one per thread that runs it) have reached it.
    Every thread of the block runs this op, directly in the kernel's body:
    its first thread initialises the barriers, then the block meets, so no
    thread waits on or arrives at a barrier before it exists. The buffer
    keeps its bytes for the whole kernel.

    Example:

    ```mlir
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I64], [1]>:$barriers, DenseI64ArrayAttr:$counts);
  let assemblyFormat = "$barriers `counts` `=` $counts attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_BarrierWaitOp : Tile_Op<"barrier_wait"> {
  let summary = "Wait for a phase of one of the program's mbarriers";
  let description = [{
    The thread running it waits until the phase of barrier `index` of
    `barriers` whose parity is the low bit of `parity` has completed: the
    barrier's first phase has parity 0, so waiting for parity 1 before any
    phase completed returns at once (the usual first wait of a producer on
    an "empty" barrier). After it, the thread sees the shared-memory writes
    the arriving threads made before arriving. `barriers` must be
    initialised by a `tile.init_barriers`.

    Example:

    ```mlir
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    %c0 = arith.constant 0 : index
    %k = arith.constant 3 : index
    tile.barrier_wait %bars[%c0], %k : memref<2xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I64], [1]>:$barriers, Index:$index, Index:$parity);
  let assemblyFormat = "$barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_BarrierArriveOp : Tile_Op<"barrier_arrive"> {
  let summary = "Arrive at one of the program's mbarriers";
  let description = [{
    Every thread running it arrives once at barrier `index` of `barriers`
    (release at block scope: its earlier shared-memory writes are seen by
    the threads that then wait for the phase). The thread's earlier writes
    are also fenced against the async proxy, so the wgmma gemms or TMA
    stores of the threads that wait may read them. `barriers` must be
    initialised by a `tile.init_barriers`.

    Example:

    ```mlir
    %bars = tile.alloc_shared : memref<2xi64, #gpu.address_space<workgroup>>
    tile.init_barriers %bars counts = [128, 128] : memref<2xi64, #gpu.address_space<workgroup>>
    %c1 = arith.constant 1 : index
    tile.barrier_arrive %bars[%c1] : memref<2xi64, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I64], [1]>:$barriers, Index:$index);
  let assemblyFormat = "$barriers `[` $index `]` attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Semaphores between blocks
//===----------------------------------------------------------------------===//

def Tile_SemaphoreSignalOp : Tile_Op<"semaphore_signal"> {
  let summary = "Publish the block's global writes and raise a flag";
  let description = [{
    Run by every thread of the block (of the consumers, in a
    warp-specialized kernel) at the same point: once all of them have
    arrived, the global-memory writes they made before it are made visible
    at GPU scope and element `index` of the int32 tensor `flags` is set to
    `level` (1 unless given; a later signal of the same block may raise it
    further). A block waiting for that level with `tile.semaphore_wait` then
    sees those writes. Lowered to a barrier of the block, then, on its first
    thread, a GPU-scope memory fence and an atomic exchange.

    `tile-pipeline-loops` uses a pair of these for stream-K: a block that
    computed part of an output tile's K range stores its partial sums and
    signals; the block finishing the tile waits for it and adds them.

    Example:

    ```mlir
    func.func @publish(%flags: memref<?xi32>, %i: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        tile.semaphore_signal %flags[%i] : memref<?xi32>
        tile.semaphore_signal %flags[%i] {level = 2 : i32} : memref<?xi32>
      }
      return
    }
    ```
  }];
  let arguments = (ins MemRefRankOf<[I32], [1]>:$flags, Index:$index,
                       DefaultValuedAttr<I32Attr, "1">:$level);
  let assemblyFormat = "$flags `[` $index `]` attr-dict `:` type($flags)";
  let hasVerifier = 1;
}

def Tile_SemaphoreWaitOp : Tile_Op<"semaphore_wait"> {
  let summary = "Wait until another block raised a flag";
  let description = [{
    Run by every thread of the block (of the consumers, in a
    warp-specialized kernel) at the same point: the block waits until
    element `index` of the int32 tensor `flags` is at least `level` (1
    unless given), as a `tile.semaphore_signal` of another block sets it;
    afterwards every thread sees the global writes that block made before
    signalling. With `count`, it waits for the `count` flags from `index`
    on, each polled by its own thread at once (a block gathering the work
    of several pays one round trip, not one per flag). Lowered to a spin of
    the block's first threads on atomic reads of the flags, a GPU-scope
    memory fence, then a barrier of the block. The flag is not reset: the
    launcher zeroes such flags before each launch.

    The signalling block must be able to run while this one waits: every
    block of the grid resident at once (a persistent kernel's grid of at
    most one block per multiprocessor), or the signaller launched earlier.

    Example:

    ```mlir
    func.func @acquire(%flags: memref<?xi32>, %i: index, %n: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        tile.semaphore_wait %flags[%i] : memref<?xi32>
        tile.semaphore_wait %flags[%i] count %n {level = 2 : i32} : memref<?xi32>
      }
      return
    }
    ```
  }];
  let arguments = (ins MemRefRankOf<[I32], [1]>:$flags, Index:$index, Optional<Index>:$count,
                       DefaultValuedAttr<I32Attr, "1">:$level);
  let assemblyFormat = "$flags `[` $index `]` (`count` $count^)? attr-dict `:` type($flags)";
  let hasVerifier = 1;
}

def Tile_StorePartialsOp : Tile_Op<"store_partials"> {
  let summary = "Store each thread's registers of a fragment into a row of a global tensor";
  let description = [{
    Every thread of the block (of the consumers, in a warp-specialized
    kernel) stores its registers of the fragment `src` into row `row` of the
    global tensor `partials`: registers 4q .. 4q + 3 of thread t at columns
    (q x threads + t) x 4, one 16-byte store each, so that the block's
    stores are contiguous whatever the fragment's layout. A row holds as
    many elements as the fragment (its layout must place each 32-bit element
    on one thread and register, four registers or a multiple of four a
    thread). `tile.add_partials` with the same fragment layout reads them
    back.

    `tile-pipeline-loops` uses it for stream-K: a block that computed part
    of an output tile's K range leaves its partial sums for the block that
    finishes the tile.

    Example:

    ```mlir
    func.func @leave(%partials: memref<?x8192xf32>, %slot: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
        tile.store_partials %acc to %partials[%slot] : memref<64x128xf32, #tile.space<fragment>> to memref<?x8192xf32>
      }
      return
    }
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$src, MemRefRankOf<[AnyFloat], [2]>:$partials,
                       Index:$row);
  let assemblyFormat = [{
    $src `to` $partials `[` $row `]` attr-dict `:` type($src) `to` type($partials)
  }];
  let hasVerifier = 1;
}

def Tile_AddPartialsOp : Tile_Op<"add_partials"> {
  let summary = "Add a row of partial sums stored by tile.store_partials to a fragment, or gather its reduced slices";
  let description = [{
    Every thread of the block (of the consumers, in a warp-specialized
    kernel) adds to each of its registers of the fragment `dst` the value a
    `tile.store_partials` of a fragment of the same layout left for that
    thread and register in row `row` of `partials` (registers 4q .. 4q + 3
    at columns (q x threads + t) x 4; a thread's loads are all issued before
    the additions). The block that stored them must have published them
    first (`tile.semaphore_signal`, waited for with `tile.semaphore_wait`).

    With `count` n, the registers are set (not added to) from the slices
    `tile.reduce_partials` left, which hold the whole sums: each 16-byte
    column vector p of the row (of V) comes from row `row + r` for the
    slice r holding it (p in [r V / n, (r + 1) V / n)).

    Example:

    ```mlir
    func.func @gather(%partials: memref<?x8192xf32>, %slot: index, %n: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %acc = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
        tile.add_partials %partials[%slot] to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
        tile.add_partials %partials[%slot] count %n to %acc : memref<?x8192xf32> to memref<64x128xf32, #tile.space<fragment>>
      }
      return
    }
    ```
  }];
  let arguments = (ins MemRefRankOf<[AnyFloat], [2]>:$partials, Index:$row,
                       Optional<Index>:$count, AnyStaticShapeMemRef:$dst);
  let assemblyFormat = [{
    $partials `[` $row `]` (`count` $count^)? `to` $dst attr-dict `:` type($partials) `to` type($dst)
  }];
  let hasVerifier = 1;
}

def Tile_ReducePartialsOp : Tile_Op<"reduce_partials"> {
  let summary = "Sum one slice of several rows of partial sums, into one of them";
  let description = [{
    Every thread of the block (of the consumers, in a warp-specialized
    kernel) takes part in summing slice `slice` of rows `first` ..
    `first + count - 1` of the fp32 tensor `partials`, in row order, and
    stores the sums over that slice of row `first + slice`. A row's V
    16-byte column vectors are cut into `count` slices, slice r the vectors
    [r V / count, (r + 1) V / count); each thread sums whole vectors, eight
    rows' loads in flight at a time.

    Stream-K's fix-up (`tile-pipeline-loops`) runs it as a reduce-scatter:
    the `count` blocks that computed parts of one output tile each store
    their partials (`tile.store_partials`), wait for all of them, each sums
    one slice, and the tile's owner gathers the slices
    (`tile.add_partials ... count`): every block reads one row's worth,
    instead of the owner reading all of them one after another.

    Example:

    ```mlir
    func.func @reduce(%partials: memref<?x8192xf32>, %first: index, %n: index, %r: index) {
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        tile.reduce_partials %partials[%first] count %n slice %r : memref<?x8192xf32>
      }
      return
    }
    ```
  }];
  let arguments = (ins MemRefRankOf<[F32], [2]>:$partials, Index:$first, Index:$count,
                       Index:$slice);
  let assemblyFormat = [{
    $partials `[` $first `]` `count` $count `slice` $slice attr-dict `:` type($partials)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tile_CopyOp : Tile_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "Copy a tile between two buffers, converting the element type";
  let description = [{
    Copies a region of `src` to a region of `dst`. Each side names its region
    by per-dimension start indices and static sizes; dimensions of size 1 are
    dropped before the two regions are matched, so a 4-d slice
    `A[b, i:i+64, h, :]` (sizes `[1, 64, 1, 128]`) copies to a 64x128 shared
    tile. After dropping unit dimensions both sides must have the same shape.
    Elements of different types are converted (`extf`/`truncf`, integer
    extension/truncation, int<->float).

    A side in global memory may overhang the tensor (a tile at the edge of a
    size no block divides): reads outside the tensor yield zero and writes
    outside it are skipped. A fragment side is the whole fragment or a
    region starting at constant indices (`acc[0:4, :]`: each thread moves the
    registers whose elements fall inside it); a copy between two fragments
    (a cast, typically) takes both whole and keeps every element with the
    thread holding it, so their layouts must place elements alike.

    With `async`, a global -> shared copy of one element type is issued as
    cp.async and completes only once a later `nvvm.cp.async.wait.group`
    says so; `tile-pipeline-loops` marks the copies it overlaps with compute.
    An async copy may carry a predicate (`if %p`): where it is false nothing
    is read and the destination tile is filled with zeros, as for elements
    outside the tensor. The pipeliner predicates the copies it issues ahead
    instead of branching around them, so the loop body stays one basic block
    that the assembler can schedule as a whole.

    Example:

    ```mlir
    func.func @load(%A: memref<?x?xf16>, %i: index, %j: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
        tile.copy %A[%i, %j] [64, 32] to %s[%c0, %c0] [64, 32]
            : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      }
      return
    }

    // Predicated: where %p is false, %s gets zeros.
    func.func @load_if(%A: memref<?x?xf16>, %i: index, %j: index, %p: i1) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      tile.kernel blocks(%bx) in (%c1) threads = 128 {
        %s = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
        tile.copy %A[%i, %j] [64, 32] to %s[%c0, %c0] [64, 32] if %p {async}
            : memref<?x?xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
      }
      return
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$src, Variadic<Index>:$src_offsets,
                       DenseI64ArrayAttr:$src_sizes,
                       AnyMemRef:$dst, Variadic<Index>:$dst_offsets,
                       DenseI64ArrayAttr:$dst_sizes, Optional<I1>:$pred,
                       UnitAttr:$async);
  let assemblyFormat = [{
    $src `[` $src_offsets `]` $src_sizes `to` $dst `[` $dst_offsets `]` $dst_sizes
    (`if` $pred^)? attr-dict `:` type($src) `to` type($dst)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The copied tile's shape: the sizes with unit dimensions dropped.
    ::llvm::SmallVector<int64_t> getTileShape();
  }];
}

def Tile_FillOp : Tile_Op<"fill"> {
  let summary = "Set every element of a buffer to a value";
  let description = [{
    Writes `value` to every element of a shared, fragment or local buffer.
    `T.clear(buf)` is a fill with zero.

    Example:

    ```mlir
    %zero = arith.constant 0.0 : f32
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    tile.fill %f, %zero : memref<32x128xf32, #tile.space<fragment>>, f32
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$dst, AnyType:$value);
  let assemblyFormat = "$dst `,` $value attr-dict `:` type($dst) `,` type($value)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

def Tile_ParallelOp : Tile_Op<"parallel", [
    NoTerminator, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "An elementwise loop over a tile, spread over the block's threads";
  let description = [{
    Runs the body once for every index of a tile of shape `shape`; the region
    arguments are the index. Iterations are independent. The compiler gives
    each thread the iterations whose elements it holds, by the layout of the
    fragments the body reads and writes; `layout`, when present, is that
    assignment (set by `tile-infer-layout`). Fragments are indexed by the
    loop indices themselves; shared and global buffers by any expression of
    them (global accesses outside the tensor are skipped, reading zero).
    A loop that touches no fragment may have a padded layout: more
    (thread, register) slots than iterations, each iteration held once and
    every other slot past the first extent (`T.Parallel(129)` on 128
    threads); those slots run no iteration.

    Example:

    ```mlir
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    %two = arith.constant 2.0 : f32
    tile.parallel (%i, %j) in [32, 128] {
      %x = memref.load %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %f[%i, %j] : memref<32x128xf32, #tile.space<fragment>>
    }
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$shape, OptionalAttr<Tile_LayoutAttr>:$layout);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [
    NoTerminator, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "A loop whose copies may be overlapped with compute";
  let description = [{
    A sequential loop `for %iv = %lb to %ub step %step` whose body the
    compiler may software-pipeline `num_stages` deep: copies into shared
    memory for later iterations are issued while earlier iterations compute.
    Without pipelining it runs as a plain loop, so the result never depends
    on `num_stages`.

    `copies_last` (a program's manual schedule, TileLang's `T.Pipelined`
    `stage`/`order` with the copies ordered after the computing statements)
    asks that each iteration issue the copies it runs ahead after its other
    ops rather than before them; it changes where the copies go in the
    cp.async pipeline's body, never the result. A warp-specialized loop's
    producer warpgroup issues them as soon as a stage is free either way.

    Example:

    ```mlir
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 3 {
      %kk = arith.addi %k, %c1 : index
    }
    tile.pipelined %k = %c0 to %c8 step %c1 num_stages = 2 attributes {copies_last} {
      %kk = arith.addi %k, %c1 : index
    }
    ```
  }];
  let arguments = (ins Index:$lower_bound, Index:$upper_bound, Index:$step,
                       I64Attr:$num_stages, UnitAttr:$copies_last);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "C (+)= A x B on tensor cores";
  let description = [{
    Multiplies `A` (M x K, or K x M with `transpose_a`) by `B` (K x N, or
    N x K with `transpose_b`) and accumulates into the fragment `C` (M x N),
    which is first set to zero when `clear_accum` is set. `A` is in shared
    memory or a fragment, `B` in shared memory. `policy` says how the output
    tile is partitioned over the block's warps.

    `mma` is the tensor-core instruction and warp partition that
    `tile-select-mma` chose (absent before it runs). `wg_wait` is the user's
    request (TileLang's `T.gemm(wg_wait=)`) for how many wgmma groups may
    stay pending after the gemm; `tile-select-mma` honours it as the `mma`
    depth or reports why it cannot. `wg_wait = -1` issues the wgmmas and
    waits for none: a later `tile.wait_wgmma` completes them (on mma.sync,
    which completes in program order, it is depth 0). A discardable
    `tile.require_wgmma` (T.wgmma_gemm) makes `tile-select-mma` report an
    error where it would choose mma.sync.

    Element types the verifier accepts (A and B alike -> C): f16 -> f32 or
    f16, bf16 -> f32, f32 -> f32 (tf32), i8 -> i32, f8E4M3FN / f8E5M2 -> f32.
    All are lowered: f32 as tf32 on mma.sync m16n8k8, i8 on wgmma k32
    (sm_90a, both operands K-major in shared memory) or mma.sync m16n8k32,
    fp8 on wgmma only.

    `prefetch` is `tile-pipeline-loops`' schedule for an mma.sync gemm that
    is all its software-pipelined loop computes (the last op of the
    `scf.for` it made, `A` and `B` this iteration's stages): the stages of
    the first iteration (defined before the loop) and of the next one, A's
    then B's. The loop then has no wait and barrier at its top: the gemm's
    lowering waits for the cp.async groups until `prefetch_wait` are pending
    and meets the block at a barrier once it has read its last K slice, and
    loads the next stage's first slice before that slice's mma.sync, so that
    its latency is hidden (the first iteration's first slice is loaded
    after the wait and barrier the pipeliner puts before the loop).

    Example:

    ```mlir
    %a = tile.alloc_shared : memref<128x32xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<32x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<square>}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x128xf16, #gpu.address_space<workgroup>>,
          memref<128x128xf32, #tile.space<fragment>>
    ```

    After `tile-select-mma` for sm_80 with 128 threads (2 x 2 warps, each
    holding 64 x 64):

    ```mlir
    tile.gemm %a, %b, %c {policy = #tile.warp_policy<square>,
        mma = #tile.mma<kind = mma_sync, m = 16, n = 8, k = 16, warps_m = 2,
                        warps_n = 2, a = shared, depth = 0>}
        : memref<128x32xf16, #gpu.address_space<workgroup>>,
          memref<32x128xf16, #gpu.address_space<workgroup>>,
          memref<128x128xf32, #tile.space<fragment>>
    ```

    In a pipelined loop, prefetching (`tile-pipeline-loops`; A and B are
    stages of 3-stage buffers `%as`, `%bs`; `%fa`, `%fb` their stages 0,
    defined before the loop):

    ```mlir
    %as = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x128x32xf16, #gpu.address_space<workgroup>>
    %bs = tile.alloc_shared {layout = #tile.shared<stages = 3>} : memref<3x32x128xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x128xf32, #tile.space<fragment>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %fa = tile.stage %as[%c0] : memref<3x128x32xf16, #gpu.address_space<workgroup>> to memref<128x32xf16, #gpu.address_space<workgroup>>
    %fb = tile.stage %bs[%c0] : memref<3x32x128xf16, #gpu.address_space<workgroup>> to memref<32x128xf16, #gpu.address_space<workgroup>>
    scf.for %i = %c0 to %c3 step %c1 {
      %s = arith.remsi %i, %c3 : index
      %a = tile.stage %as[%s] : memref<3x128x32xf16, #gpu.address_space<workgroup>> to memref<128x32xf16, #gpu.address_space<workgroup>>
      %b = tile.stage %bs[%s] : memref<3x32x128xf16, #gpu.address_space<workgroup>> to memref<32x128xf16, #gpu.address_space<workgroup>>
      %n1 = arith.addi %i, %c1 : index
      %n = arith.remsi %n1, %c3 : index
      %na = tile.stage %as[%n] : memref<3x128x32xf16, #gpu.address_space<workgroup>> to memref<128x32xf16, #gpu.address_space<workgroup>>
      %nb = tile.stage %bs[%n] : memref<3x32x128xf16, #gpu.address_space<workgroup>> to memref<32x128xf16, #gpu.address_space<workgroup>>
      tile.gemm %a, %b, %c prefetch(%fa, %fb, %na, %nb) {prefetch_wait = 1 : i32}
          : memref<128x32xf16, #gpu.address_space<workgroup>>,
            memref<32x128xf16, #gpu.address_space<workgroup>>,
            memref<128x128xf32, #tile.space<fragment>>,
            memref<128x32xf16, #gpu.address_space<workgroup>>,
            memref<32x128xf16, #gpu.address_space<workgroup>>,
            memref<128x32xf16, #gpu.address_space<workgroup>>,
            memref<32x128xf16, #gpu.address_space<workgroup>>
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$a, AnyMemRef:$b, AnyMemRef:$c,
                       Variadic<AnyMemRef>:$prefetch,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       DefaultValuedAttr<Tile_WarpPolicyAttr,
                           "::mlir::tile::WarpPolicy::Square">:$policy,
                       UnitAttr:$clear_accum,
                       OptionalAttr<Tile_MmaAttr>:$mma,
                       OptionalAttr<I64Attr>:$wg_wait,
                       OptionalAttr<I32Attr>:$prefetch_wait);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`prefetch` `(` $prefetch^ `)`)? attr-dict `:` type($a) `,` type($b) `,` type($c)
    (`,` type($prefetch)^)?
  }];
  let extraClassDeclaration = [{
    /// The stages a prefetching gemm reads ahead (see `prefetch`).
    ::mlir::Value getFirstA() { return getPrefetch()[0]; }
    ::mlir::Value getFirstB() { return getPrefetch()[1]; }
    ::mlir::Value getNextA() { return getPrefetch()[2]; }
    ::mlir::Value getNextB() { return getPrefetch()[3]; }
    ::mlir::LogicalResult verifyPrefetch();
  }];
  let hasVerifier = 1;
}

def Tile_WaitWgmmaOp : Tile_Op<"wait_wgmma"> {
  let summary = "Wait until at most `pending` wgmma groups are in flight";
  let description = [{
    TileLang's `T.wait_wgmma(id)` (id: the groups left running, this op's
    `pending`): the executing warpgroup waits until
    at most the `pending` most recently issued wgmma groups are still
    running (`wgmma.wait_group pending`). It completes gemms issued with
    `wg_wait = -1` (the `#tile.mma` depth -1: issued and left running), so
    that the code between the issue and this wait overlaps with the tensor
    cores; the accumulators of those gemms (and their A fragments) may only
    be touched after it.

    `fragments` are the accumulators of the gemms this wait completes; the
    frontend leaves them empty and `tile-select-mma` fills them in after
    checking, in program order, that nothing touches a pending gemm's
    operands before the wait that completes it. The lowering pins those
    registers at the wait, so no read of them moves above it. On mma.sync
    (sm_80) every gemm completes in program order and the wait lowers to
    nothing.

    Example:

    ```mlir
    %q = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %k = tile.alloc_shared : memref<64x64xf16, #gpu.address_space<workgroup>>
    %s = tile.alloc_fragment : memref<64x64xf32, #tile.space<fragment>>
    tile.gemm %q, %k, %s {transpose_b, wg_wait = -1 : i64}
        : memref<64x64xf16, #gpu.address_space<workgroup>>,
          memref<64x64xf16, #gpu.address_space<workgroup>>,
          memref<64x64xf32, #tile.space<fragment>>
    tile.wait_wgmma {pending = 0 : i64}
    ```

    After `tile-select-mma`: `tile.wait_wgmma %s {pending = 0 : i64} :
    memref<64x64xf32, #tile.space<fragment>>`.
  }];
  let arguments = (ins Variadic<AnyMemRef>:$fragments, I64Attr:$pending);
  let assemblyFormat = [{
    ($fragments^)? attr-dict (`:` type($fragments)^)?
  }];
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "Reduce a tile along one dimension";
  let description = [{
    Combines the elements of `src` along dimension `dim` with `kind` and
    writes the result to `dst`, whose shape is `src`'s without `dim`. With
    `clear` the previous contents of `dst` are ignored; without it they take
    part in the reduction (a running max or sum).

    Example:

    ```mlir
    %s = tile.alloc_fragment : memref<64x128xf32, #tile.space<fragment>>
    %m = tile.alloc_fragment : memref<64xf32, #tile.space<fragment>>
    tile.reduce %s to %m {kind = #tile.reduce_kind<max>, dim = 1 : i64, clear}
        : memref<64x128xf32, #tile.space<fragment>> to memref<64xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins AnyMemRef:$src, AnyMemRef:$dst, Tile_ReduceKindAttr:$kind,
                       I64Attr:$dim, UnitAttr:$clear);
  let assemblyFormat = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)";
  let hasVerifier = 1;
}

#endif // TILE_OPS_TD
