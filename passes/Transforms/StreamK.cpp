//===- StreamK.cpp - Stream-K work of a persistent GEMM kernel ------------===//
//
// The schedule (StreamK.h), with T tiles of K iterations each on G blocks:
//
//   waves = T / G full waves: block c computes tiles c, c + G, ... whole;
//   the R = (T mod G) * K iterations left are shared by S blocks, block
//   c < S taking iterations [c * R / S, (c + 1) * R / S) of them, when a
//   share plus the fix-up (kStreamKFixupIterations) is at most a tile's K
//   iterations; else every tile is data-parallel (T / G rounded up waves).
//   S (streamKBlocks) is (T mod G) * q where q = G / (T mod G) splits each
//   tile (at most K / kStreamKMinIterations) cost a share at most 1/8
//   longer than spreading R over all blocks: the shares then start at the
//   same K iteration in every tile, so the blocks working at once read the
//   same K slices of A and B, which the L2 cache serves to all of them.
//   Else S = max(T mod G, min(G, R / kStreamKMinIterations)).
//
// A block's pieces are its full-wave tiles, then its share cut at tile
// boundaries. A tile's first iterations are the last piece of a block's
// share; that block owns the tile (adds the partials, runs the epilogue).
// The blocks after it that share the tile start their shares with it, so
// each writes its partials in its first piece, before any wait of its own.
// Every share is nonempty (R >= S).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/StreamK.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

// The schedule's arithmetic is 32-bit (64-bit divisions are long sequences
// in SASS and held dozens of registers across the main loop); the
// constructor falls back to data-parallel tiles where 32 bits may not hold
// its products.
Type i32(OpBuilder &b) { return b.getI32Type(); }
Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i32(b), v);
}
Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, i32(b), index);
}
Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value div(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::DivSIOp::create(b, loc, x, y);
}
Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value select(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

/// A unique argument name of `func` starting with `stem`.
std::string freshName(func::FuncOp func, StringRef stem) {
  llvm::StringSet<> taken;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttr))
      taken.insert(name.getValue());
  std::string name = stem.str();
  for (int n = 1; taken.contains(name); ++n)
    name = (stem + "_" + Twine(n)).str();
  return name;
}

Value addScratch(func::FuncOp func, StringRef stem, MemRefType type, bool zeroFill) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  SmallVector<Attribute> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(b.getStringAttr(type.isDynamicDim(d) ? kSmCountSymbol : ""));
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr(TileDialect::kArgNameAttr, b.getStringAttr(freshName(func, stem))),
      b.getNamedAttr(TileDialect::kArgDimsAttr, b.getArrayAttr(dims)),
      b.getNamedAttr(kArgScratchAttr, b.getUnitAttr())};
  if (zeroFill)
    attrs.push_back(b.getNamedAttr(kArgZeroFillAttr, b.getUnitAttr()));
  unsigned at = func.getNumArguments();
  if (failed(func.insertArgument(at, type, b.getDictionaryAttr(attrs), func.getLoc())))
    return Value();
  return func.getArgument(at);
}

