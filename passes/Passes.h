//===- Passes.h - tlc passes ------------------------------------*- C++ -*-===//

#ifndef TLC_PASSES_PASSES_H
#define TLC_PASSES_PASSES_H

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// On an outlined kernel: how many of its last parameters are 128-byte
/// tensor maps (tile.tensor_map), for tile-grid-constant-params.
constexpr llvm::StringLiteral kTensorMapsAttr = "tile.tensor_maps";

/// On a tile.kernel made persistent by tile-pipeline-loops: its body walks
/// the grid's tiles itself (from gpu.block_id x by gpu.grid_dim x), so it is
/// launched on min(tiles, the device's SM count) blocks and its block
/// indices are not used.
constexpr llvm::StringLiteral kPersistentAttr = "tile.persistent";

/// The unit function-argument attribute marking a global scratch tensor
/// (T.alloc_global, stream-K's partial tiles): the launcher allocates it, the
/// caller never passes it. Scratch arguments follow the parameters.
constexpr llvm::StringLiteral kArgScratchAttr = "tile.scratch";

/// On the scf.for over a persistent kernel's tiles (tile-pipeline-loops):
/// convert-tile-to-gpu reads the thread index afresh in its body, so that
/// LLVM does not hoist every per-thread address of the body out of the loop
/// and keep them all live across it (dozens of 64-bit registers: MLA
/// decode's consumers spilled).
constexpr llvm::StringLiteral kTileLoopAttr = "tile.tile_loop";

/// On a module: tile-pipeline-loops keeps the cp.async pipeline instead of
/// warp-specializing with TMA (TileLang's tl.disable_warp_specialized and
/// tl.disable_tma_lower).
constexpr llvm::StringLiteral kNoWarpSpecializationAttr = "tile.no_warp_specialization";

/// On a tile.kernel: it has mbarriers of the program's own (T.alloc_barrier,
/// lowered by tile-insert-mbarriers), so tile-insert-barriers leaves the
/// ordering of tile.ws bodies of disjoint warpgroups to them.
constexpr llvm::StringLiteral kProgramBarriersAttr = "tile.program_barriers";
/// T.Kernel(..., cluster_dims=...): the tile.kernel's cluster sizes (x, y, z,
/// a DenseI32ArrayAttr); tile-outline-kernels makes them nvvm.cluster_dim.
constexpr llvm::StringLiteral kClusterDimsAttr = "tile.cluster_dims";
/// T.tma_copy(..., cluster_mask=m): the copy's multicast mask (an integer):
/// the lowest block of the mask loads the tile into every block of it.
constexpr llvm::StringLiteral kClusterMaskAttr = "tile.cluster_mask";

/// The alignment, in bytes, of every tensor data pointer a kernel is
/// launched with (the runtime's contract: tlc/runtime/args.py ALIGNMENT).
constexpr int64_t kParamAlignment = 16;

/// The shared scratch a tile.reduce across `groups` warp groups takes: a
/// slot per result element and group, of the partials' type (32 bits for
/// 16-bit floats and small integers, which are combined widened; 64 for
/// 64-bit types).
inline int64_t reduceScratchBytes(ReduceOp reduce, int64_t groups) {
  int64_t slot = reduce.getSrc().getType().getElementTypeBitWidth() > 32 ? 8 : 4;
  return reduce.getDst().getType().getNumElements() * groups * slot;
}

/// Tells the kernels under `root` (gpu.func) that their global memref
/// parameters are kParamAlignment-aligned (memref.assume_alignment).
void assumeParamAlignment(Operation *root);

/// Marks the tensor-map parameters of the llvm.func kernels under `root`
/// byval __grid_constant__ (128 bytes, 64-byte aligned).
void markGridConstantParams(Operation *root);

