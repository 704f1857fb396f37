//===- TileAttrs.td - tile dialect attributes --------------*- tablegen -*-===//

#ifndef TILE_ATTRS_TD
#define TILE_ATTRS_TD

include "dialects/tile/TileDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_MemorySpace : I32EnumAttr<"MemorySpace", "tile memory space", [
    I32EnumAttrCase<"Fragment", 0, "fragment">,
    I32EnumAttrCase<"Local", 1, "local">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_MemorySpaceAttr : EnumAttr<Tile_Dialect, Tile_MemorySpace, "space"> {
  let summary = "Memory space of a fragment or local buffer";
  let description = [{
    `#tile.space<fragment>`: a tile held in registers, each element owned by
    the thread(s) its `#tile.layout` names. `#tile.space<local>`: a small
    per-thread array; every thread holds the whole buffer.

    Example:

    ```mlir
    %f = tile.alloc_fragment : memref<32x128xf32, #tile.space<fragment>>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Tile_WarpPolicy : I32EnumAttr<"WarpPolicy", "how gemm spreads warps", [
    I32EnumAttrCase<"Square", 0, "square">,
    I32EnumAttrCase<"FullRow", 1, "full_row">,
    I32EnumAttrCase<"FullCol", 2, "full_col">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_WarpPolicyAttr : EnumAttr<Tile_Dialect, Tile_WarpPolicy, "warp_policy"> {
  let summary = "How a gemm partitions its output tile over the block's warps";
  let description = [{
    `square` splits M and N so each warp's sub-tile is as square as the warp
    count allows; `full_row` stacks as many warps along M as the rows allow
    (all of them where each gets a multiple of 16 rows: whole rows per warp),
    the rest splitting N; `full_col` the same along N (TileLang's rules).

    Example: `policy = #tile.warp_policy<full_row>`
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "tile reduction", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Min", 2, "min">,
    I32EnumAttrCase<"AbsSum", 3, "abssum">,
    I32EnumAttrCase<"AbsMax", 4, "absmax">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_ReduceKindAttr : EnumAttr<Tile_Dialect, Tile_ReduceKind, "reduce_kind"> {
  let summary = "The combining function of a tile.reduce";
  let description = [{
    `max`, `sum`, `min`, `abssum` (sum of absolute values) or `absmax`
    (largest absolute value).

    Example: `kind = #tile.reduce_kind<absmax>`
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Tile_MmaKind : I32EnumAttr<"MmaKind", "tensor-core instruction family", [
    I32EnumAttrCase<"MmaSync", 0, "mma_sync">,
    I32EnumAttrCase<"Wgmma", 1, "wgmma">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_OperandPlace : I32EnumAttr<"OperandPlace", "where a gemm operand is read from", [
    I32EnumAttrCase<"Shared", 0, "shared">,
    I32EnumAttrCase<"Registers", 1, "registers">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_TargetFeature : I32BitEnumAttr<"TargetFeature", "hardware feature of a target", [
    I32BitEnumAttrCaseNone<"None", "none">,
    I32BitEnumAttrCaseBit<"CpAsync", 0, "cp_async">,
    I32BitEnumAttrCaseBit<"MmaSync", 1, "mma_sync">,
    I32BitEnumAttrCaseBit<"Tma", 2, "tma">,
    I32BitEnumAttrCaseBit<"Wgmma", 3, "wgmma">,
    I32BitEnumAttrCaseBit<"SetMaxNReg", 4, "setmaxnreg">,
    I32BitEnumAttrCaseBit<"Cluster", 5, "cluster">,
    // red.global.add.v2/v4/v8 of f32 / f16 / bf16 (PTX 8.1, sm_90)
    I32BitEnumAttrCaseBit<"VectorReduce", 6, "vector_reduce">,
    // cvt.rn.satfinite between f32 / f16 pairs and e4m3x2 / e5m2x2 (sm_89);
    // without it fp8 conversions are integer arithmetic on the bits
    I32BitEnumAttrCaseBit<"Fp8Convert", 7, "fp8_convert">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
  let separator = ", ";
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def Tile_LayoutAttr : Tile_Attr<"Layout", "layout"> {
  let summary = "Which thread and register hold each element of a fragment";
  let description = [{
    A fragment of shape `[d0, ..., dn-1]` is spread over `threads` threads,
    each holding `regs` registers. The layout is written from the owner's
    side: `map` takes `(thread, register)` to the element index that register
    holds. Lowering enumerates exactly this map (a thread walks its registers),
    and it expresses replication directly: when `threads * regs` exceeds the
    element count, several (thread, register) pairs name the same element, as
    when every thread of a row holds that row's maximum. Every element is held
    by `threads * regs / numel` pairs (the replication factor), and every pair
    names an element inside the tile; `tile.alloc_fragment` checks both.

    The maps are affine with `floordiv`/`mod`, which covers blocked layouts
    and the tensor-core operand and accumulator layouts.

    Worked example, the blocked layout of a 4x8 tile over 4 threads holding
    8 registers as two 4-wide vectors (`d0` = thread, `d1` = register):

    ```
    #tile.layout<threads = 4, regs = 8,
                 map = (d0, d1) -> ((d1 floordiv 4) * 2 + d0 floordiv 2,
                                    (d0 mod 2) * 4 + d1 mod 4)>
    ```

    | element row | cols 0-3        | cols 4-7        |
    | ----------- | --------------- | --------------- |
    | 0           | t0 r0-r3        | t1 r0-r3        |
    | 1           | t2 r0-r3        | t3 r0-r3        |
    | 2           | t0 r4-r7        | t1 r4-r7        |
    | 3           | t2 r4-r7        | t3 r4-r7        |

    Each thread's registers 0-3 are four contiguous elements of one row, so a
    copy from global memory moves them with one 16-byte load (for f32).
  }];
  let parameters = (ins "int64_t":$threads, "int64_t":$regs, "::mlir::AffineMap":$map);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rank of the tiles this layout applies to.
    unsigned getRank() const { return getMap().getNumResults(); }
    /// The element index held by `reg` of `thread`.
    ::llvm::SmallVector<int64_t> apply(int64_t thread, int64_t reg) const;
    /// Checks that this layout covers `shape` exactly and uniformly;
    /// returns a message describing the first violation, or an empty string.
    std::string checkCovers(::llvm::ArrayRef<int64_t> shape) const;
    /// The largest power-of-two run of registers that hold elements
    /// contiguous along the last dimension, starting at multiples of the run.
    int64_t getContiguousRun() const;
    /// The blocked layout of `shape` over `threads` threads: runs of up to
    /// `vector` contiguous elements along the last dimension per register
    /// group, consecutive threads on consecutive runs. Fails (with the
    /// reason in `why`) when the tile cannot be spread evenly.
    static ::mlir::FailureOr<LayoutAttr> getBlocked(
        ::mlir::MLIRContext *ctx, ::llvm::ArrayRef<int64_t> shape,
        int64_t threads, int64_t vector, std::string &why);
  }];
}

def Tile_SwizzleAttr : Tile_Attr<"Swizzle", "swizzle"> {
  let summary = "XOR swizzle of shared-memory byte offsets (CuTe's Swizzle<B, M, S>)";
  let description = [{
    Maps a byte offset `o` of a shared buffer to
    `o ^ ((o >> shift) & (((1 << bits) - 1) << base))`: the `bits` bits of
    `o` starting at bit `base + shift` are XOR-ed into the bits starting at
    `base`. With `base = 4` the swizzle permutes 16-byte chunks, the unit of
    `ldmatrix`, `cp.async` and vector loads, so a 16-byte access never
    straddles chunks. The common 128-byte swizzle (accepted by ldmatrix,
    wgmma and TMA alike) is `bits = 3, base = 4, shift = 3`: within each
    1024-byte block of eight 128-byte rows, row `r` stores its chunk `c` at
    chunk position `c ^ r`:

    | row (128 B) | chunk 0 | chunk 1 | chunk 2 | ... | chunk 7 |
    | ----------- | ------- | ------- | ------- | --- | ------- |
    | 0           | 0       | 1       | 2       | ... | 7       |
    | 1           | 1       | 0       | 3       | ... | 6       |
    | 2           | 2       | 3       | 0       | ... | 5       |
    | 7           | 7       | 6       | 5       | ... | 0       |

    A column of 16-byte chunks read by eight threads (one per row) thus lands
    in eight different bank groups. `bits = 0` is the identity.

    Example:

    ```mlir
    %s = tile.alloc_shared {swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>}
        : memref<64x64xf16, #gpu.address_space<workgroup>>
    ```
  }];
  let parameters = (ins "int64_t":$bits, "int64_t":$base, "int64_t":$shift);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Applies the swizzle to a byte offset.
    int64_t apply(int64_t byteOffset) const;
  }];
}

def Tile_SharedLayoutAttr : Tile_Attr<"SharedLayout", "shared"> {
  let summary = "Where each element of a shared buffer sits: stages, column blocks, swizzle";
  let description = [{
    The layout of a `tile.alloc_shared` buffer, everything that decides the
    byte address of an element in one attribute (the `layout` of the op).
    Three optional parts, applied in this order to element `idx` of a buffer
    of element size `E` bytes:

    1. `stages = S` (> 0): the buffer is `S` copies of one stage (the leading
       dimension of the memref is the stage, put there by
       `tile-pipeline-loops` when it multi-buffers a copy's destination); stage
       `s` starts at element `s * (elements of one stage)` and is reached
       through `tile.stage`. The parts below apply within one stage.
    2. `column_block = B` (> 0, 2-d stages only): an `R x C` stage is stored
       as `C / B` blocks of `R x B` elements, each contiguous and row-major:
       element `(r, c)` is element `((c / B) * R + r) * B + c mod B`. This is
       wgmma's operand atom: an N-major B operand (or a K-major one wider than
       128 bytes) is read as 128-byte-wide column blocks. Without it, row-major.
    3. `swizzle = #tile.swizzle<...>`: the XOR swizzle of the byte offset
       `o = E * element` within the stage (see `#tile.swizzle`).

    A 2 x 64 x 128 fp16 buffer with `stages = 2, column_block = 64,
    swizzle = <bits = 3, base = 4, shift = 3>`: element (s, r, c) sits at

    | element      | stage start | in-stage element     | byte offset | swizzled   |
    | ------------ | ----------- | -------------------- | ----------- | ---------- |
    | (0, 0, 0)    | 0           | 0                    | 0           | 0          |
    | (0, 1, 0)    | 0           | 64                   | 128         | 144        |
    | (0, 0, 64)   | 0           | 64 * 64 = 4096       | 8192        | 8192       |
    | (0, 2, 8)    | 0           | 2 * 64 + 8 = 136     | 272         | 304        |
    | (1, 0, 0)    | 8192        | 0                    | 16384       | 16384      |

    (stage starts in elements; the stage's bytes are a multiple of the
    swizzle's period, so the stage start is added after the swizzle). The compiler computes every shared address from this
    attribute in one function (`sharedAddress` in passes/Conversion/TileToGPU/TileAccess.cpp);
    `tile-swizzle-shared-memory` sets the swizzle, `tile-select-mma` the
    column blocks a wgmma operand needs, `tile-pipeline-loops` the stages.
    An empty `#tile.shared<>` is the plain row-major buffer.

    Example:

    ```mlir
    %b = tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64,
           swizzle = #tile.swizzle<bits = 3, base = 4, shift = 3>>}
        : memref<3x64x128xf16, #gpu.address_space<workgroup>>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "0">:$stages,
                        DefaultValuedParameter<"int64_t", "0">:$column_block,
                        OptionalParameter<"::mlir::tile::SwizzleAttr">:$swizzle);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// This layout with the swizzle replaced (null: none).
    SharedLayoutAttr withSwizzle(SwizzleAttr swizzle) const;
    /// This layout with column blocks of `columns` (0: none).
    SharedLayoutAttr withColumnBlock(int64_t columns) const;
    /// This layout with `stages` stages (0: not multi-buffered).
    SharedLayoutAttr withStages(int64_t stages) const;
    /// Whether this is the plain row-major layout (no part set).
    bool isPlain() const;
    /// The byte offset of element `index` (one stage's coordinates, leading
    /// stage index first when `stages` > 0) of a buffer of `type`.
    int64_t byteOffset(::mlir::MemRefType type, ::llvm::ArrayRef<int64_t> index) const;
    /// Why this layout cannot describe a buffer of `type` (empty: it can).
    std::string checkFits(::mlir::MemRefType type) const;
  }];
}

//===----------------------------------------------------------------------===//
// Target and instruction selection
//===----------------------------------------------------------------------===//

def Tile_TargetAttr : Tile_Attr<"Target", "target"> {
  let summary = "The GPU a module is compiled for: architecture, features, limits";
  let description = [{
    Put on the module as `tile.target` by the frontend, the `tlc` command or
    `tlc-opt --tile-target=ARCH`; every pass that depends on the hardware
    reads it from there, so a module carries everything its compilation needs
    and no pass option has to agree with another.

    Written with the architecture alone, the features and limits are the
    architecture's own (from one table in TileTarget.cpp):

    | arch   | features                                                   | shared bytes |
    | ------ | ---------------------------------------------------------- | ------------ |
    | sm_80  | cp_async, mma_sync                                         | 166912       |
    | sm_86  | cp_async, mma_sync                                         | 101376       |
    | sm_89  | cp_async, mma_sync, fp8_convert                            | 101376       |
    | sm_90  | cp_async, mma_sync, tma, cluster, vector_reduce, fp8_convert | 232448     |
    | sm_90a | sm_90's, wgmma, setmaxnreg                                 | 232448       |

    Every architecture allows 255 registers per thread and 65536 per block.
    `features = [...]` narrows the feature set (a feature the architecture
    lacks is an error); `shared`, `registers` and `block_registers` lower the
    limits (to test budgets). The printed form lists only what differs from
    the architecture's defaults.

    Example:

    ```mlir
    module @hopper attributes {tile.target = #tile.target<"sm_90a">} {}
    module @narrowed attributes {tile.target = #tile.target<"sm_90a", features = [cp_async, mma_sync], shared = 49152>} {}
    ```
  }];
  let parameters = (ins StringRefParameter<"architecture name">:$arch,
                        "::mlir::tile::TargetFeature":$features,
                        "int64_t":$sharedBytes,
                        "int64_t":$registersPerThread,
                        "int64_t":$registersPerBlock);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The module attribute holding the target.
    static constexpr ::llvm::StringLiteral kAttrName = "tile.target";
    /// The target with `arch`'s own features and limits, or null when `arch`
    /// is not a known architecture.
    static TargetAttr getKnown(::mlir::MLIRContext *ctx, ::llvm::StringRef arch);
    /// The known architectures, comma separated (for messages).
    static std::string knownArchitectures();
    /// Whether the target has every feature of `f`.
    bool has(::mlir::tile::TargetFeature f) const {
      return ::mlir::tile::bitEnumContainsAll(getFeatures(), f);
    }
    /// The target of the module enclosing `op` (or `op` itself), or null.
    static TargetAttr lookup(::mlir::Operation *op);
    /// Like lookup, but emits an error on `op` naming the pass when the
    /// module has no target.
    static ::mlir::FailureOr<TargetAttr> require(::mlir::Operation *op,
                                                 ::llvm::StringRef pass);
  }];
}

def Tile_MmaAttr : Tile_Attr<"Mma", "mma"> {
  let summary = "The tensor-core instruction and warp partition chosen for a gemm";
  let description = [{
    Written on every `tile.gemm` by `tile-select-mma`; layout inference and
    the gemm lowering read it and decide nothing again.

    - `kind`: `mma_sync` (one warp per m16n8k16 atom, sm_80 and later) or
      `wgmma` (one warpgroup per m64nNk16 atom, sm_90a).
    - `m`, `n`, `k`: the instruction's shape (for wgmma, `n` is the
      warpgroup's share of the block's N: one instruction covers it).
    - `warps_m`, `warps_n`: how the block's warps split the M x N output;
      each warp holds `M / warps_m` x `N / warps_n`. For wgmma the four warps
      of a warpgroup stack along M, 16 rows each, and whole warpgroups tile
      the output: `warps_m / 4` of them along M by `warps_n` along N
      (warpgroup g at row g / warps_n, column g % warps_n), each holding one
      m64 row block, or several consecutive ones (one instruction each) when
      M is more than `16 * warps_m` rows. MLA decode's 64 x 512 output over
      two warpgroups is `warps_m = 4, warps_n = 2`, each warpgroup 256
      columns; a 128 x 128 block on one warpgroup is `warps_m = 4,
      warps_n = 1`, two row blocks.
    - `a`: whether A is read from `shared` memory or from `registers`.
    - `depth`: wgmma groups left pending after the gemm (`wgmma.wait_group
      depth`); 0 waits for the gemm's own instructions; -1 waits for nothing
      (TileLang's `wg_wait = -1`): a later `tile.wait_wgmma` completes it, or
      the wait of the wgmma gemm right after it that accumulates onto the
      same registers (a chain, such as MLA's latent then rope scores, whose
      wgmmas then run back to back). Always 0 for mma_sync.

    | kind     | atom       | warps per atom | A from            | B from |
    | -------- | ---------- | -------------- | ----------------- | ------ |
    | mma_sync | m16n8k16   | 1              | shared, registers | shared |
    | wgmma    | m64nNk16   | 4              | shared            | shared |

    Example:

    ```mlir
    #tile.mma<kind = wgmma, m = 64, n = 128, k = 16, warps_m = 8, warps_n = 1, a = shared, depth = 0>
    ```
  }];
  let parameters = (ins EnumParameter<Tile_MmaKind>:$kind,
                        "int64_t":$m, "int64_t":$n, "int64_t":$k,
                        "int64_t":$warps_m, "int64_t":$warps_n,
                        EnumParameter<Tile_OperandPlace>:$a,
                        "int64_t":$depth);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // TILE_ATTRS_TD
