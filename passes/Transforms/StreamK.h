//===- StreamK.h - Stream-K work of a persistent GEMM kernel ----*- C++ -*-===//
//
// A persistent kernel walks its output tiles on min(tiles, SMs) blocks.
// When the tiles do not fill the last wave (fewer tiles than SMs: small or
// K-heavy GEMMs; or a remainder after full waves), the blocks of that wave
// idle while the others finish whole tiles. Stream-K gives every block an
// equal share of the remaining tiles' K iterations instead: a block whose
// share starts inside a tile stores its partial sums of that tile (fp32, as
// the accumulator holds them) and raises a flag, first thing; the block
// that computes the tile's first iterations (at the end of its share) waits
// for those flags, adds the partials (in a fixed order: the result does not
// depend on timing) and runs the epilogue. Where each shared tile is split
// in 4 or more equal aligned shares (one piece per block; built only for
// counts known at compile time to do so, streamKScattersAtCompileTime), all
// of a tile's blocks store their partials, each sums one slice of them
// (tile.reduce_partials, in block order) and the owner gathers the slices:
// every block reads one tile's worth of partials instead of the owner
// reading them all. Waits only point to blocks of
// higher index for partials they write before they wait for anything, so
// with all blocks resident at once (one per SM) nothing waits in a cycle.
//
// tile-pipeline-loops builds it for the warp-specialized persistent loop:
// both roles walk the same pieces (an output tile and a range of its K
// iterations), the mbarrier iteration count running on across pieces.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_PASSES_TRANSFORMS_STREAMK_H
#define TLC_PASSES_TRANSFORMS_STREAMK_H

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tile {

/// On a tile.kernel whose persistent loop is stream-K: it is launched on
/// one block per SM whatever its tile count (tile-outline-kernels).
constexpr llvm::StringLiteral kStreamKAttr = "tile.stream_k";

/// On a scratch argument (tile.scratch): the launcher zeroes it before every
/// call (stream-K's flags). Its metadata entry says "zero_fill".
constexpr llvm::StringLiteral kArgZeroFillAttr = "tile.zero_fill";

/// The size symbol of the device's multiprocessor count, in scratch sizes
/// (as in persistent grids).
constexpr llvm::StringLiteral kSmCountSymbol = "__sm_count__";

/// The fewest K iterations a block's stream-K share has (fewer blocks share
/// the rest when it is small).
constexpr int64_t kStreamKMinIterations = 8;

/// What sharing a tile costs, in K iterations: the partial tiles' stores,
/// the flags' round trips and the owner's loads, and the stream-K kernel's
/// longer code. Stream-K is used only where a share plus this is at most a
/// whole tile's iterations. Measured on the H200 (bench/gemm.md, session
/// 14): a share of 61 of 125 iterations gained 12%, 47 of 64 lost 9%, 66 of
/// 128 broke even. With 8 instead (2026-12-04, aligned shares), 1024^3 in
/// 128 x 128 tiles (shares of 8 of 16) lost 42% and 1000 x 3000 x 4096 in
/// 128 x 256 (47 of 64) 12%.
constexpr int64_t kStreamKFixupIterations = 48;

/// The fewest aligned shares of a tile whose blocks reduce-scatter their
/// partials: its two extra flag rounds cost about what the owner's serial
/// adds of 3-4 partials do. Measured on the H200 (2026-12-04, session 21):
/// 16 shares 1.23-1.34x faster than serial adds, 2 shares 17% slower.
constexpr int64_t kStreamKScatterSplits = 4;

/// The multiprocessor count the compiler plans for when the tile and
/// iteration counts are known at compile time (sm_90a's H100 SXM and H200:
/// 132): where stream-K would not pay on it, the kernel is compiled without
/// it. The kernel itself splits by the count it runs on.
constexpr int64_t kStreamKPlanningSMs = 132;

/// The accumulators of `loop` when its iterations can be split between
/// blocks and summed (stream-K): the body only copies (`copies`, its
/// producers), computes pure values and accumulates wgmma gemms into fp32 fragments of
/// the kernel that are zero-filled before the loop and touched by nothing
/// else before or in it; nothing before the loop writes global memory (a
/// piece of a tile runs it again). Empty otherwise.
SmallVector<AllocFragmentOp> streamKAccumulators(PipelinedOp loop,
                                                 ArrayRef<Operation *> copies);

/// The most tiles, as a share of kStreamKPlanningSMs, of a grid of a single
/// row or column of tiles that takes stream-K. Such a grid streams the other
/// operand once and is bound by memory where its tiles keep most SMs busy
/// (a decode shape's M = 64 or 128 in 64 to 128 tiles: sharing its K loop
/// measured 4-19% slower on the H200, 2026-12-03); one of at most 132 / 8 =
/// 16 tiles (a K-heavy GEMM whose M fits one block row: 256 x 1024 x 32768
/// in 256 x 128 tiles is 8) would leave at least seven SMs in eight idle.
constexpr int64_t kLineTilesPerSMs = 8;

/// Whether stream-K may pay for `loop`'s persistent kernel: unknown tile or
/// iteration counts may; known ones must on kStreamKPlanningSMs blocks. A
/// grid of a single row or column of tiles takes it only with known counts
/// and at most kStreamKPlanningSMs / kLineTilesPerSMs tiles.
bool streamKMayPay(KernelOp kernel, PipelinedOp loop);

/// Whether stream-K pays for `loop`'s kernel when its tile and iteration
/// counts are known at compile time (streamKMayPay's test); none when they
/// are not, and the kernel decides at each launch.
std::optional<bool> streamKPaysAtCompileTime(KernelOp kernel, PipelinedOp loop);

/// Whether `tiles` tiles of `trips` K iterations on `sms` blocks would share
/// the last wave (the schedule's own test, at compile time).
bool streamKPays(int64_t tiles, int64_t trips, int64_t sms);

/// How many of `sms` blocks share `leftTiles` tiles of `trips` K iterations
/// (StreamK.cpp's header: aligned splits of each tile, or the iterations
/// spread over the blocks); the kernel computes the same at run time.
int64_t streamKBlocks(int64_t leftTiles, int64_t trips, int64_t sms);

/// One piece of a block's work: output tile `tile` (linear, before
/// rasterization), its K iterations [begin, end) of `trips`, the first of
/// them the block's iteration `firstK` (its mbarrier count).
struct StreamKPiece {
  Value tile, begin, end, firstK;
};

/// The pieces of this block (gpu.block_id x of gpu.grid_dim x blocks):
/// the full waves' tiles data-parallel, then its share of the rest. Where
/// sharing does not pay (short K loops), every tile is data-parallel.
class StreamKSchedule {
public:
  /// `afresh`: the block index and count are read by opaque asm, so that
  /// LLVM computes the schedule again where it is built instead of keeping
  /// the values of an earlier copy live (registers across the main loop).
  StreamKSchedule(OpBuilder &b, Location loc, Value tiles, Value trips, bool afresh = false);

  /// How many pieces this block has.
  Value pieces() const { return count; }
  /// Whether the blocks share the last wave's iterations (i1): else every
  /// tile is data-parallel, the tiles of the plain persistent loop.
  Value sharing(OpBuilder &b, Location loc) const;
  /// Piece `u` (0 <= u < pieces()).
  StreamKPiece piece(OpBuilder &b, Location loc, Value u) const;
  /// The end of block `c`'s stream-K share (i32), relative to the first
  /// stream-K iteration (its start is the end of block c - 1's).
  Value shareEnd(OpBuilder &b, Location loc, Value c) const;
  /// The first iteration of `tile` (i32), relative to the first stream-K
  /// iteration.
  Value tileStart(OpBuilder &b, Location loc, Value tile) const;

  Value cta, trips; ///< this block's index, the iterations of a tile (index)
  Value block;      ///< this block's index (i32)
  /// Whether each shared tile is split in `splits` equal, aligned shares,
  /// at least kStreamKScatterSplits of them (i1; false where nothing is
  /// shared): then block c's share is one piece of tile c / splits, and the
  /// tile's blocks c / splits * splits + r, r < splits, reduce their
  /// partials together (a reduce-scatter) instead of the owner adding them
  /// one after another.
  Value scatter, splits;

private:
  /// The start of block `c`'s share, relative to the first stream-K iteration.
  Value shareBound(OpBuilder &b, Location loc, Value c) const;

  Value tiles32, trips32, ctas, waves, base, streamBlocks, rest, start, end, count;
};

/// The scratch a stream-K kernel's blocks exchange partial tiles through:
/// one [SMs x elements] tensor per accumulator (tile.store_partials rows),
/// and the int32 flags, one per
/// block, zeroed by the launcher.
struct StreamKScratch {
  SmallVector<Value> partials;
  Value flags;
};

/// Appends the scratch arguments for `accumulators` to `func`.
StreamKScratch addStreamKScratch(func::FuncOp func, ArrayRef<AllocFragmentOp> accumulators);

/// Whether `tiles` tiles of `trips` K iterations on `sms` blocks, fewer
/// tiles than blocks, would split each tile in kStreamKScatterSplits or
/// more aligned shares (their blocks reduce-scatter the partials:
/// StreamKSchedule::scatter).
bool streamKScatters(int64_t tiles, int64_t trips, int64_t sms);

/// For `loop`'s kernel with tile and iteration counts known at compile
/// time: whether it would reduce-scatter on kStreamKPlanningSMs blocks;
/// none when the counts are known only at run time.
///
/// Only such kernels carry the reduce-scatter fix-up beside the serial one:
/// with both in the tile loop, the data-parallel tiles of a 8192^3 GEMM ran
/// 9% slower on the H200 (2026-12-04, session 21, with M known and with M
/// dynamic alike; the cause was not found), so kernels with full waves of
/// tiles or counts known only at run time keep the serial fix-up alone.
std::optional<bool> streamKScattersAtCompileTime(KernelOp kernel, PipelinedOp loop);

/// At `b`: the block holds the partial sums of piece `u` of `schedule` in
/// `accumulators`. A piece
/// from the tile's first iteration owns the tile: when it stops before the
/// tile's end, it waits for each later block that computed the rest and
/// adds that block's partials; then it runs `epilogue`. Any other piece
/// stores its partials for the owner and signals it. Where the schedule
/// scatters, the tile's blocks reduce-scatter instead; `mayScatter` false
/// leaves that path out (counts known not to scatter: the serial fix-up is
/// correct for any schedule, so a kernel run on another SM count than
/// planned stays correct).
void finishStreamKPiece(OpBuilder &b, Location loc, const StreamKSchedule &schedule, Value u,
                        ArrayRef<AllocFragmentOp> accumulators,
                        const StreamKScratch &scratch, bool mayScatter,
                        function_ref<void(OpBuilder &)> epilogue);

} // namespace mlir::tile

#endif // TLC_PASSES_TRANSFORMS_STREAMK_H