/// The special register `reg` ("%tid.x", "%ctaid.x", ...) as an i32, read by
/// a volatile `mov`: LLVM neither merges it with another read nor hoists it,
/// so what is computed from it is computed where it is read instead of
/// being kept live (registers) from an earlier read.
Value readRegisterAfresh(OpBuilder &b, Location loc, StringRef reg);

/// Lowers the tile ops inside the outlined kernels of `module`.
LogicalResult convertTileToGPU(ModuleOp module);

/// Assigns shared-memory offsets in every kernel of `module`, failing with a
/// message when a kernel needs more than its target's shared memory.
LogicalResult allocateSharedMemory(ModuleOp module);

/// Assigns layouts to the fragments and parallel loops of `module`.
LogicalResult inferLayouts(ModuleOp module);

/// Writes a #tile.mma on every gemm of `module` that has none.
LogicalResult selectMma(ModuleOp module);

/// Sets `module`'s tile.target to the known architecture `arch`.
LogicalResult setTarget(ModuleOp module, StringRef arch);

/// Rewrites arith.extf/truncf from and to fp8 under `root` to NVVM's paired
/// conversions; fails on other arithmetic on fp8 values.
LogicalResult lowerFp8Conversions(Operation *root);

/// Puts gpu.barrier ops where shared-memory accesses of `module`'s kernels
/// conflict across threads (after tile-allocate-shared-memory).
void insertBarriers(ModuleOp module);

/// Multi-buffers and overlaps the copies of `module`'s pipelined loops;
/// fails when a loop's stages cannot fit in the target's shared memory.
/// With `streamK`, persistent GEMM loops share the last wave's iterations.
LogicalResult pipelineLoops(ModuleOp module, bool streamK = true);

/// How a copy of a global tile into a whole shared buffer becomes a TMA load:
/// the tensor map's box (outermost first): one column block of the buffer
/// (one per 64-column block of an N-major wgmma operand), the load taking
/// them side by side; and the swizzle of the box's rows.
struct TmaCopy {
  SmallVector<int64_t> box;
  int64_t swizzleBytes; ///< of the box's rows: 128, or a whole row of 64 / 32
  /// Set when the buffer has no layout and rows wider than 128 bytes: the
  /// columns of each 128-byte block, the layout the buffer must take.
  int64_t columnBlock = 0;
};

/// The TMA load of `copy` into `buffer`, or nothing when it does not fit
/// TMA's swizzles: a whole 2-d buffer of 128-byte rows (or 128-byte column
/// blocks), or of 64- or 32-byte rows, at least 8 rows, of the tensor's
/// element type, from a tensor TMA can map, unpredicated, not disable_tma.
std::optional<TmaCopy> tmaCopy(CopyOp copy, AllocSharedOp buffer);

/// Lowers each tile.pipeline of `module` to full and empty mbarriers per
/// stage and checks the mbarrier protocol of every kernel.
LogicalResult insertMbarriers(ModuleOp module);

/// Checks the mbarrier ops of `kernel`: expect_tx bytes against the TMA
/// loads completing on that barrier, waits against inits and arrivals.
LogicalResult verifyMbarrierProtocol(KernelOp kernel);

/// The run of elements (a power of two, 16 bytes at most, 1 when none) each
/// thread of `loop` can take at once along its last dimension: a loop over
/// global tensors, shared buffers and fragments (no local buffer; fragments
/// only as f[i, j], indexed by the loop's indices in order, or read at an
/// element the run shares, m[i]: registers, which set no limit),
/// every access indexed by the last loop index in its last position (`x + j`,
/// x of a known multiple of the run) and by the others elsewhere, or a load
/// not indexed by it at all (shared by the run), everything else
/// elementwise arithmetic. tile-infer-layout gives such a loop runs of that
/// many consecutive registers; the lowering moves each run as one vector.
int64_t parallelVectorWidth(ParallelOp loop);