/// Whether `op` (or an op inside it) may write global memory.
bool writesGlobal(Operation *op) {
  WalkResult found = op->walk([](Operation *inner) {
    auto global = [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && getPlace(type) == Place::Global;
    };
    if ((isa<CopyOp>(inner) && global(cast<CopyOp>(inner).getDst())) ||
        (isa<memref::StoreOp>(inner) && global(cast<memref::StoreOp>(inner).getMemRef())) ||
        (isa<memref::AtomicRMWOp>(inner) &&
         global(cast<memref::AtomicRMWOp>(inner).getMemref())) ||
        isa<TmaStoreOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

} // namespace

StreamKSchedule::StreamKSchedule(OpBuilder &b, Location loc, Value tiles, Value trips,
                                 bool afresh)
    : trips(trips) {
  block = afresh ? readRegisterAfresh(b, loc, "%ctaid.x")
                 : toI32(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  cta = toIndex(b, loc, block);
  ctas = afresh ? readRegisterAfresh(b, loc, "%nctaid.x")
                : toI32(b, loc, gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  // Shared only where the products below fit in 32 bits: T * K and G * G * K.
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) { return arith::IndexCastOp::create(b, loc, i64, v); };
  Value ctas64 = arith::ExtUIOp::create(b, loc, i64, ctas);
  Value limit = arith::ConstantIntOp::create(b, loc, i64, int64_t(1) << 31);
  Value fits = arith::AndIOp::create(
      b, loc, cmp(b, loc, arith::CmpIPredicate::slt, mul(b, loc, wide(tiles), wide(trips)), limit),
      cmp(b, loc, arith::CmpIPredicate::slt,
          mul(b, loc, mul(b, loc, ctas64, ctas64), wide(trips)), limit));
  tiles32 = toI32(b, loc, tiles);
  trips32 = toI32(b, loc, trips);
  Value zero = cst(b, loc, 0), one = cst(b, loc, 1);
  Value fullWaves = div(b, loc, tiles32, ctas);
  Value leftTiles = sub(b, loc, tiles32, mul(b, loc, fullWaves, ctas));
  Value left = mul(b, loc, leftTiles, trips32);
  // S blocks share the last wave, each at least kStreamKMinIterations; it
  // is worth it when a share and the fix-up take less than a whole tile.
  // streamKBlocks below, in i32 arithmetic.
  Value minIters = cst(b, loc, kStreamKMinIterations);
  auto ceilDiv = [&](Value x, Value y) {
    return div(b, loc, add(b, loc, x, sub(b, loc, y, one)), y);
  };
  Value spread = arith::MaxSIOp::create(
      b, loc, leftTiles,
      arith::MinSIOp::create(b, loc, ctas, div(b, loc, left, minIters)));
  Value splits = arith::MinSIOp::create(
      b, loc, div(b, loc, ctas, arith::MaxSIOp::create(b, loc, leftTiles, one)),
      div(b, loc, trips32, minIters));
  Value alignedShare = ceilDiv(trips32, arith::MaxSIOp::create(b, loc, splits, one));
  Value spreadShare = ceilDiv(left, arith::MaxSIOp::create(b, loc, spread, one));
  Value aligned = arith::AndIOp::create(
      b, loc, cmp(b, loc, arith::CmpIPredicate::sge, splits, cst(b, loc, 2)),
      cmp(b, loc, arith::CmpIPredicate::sle, mul(b, loc, cst(b, loc, 8), alignedShare),
          mul(b, loc, cst(b, loc, 9), spreadShare)));
  this->splits = arith::MaxSIOp::create(b, loc, splits, one);
  Value blocks = select(b, loc, aligned, mul(b, loc, leftTiles, splits), spread);
  Value divisor = arith::MaxSIOp::create(b, loc, blocks, one);
  Value share = ceilDiv(left, divisor);
  Value shared = arith::AndIOp::create(
      b, loc, fits,
      cmp(b, loc, arith::CmpIPredicate::sle,
          add(b, loc, share, cst(b, loc, kStreamKFixupIterations)), trips32));
  Value ownTiles =
      div(b, loc, add(b, loc, sub(b, loc, tiles32, block), sub(b, loc, ctas, one)), ctas);
  waves = select(b, loc, shared, fullWaves, ownTiles);
  Value remTiles = select(b, loc, shared, leftTiles, zero);
  base = mul(b, loc, mul(b, loc, fullWaves, ctas), trips32);
  rest = mul(b, loc, remTiles, trips32);
  streamBlocks = select(b, loc, shared, blocks, zero);
  Value alignedShares = arith::AndIOp::create(b, loc, shared, aligned);
  Value manySplits =
      cmp(b, loc, arith::CmpIPredicate::sge, splits, cst(b, loc, kStreamKScatterSplits));
  scatter = arith::AndIOp::create(b, loc, alignedShares, manySplits);
  start = add(b, loc, base, shareBound(b, loc, block));
  end = add(b, loc, base, shareEnd(b, loc, block));
  Value nonEmpty = cmp(b, loc, arith::CmpIPredicate::sgt, end, start);
  Value firstTile = div(b, loc, start, trips32);
  Value lastTile = div(b, loc, sub(b, loc, end, one), trips32);
  Value streamPieces = select(b, loc, nonEmpty,
                              add(b, loc, sub(b, loc, lastTile, firstTile), one), zero);
  count = toIndex(b, loc, add(b, loc, waves, streamPieces));
}

Value StreamKSchedule::shareBound(OpBuilder &b, Location loc, Value c) const {
  Value blocks = arith::MinSIOp::create(b, loc, c, streamBlocks);
  Value divisor = arith::MaxSIOp::create(b, loc, streamBlocks, cst(b, loc, 1));
  return div(b, loc, mul(b, loc, blocks, rest), divisor);
}

Value StreamKSchedule::shareEnd(OpBuilder &b, Location loc, Value c) const {
  return shareBound(b, loc, add(b, loc, c, cst(b, loc, 1)));
}

Value StreamKSchedule::tileStart(OpBuilder &b, Location loc, Value tile) const {
  return sub(b, loc, mul(b, loc, tile, trips32), base);
}

StreamKPiece StreamKSchedule::piece(OpBuilder &b, Location loc, Value index) const {
  Value zero = cst(b, loc, 0);
  Value u = toI32(b, loc, index);
  Value inWaves = cmp(b, loc, arith::CmpIPredicate::slt, u, waves);
  // A full wave's tile: c + u * G, every iteration.
  Value waveTile = add(b, loc, block, mul(b, loc, u, ctas));
  // The share's i-th tile, cut to the share.
  Value i = sub(b, loc, u, waves);
  Value shareTile = add(b, loc, div(b, loc, start, trips32), i);
  Value tileFirst = mul(b, loc, shareTile, trips32);
  Value shareBegin = arith::MaxSIOp::create(b, loc, sub(b, loc, start, tileFirst), zero);
  Value shareEndIt = arith::MinSIOp::create(b, loc, trips32, sub(b, loc, end, tileFirst));
  StreamKPiece p;
  p.tile = toIndex(b, loc, select(b, loc, inWaves, waveTile, shareTile));
  p.begin = toIndex(b, loc, select(b, loc, inWaves, zero, shareBegin));
  p.end = toIndex(b, loc, select(b, loc, inWaves, trips32, shareEndIt));
  Value waveK = mul(b, loc, u, trips32);
  Value shareK = add(b, loc, mul(b, loc, waves, trips32),
                     sub(b, loc, add(b, loc, tileFirst, shareBegin), start));
  p.firstK = toIndex(b, loc, select(b, loc, inWaves, waveK, shareK));
  return p;
}

SmallVector<AllocFragmentOp> mlir::tile::streamKAccumulators(PipelinedOp loop,
                                                             ArrayRef<Operation *> copies) {
  auto kernel = cast<KernelOp>(loop->getParentOp());
  Block &kernelBody = kernel.getBody().front();
  SmallVector<AllocFragmentOp> accs;
  for (Operation &op : loop.getBody().front()) {
    if (llvm::is_contained(copies, &op) || isPure(&op))
      continue;
    auto gemm = dyn_cast<GemmOp>(op);
    auto acc = gemm ? gemm.getC().getDefiningOp<AllocFragmentOp>() : AllocFragmentOp();
    if (!acc || gemm.getClearAccum() || acc->getBlock() != &kernelBody ||
        !acc.getType().getElementType().isF32() || !acc.getLayout() ||
        llvm::any_of(acc->getUsers(), [](Operation *u) { return isa<ViewOp>(u); }))
      return {}; // (accesses through a view are not followed)
    if (!llvm::is_contained(accs, acc))
      accs.push_back(acc);
  }
  for (AllocFragmentOp acc : accs) {
    int fills = 0;
    for (OpOperand &use : acc->getUses()) {
      Operation *user = kernelBody.findAncestorOpInBlock(*use.getOwner());
      if (!user || loop->isBeforeInBlock(user))
        continue; // after the loop: the epilogue
      if (user == loop.getOperation()) {
        auto gemm = dyn_cast<GemmOp>(use.getOwner());
        if (!gemm || gemm.getC() != acc.getResult() || gemm.getA() == acc.getResult() ||
            gemm.getB() == acc.getResult())
          return {};
        continue;
      }
      auto fill = dyn_cast<FillOp>(use.getOwner());
      if (!fill || !matchPattern(fill.getValue(), m_AnyZeroFloat()))
        return {};
      ++fills;
    }
    if (fills != 1)
      return {};
  }
  for (Operation &op : kernelBody) {
    if (&op == loop.getOperation())
      break;
    if (writesGlobal(&op))
      return {};
  }
  return accs;
}

std::optional<bool> mlir::tile::streamKPaysAtCompileTime(KernelOp kernel, PipelinedOp loop) {
  int64_t tiles = 1;
  bool known = true, line = false; // line: a single row or column of tiles
  for (Value size : kernel.getGrid()) {
    std::optional<int64_t> n = getConstantIntValue(size);
    line |= n && *n == 1;
    known &= n.has_value();
    tiles *= n.value_or(1);
  }
  if (line && (!known || tiles * kLineTilesPerSMs > kStreamKPlanningSMs))
    return false;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!known || !lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return streamKPays(tiles, llvm::divideCeil(std::max<int64_t>(*ub - *lb, 0), *step),
                     kStreamKPlanningSMs);
}

bool mlir::tile::streamKMayPay(KernelOp kernel, PipelinedOp loop) {
  return streamKPaysAtCompileTime(kernel, loop).value_or(true);
}

Value StreamKSchedule::sharing(OpBuilder &b, Location loc) const {
  return cmp(b, loc, arith::CmpIPredicate::sgt, streamBlocks, cst(b, loc, 0));
}

int64_t mlir::tile::streamKBlocks(int64_t leftTiles, int64_t trips, int64_t sms) {
  if (leftTiles <= 0)
    return 0;
  int64_t left = leftTiles * trips;
  int64_t spread = std::max(leftTiles, std::min(sms, left / kStreamKMinIterations));
  int64_t splits = std::min(sms / leftTiles, trips / kStreamKMinIterations);
  if (splits >= 2 &&
      8 * llvm::divideCeil(trips, splits) <= 9 * llvm::divideCeil(left, spread))
    return leftTiles * splits;
  return spread;
}

bool mlir::tile::streamKScatters(int64_t tiles, int64_t trips, int64_t sms) {
  int64_t leftTiles = tiles % sms;
  if (!streamKPays(tiles, trips, sms) || leftTiles <= 0 || tiles >= sms)
    return false;
  int64_t splits = std::min(sms / leftTiles, trips / kStreamKMinIterations);
  return splits >= kStreamKScatterSplits &&
         streamKBlocks(leftTiles, trips, sms) == leftTiles * splits;
}

std::optional<bool> mlir::tile::streamKScattersAtCompileTime(KernelOp kernel, PipelinedOp loop) {
  std::optional<bool> pays = streamKPaysAtCompileTime(kernel, loop);
  if (!pays)
    return std::nullopt;
  if (!*pays)
    return false;
  int64_t tiles = 1;
  for (Value size : kernel.getGrid())
    tiles *= *getConstantIntValue(size);
  int64_t trips = llvm::divideCeil(
      std::max<int64_t>(*getConstantIntValue(loop.getUpperBound()) -
                            *getConstantIntValue(loop.getLowerBound()),
                        0),
      *getConstantIntValue(loop.getStep()));
  return streamKScatters(tiles, trips, kStreamKPlanningSMs);
}

bool mlir::tile::streamKPays(int64_t tiles, int64_t trips, int64_t sms) {
  int64_t left = tiles % sms * trips;
  int64_t divisor = std::max<int64_t>(streamKBlocks(tiles % sms, trips, sms), 1);
  return left > 0 && (left + divisor - 1) / divisor + kStreamKFixupIterations <= trips;
}

StreamKScratch mlir::tile::addStreamKScratch(func::FuncOp func,
                                             ArrayRef<AllocFragmentOp> accumulators) {
  StreamKScratch scratch;
  for (size_t n = 0; n < accumulators.size(); ++n) {
    AllocFragmentOp acc = accumulators[n];
    SmallVector<int64_t> shape{ShapedType::kDynamic, acc.getType().getNumElements()};
    scratch.partials.push_back(
        addScratch(func, ("streamk_partials" + Twine(n)).str(),
                   MemRefType::get(shape, acc.getType().getElementType()), false));
  }
  Builder b(func.getContext());
  scratch.flags = addScratch(func, "streamk_flags",
                             MemRefType::get({ShapedType::kDynamic}, b.getI32Type()), true);
  return scratch;
}

void mlir::tile::finishStreamKPiece(OpBuilder &b, Location loc,
                                    const StreamKSchedule &schedule, Value u,
                                    ArrayRef<AllocFragmentOp> accumulators,
                                    const StreamKScratch &scratch, bool mayScatter,
                                    function_ref<void(OpBuilder &)> epilogue) {
  StreamKPiece piece = schedule.piece(b, loc, u);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = cst(b, loc, 1);
  // The piece with the tile's first iteration owns the tile (it is the last
  // piece of its block's share); the blocks after it that share the tile
  // began their shares with the rest of it, so their partials are ready
  // early: waiting for them never waits for a wait of theirs.
  Value owns = cmp(b, loc, arith::CmpIPredicate::eq, piece.begin, zero);
  Value inside = cmp(b, loc, arith::CmpIPredicate::ne, piece.begin, zero); // !owns
  Value partTile = cmp(b, loc, arith::CmpIPredicate::slt, piece.end, schedule.trips);
  Value shared = arith::AndIOp::create(b, loc, owns, partTile);
  // Aligned shares, split kStreamKScatterSplits ways or more (where known
  // counts do: mayScatter): every block of the tile holds one piece of it,
  // begun together. Each stores its partials, waits for the others', sums
  // its slice of them and raises its flag again; the owner gathers the sums
  // (the whole sums: its own partials are in them).
  scf::IfOp group;
  if (mayScatter) {
    Value partial = arith::OrIOp::create(b, loc, inside, partTile);
    Value grouped = arith::AndIOp::create(b, loc, schedule.scatter, partial);
    group = scf::IfOp::create(b, loc, grouped, /*withElseRegion=*/true);
    OpBuilder gb = OpBuilder::atBlockTerminator(group.thenBlock());
    Value firstBlock = mul(gb, loc, div(gb, loc, schedule.block, schedule.splits), schedule.splits);
    Value first = toIndex(gb, loc, firstBlock);
    Value count = toIndex(gb, loc, schedule.splits);
    Value rank = toIndex(gb, loc, sub(gb, loc, schedule.block, firstBlock));
    for (auto [acc, partials] : llvm::zip(accumulators, scratch.partials))
      StorePartialsOp::create(gb, loc, AllocFragmentOp(acc).getResult(), partials,
                              schedule.cta);
    SemaphoreSignalOp::create(gb, loc, scratch.flags, schedule.cta, 1);
    SemaphoreWaitOp::create(gb, loc, scratch.flags, first, count, 1);
    for (Value partials : scratch.partials)
      ReducePartialsOp::create(gb, loc, partials, first, count, rank);
    SemaphoreSignalOp::create(gb, loc, scratch.flags, schedule.cta, 2);
    auto gather = scf::IfOp::create(gb, loc, owns, /*withElseRegion=*/false);
    OpBuilder ob = OpBuilder::atBlockTerminator(gather.thenBlock());
    SemaphoreWaitOp::create(ob, loc, scratch.flags, first, count, 2);
    for (auto [acc, partials] : llvm::zip(accumulators, scratch.partials))
      AddPartialsOp::create(ob, loc, partials, first, count, AllocFragmentOp(acc).getResult());
  }
  // Otherwise the owner adds the partials of the blocks after it in turn.
  OpBuilder sb = group ? OpBuilder::atBlockTerminator(group.elseBlock()) : b;
  auto gather = scf::IfOp::create(sb, loc, shared, /*withElseRegion=*/false);
  {
    OpBuilder gb = OpBuilder::atBlockTerminator(gather.thenBlock());
    Value tileEnd = schedule.tileStart(gb, loc, add(gb, loc, toI32(gb, loc, piece.tile), one));
    Type type = i32(gb);
    auto blocks = scf::WhileOp::create(gb, loc, TypeRange{type},
                                       ValueRange{add(gb, loc, schedule.block, one)});
    Block *before = gb.createBlock(&blocks.getBefore(), {}, {type}, {loc});
    Value c = before->getArgument(0);
    // Block c's share starts at the end of block c - 1's.
    Value more = cmp(gb, loc, arith::CmpIPredicate::slt,
                     schedule.shareEnd(gb, loc, sub(gb, loc, c, one)), tileEnd);
    scf::ConditionOp::create(gb, loc, more, ValueRange{c});
    Block *after = gb.createBlock(&blocks.getAfter(), {}, {type}, {loc});
    Value other = after->getArgument(0);
    Value slot = toIndex(gb, loc, other);
    SemaphoreWaitOp::create(gb, loc, scratch.flags, slot, Value(), 1);
    for (auto [acc, partials] : llvm::zip(accumulators, scratch.partials))
      AddPartialsOp::create(gb, loc, partials, slot, Value(), AllocFragmentOp(acc).getResult());
    scf::YieldOp::create(gb, loc, ValueRange{add(gb, loc, other, one)});
  }
  auto notOwner = scf::IfOp::create(sb, loc, inside, /*withElseRegion=*/false);
  OpBuilder pb = OpBuilder::atBlockTerminator(notOwner.thenBlock());
  for (auto [acc, partials] : llvm::zip(accumulators, scratch.partials))
    StorePartialsOp::create(pb, loc, AllocFragmentOp(acc).getResult(), partials, schedule.cta);
  SemaphoreSignalOp::create(pb, loc, scratch.flags, schedule.cta, 1);

  auto finish = scf::IfOp::create(b, loc, owns, /*withElseRegion=*/false);
  OpBuilder eb = OpBuilder::atBlockTerminator(finish.thenBlock());
  epilogue(eb);
}