/// How an access at `indices` in the body of a parallel loop whose last
/// index is `j` can move a run of consecutive elements: its other indices
/// do not change with j and its last one is j (`add` null, `limit` none) or
/// j + x for an x j does not change (`add` that sum, `limit` the divisor
/// known of x: runs start on a multiple of the run); nothing otherwise.
struct RunIndex {
  int64_t limit;
  Operation *add;
};
std::optional<RunIndex> runIndex(ValueRange indices, Value j, Block &body);

/// Whether `op` is a float atomic add that a run of registers can make one
/// vector reduction: into a global tensor, relaxed (its result unused),
/// f32 / f16 / bf16, not a lane of T.atomic_addx2 / x4, on a target with
/// vector reductions (TargetFeature::VectorReduce).
bool vectorReducibleAdd(Operation *op);

/// The shared buffers tile-pipeline-loops will multi-buffer in `loop` (the
/// destinations of the copies it runs ahead); empty when it leaves the loop
/// as it is.
SmallVector<Value> pipelinedBuffers(PipelinedOp loop);

/// Gives a shared buffer that copies fill in several pipelined loops (two
/// phases of a kernel reusing its tiles) one allocation per loop, where each
/// loop starts by overwriting all of it, so that every loop can stage its
/// own; tile-allocate-shared-memory gives them the same bytes (the pipeline
/// drains after each loop). tile-select-mma runs it first, so that its gemm
/// depths see the loops as tile-pipeline-loops will pipeline them.
void splitBuffersPerLoop(ModuleOp module);

/// Whether `op` loads an element of a global tensor that nothing in its
/// kernel writes (a paged cache's block table): reading it ahead of the
/// iteration that asked, or in a producer warpgroup, reads the same value.
bool isReadOnlyGlobalLoad(Operation *op);

/// A `stages`-deep copy of `buffer` (its layout with stages, and its
/// discardable attributes), allocated just before it.
AllocSharedOp allocateStages(AllocSharedOp buffer, int64_t stages);

/// Whether `v` depends on the thread index (gpu.thread_id, gpu.lane_id).
bool dependsOnThread(Value v);

/// The op after `op` in its block past pure ops without regions (stage views,
/// index arithmetic) and waits on the program's mbarriers, or null: where a
/// wgmma chain's next gemm would be (tile-select-mma chains gemms across
/// them; tile-allocate-shared-memory ends their operands' lifetimes at the
/// chain's last).
Operation *nextEffectful(Operation *op);

/// The unit attribute on a multi-buffered allocation whose cp.async pipeline
/// waits for all its copies, and meets the block, right after its loop: its
/// bytes are free for other buffers from there on.
inline constexpr llvm::StringLiteral kDrainedAttr = "tile.drained";

/// On a tile.pipelined loop (tile-select-mma): how many wgmma groups the
/// program leaves running over its back edge (gemms with wg_wait = -1 that a
/// T.wait_wgmma of the next iteration completes). tile-pipeline-loops keeps
/// a stage that many iterations longer, as for a gemm's own depth.
inline constexpr llvm::StringLiteral kCarriedWgmmaAttr = "tile.carried_wgmma";

/// Makes the copies of whole shared tiles to global tensors TMA stores
/// (targets with TMA).
LogicalResult selectTmaStores(ModuleOp module);

/// Swizzles the shared buffers read by gemms in `module`.
void swizzleSharedMemory(ModuleOp module);

/// The swizzle (bits, base, shift) that makes ldmatrix and 16-byte row copies
/// of a shared buffer of `type` conflict-free, if it needs one.
std::optional<std::array<int64_t, 3>> chooseSwizzle(MemRefType type);

/// Rewrites kernels whose FullCol row-block gemm is too narrow to split into
/// warpgroup roles written out (FlashMLA's division; sm_90a targets).
void divideWarpgroupRoles(ModuleOp module);

/// Outlines every tile program of `module` into a gpu.func kernel.
LogicalResult outlineKernels(ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::tile

#endif // TLC_PASSES_PASSES_H
