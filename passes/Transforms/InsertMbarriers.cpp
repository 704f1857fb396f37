//===- InsertMbarriers.cpp - mbarriers for warp-specialized pipelines -----===//
//
// tile-pipeline-loops records a warp-specialized loop's synchronisation as a
// tile.pipeline: a producer thread acquires iteration k's stage
// (tile.producer_acquire) and fills it (tile.tma_load); the consumers wait
// for it (tile.consumer_wait) and release it (tile.consumer_release). This
// pass makes that mbarriers:
//
//   full[s]  (1 arrival + the stage's TMA bytes), empty[s] (1 arrival per
//   consumer warp), for s < S, initialised by thread 0 where the
//   tile.pipeline is, the block meeting after;
//   iteration k uses stage s = k mod S in round r = k / S, parity r & 1:
//   acquire:  try_wait.parity empty[s], (r & 1) ^ 1  (round 0: at once)
//             arrive.expect_tx full[s], bytes of the loads that follow
//   tma_load: cp.async.bulk.tensor per column block, completing on full[s]
//   wait:     try_wait.parity full[s], r & 1
//   release:  lane 0 of each warp arrives on empty[s]
//
// The protocol is checked twice, so that a mistake is a compile-time error
// rather than a hang on the GPU: before lowering, on the pipeline's ops (a
// load not preceded by its iteration's acquire, an acquire with no load,
// waits with nothing loading, a producer with no consumer releasing,
// releases with no waits; and the arrivals per phase, from the threads the
// conditions around each op let through: one thread per acquire, one lane
// per consumer warp per release, one of each per block); after it, on the mbarrier ops of every kernel
// (expect_tx bytes against the TMA loads completing on that barrier, every
// wait against an init with a positive count and an arrival).
//
// The program's own mbarriers (T.alloc_barrier: tile.init_barriers,
// tile.barrier_wait, tile.barrier_arrive) are lowered here too, and their
// waits checked the same way after it; their protocol is the program's. On
// sm_90a a tile.ws body's copies of global tiles just before an arrival
// become TMA loads completing on that barrier.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEINSERTMBARRIERS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-insert-mbarriers"

namespace {

/// mbarrier.try_wait's suspend-time hint (ns) before it re-polls.
constexpr int64_t kWaitTicks = 10000000;

/// The ops of one tile.pipeline, in program order.
struct PipelineUses {
  SmallVector<ProducerAcquireOp> acquires;
  SmallVector<TmaLoadOp> loads;
  SmallVector<ConsumerWaitOp> waits;
  SmallVector<ConsumerReleaseOp> releases;
  /// The acquire each load follows.
  DenseMap<Operation *, ProducerAcquireOp> loadAcquire;
};

/// The tile.producer_acquire of `pipe` that `load` follows in its block, if
/// any (the nearest before it).
ProducerAcquireOp acquireBefore(TmaLoadOp load) {
  for (Operation *op = load->getPrevNode(); op; op = op->getPrevNode())
    if (auto acquire = dyn_cast<ProducerAcquireOp>(op))
      if (acquire.getPipeline() == load.getPipeline())
        return acquire;
  return ProducerAcquireOp();
}

/// The value of index/integer `v` in thread `tid` (threadIdx.x), when it is
/// computed from constants and the thread index by integer arithmetic.
std::optional<int64_t> valueIn(Value v, int64_t tid) {
  if (auto id = v.getDefiningOp<gpu::ThreadIdOp>())
    return id.getDimension() == gpu::Dimension::x ? std::optional<int64_t>(tid) : std::nullopt;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp>(op))
    return valueIn(op->getOperand(0), tid);
  if (op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> a = valueIn(op->getOperand(0), tid);
  std::optional<int64_t> b = valueIn(op->getOperand(1), tid);
  if (!a || !b)
    return std::nullopt;
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq: return *a == *b;
    case arith::CmpIPredicate::ne: return *a != *b;
    case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: return *a < *b;
    case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: return *a <= *b;
    case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: return *a > *b;
    case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: return *a >= *b;
    }
  }
  if (isa<arith::AddIOp>(op)) return *a + *b;
  if (isa<arith::SubIOp>(op)) return *a - *b;
  if (isa<arith::MulIOp>(op)) return *a * *b;
  if (isa<arith::AndIOp>(op)) return *a & *b;
  if (isa<arith::OrIOp>(op)) return *a | *b;
  if (isa<arith::XOrIOp>(op)) return *a ^ *b;
  if (*b != 0 && isa<arith::DivUIOp, arith::DivSIOp>(op)) return *a / *b;
  if (*b != 0 && isa<arith::RemUIOp, arith::RemSIOp>(op)) return *a % *b;
  return std::nullopt;
}

/// The threads of the block that run `op`, from the thread-dependent
/// conditions of the scf.ifs around it (a condition that does not depend on
/// the thread index lets all or none of them through, which changes no
/// count of arrivals per phase); fails at `op` on one it cannot evaluate.
FailureOr<llvm::BitVector> threadsRunning(Operation *op, int64_t total) {
  llvm::BitVector threads(total, true);
  for (Operation *child = op, *parent = op->getParentOp(); parent && !isa<KernelOp>(parent);
       child = parent, parent = parent->getParentOp()) {
    auto branch = dyn_cast<scf::IfOp>(parent);
    if (!branch)
      continue;
    Value cond = branch.getCondition();
    if (!dependsOnThread(cond))
      continue;
    bool inThen = branch.getThenRegion().isAncestor(child->getParentRegion());
    for (int64_t t = 0; t < total; ++t) {
      std::optional<int64_t> taken = valueIn(cond, t);
      if (!taken)
        return op->emitOpError("runs under a condition on the thread index that "
                               "tile-insert-mbarriers cannot evaluate, so the arrivals on its "
                               "mbarrier cannot be counted");
      if ((*taken != 0) != inThen)
        threads.reset(t);
    }
  }
  return threads;
}

/// Checks that each phase of each barrier gets exactly the arrivals its
/// init counts: one thread per acquire (its expect_tx is the full barrier's
/// one arrival), lane 0 of each of the `consumers / 32` consumer warps per
/// release (the empty barrier's count), and one acquire and one release of
/// a pipeline in any block.
LogicalResult checkArrivals(PipelineOp pipe, const PipelineUses &uses) {
  auto kernel = pipe->getParentOfType<KernelOp>();
  int64_t total = kernel.getThreads();
  if (auto producer = kernel->getAttrOfType<IntegerAttr>(kProducerThreadsAttr))
    total += producer.getInt();
  // The threads running `op`, after checking it is the only `what` of the
  // pipeline in its block (else `why` it may not be).
  DenseSet<Block *> blocks;
  auto running = [&](Operation *op, StringRef what,
                     StringRef why) -> FailureOr<llvm::BitVector> {
    if (!blocks.insert(op->getBlock()).second)
      return op->emitOpError("is a second ")
             << what << " of the pipeline in its block: " << why;
    return threadsRunning(op, total);
  };
  for (ProducerAcquireOp acquire : uses.acquires) {
    FailureOr<llvm::BitVector> threads =
        running(acquire, "acquire", "the stage's full barrier would get two arrivals a phase");
    if (failed(threads))
      return failure();
    if (threads->count() != 1)
      return acquire.emitOpError("is run by ")
             << threads->count() << " threads of the block's " << total
             << "; one thread acquires a stage (its expect_tx is the full barrier's one "
                "arrival a phase)";
  }
  blocks.clear();
  int64_t warps = pipe.getConsumers() / 32;
  for (ConsumerReleaseOp release : uses.releases) {
    FailureOr<llvm::BitVector> threads =
        running(release, "release", "the stage's empty barrier would complete a phase early");
    if (failed(threads))
      return failure();
    int64_t leaders = 0;
    for (int64_t t = 0; t < total; t += 32)
      leaders += threads->test(t);
    if (leaders != warps || threads->count() != pipe.getConsumers())
      return release.emitOpError("is run by ")
             << threads->count() << " threads (" << leaders << " warp leaders) of the block's "
             << total << ", but the pipeline has " << pipe.getConsumers()
             << " consumer threads: its empty barriers count " << warps
             << " arrivals a phase, one per consumer warp";
  }
  return success();
}

/// Collects and checks the ops of `pipe`.
FailureOr<PipelineUses> checkPipeline(PipelineOp pipe) {
  PipelineUses uses;
  Value p = pipe.getResult();
  pipe->getParentOp()->walk([&](Operation *op) {
    if (auto acquire = dyn_cast<ProducerAcquireOp>(op); acquire && acquire.getPipeline() == p)
      uses.acquires.push_back(acquire);
    else if (auto load = dyn_cast<TmaLoadOp>(op); load && load.getPipeline() == p)
      uses.loads.push_back(load);
    else if (auto wait = dyn_cast<ConsumerWaitOp>(op); wait && wait.getPipeline() == p)
      uses.waits.push_back(wait);
    else if (auto release = dyn_cast<ConsumerReleaseOp>(op); release && release.getPipeline() == p)
      uses.releases.push_back(release);
  });
  int64_t stages = pipe.getStages();
  for (TmaLoadOp load : uses.loads) {
    ProducerAcquireOp acquire = acquireBefore(load);
    if (!acquire)
      return load.emitOpError("loads into a pipeline stage no tile.producer_acquire before it "
                              "in its block acquired: it could overwrite a stage consumers "
                              "still read");
    if (acquire.getIteration() != load.getIteration())
      return load.emitOpError("loads iteration ")
             << load.getIteration() << "'s stage after the acquire of another iteration ("
             << acquire.getIteration() << ")";
    uses.loadAcquire[load] = acquire;
  }
  DenseSet<Operation *> filled;
  for (auto &[load, acquire] : uses.loadAcquire)
    filled.insert(acquire);
  for (ProducerAcquireOp acquire : uses.acquires)
    if (!filled.contains(acquire))
      return acquire.emitOpError("acquires a stage that no tile.tma_load after it in its block "
                                 "fills: its consumers would read a stage nothing loaded");
  if (!uses.waits.empty() && uses.loads.empty())
    return uses.waits.front().emitOpError(
        "waits for a stage of a pipeline nothing loads: it would hang");
  if (!uses.acquires.empty() && uses.releases.empty())
    return uses.acquires.front().emitOpError("waits for stages of a ")
           << stages << "-stage pipeline that no consumer releases: it would hang once the "
           << stages << " stages are used";
  if (!uses.releases.empty() && uses.waits.empty())
    return uses.releases.front().emitOpError(
        "releases a stage of a pipeline its consumers never wait for");
  if (failed(checkArrivals(pipe, uses)))
    return failure();
  return uses;
}

/// The mbarriers of a tile.pipeline and how its ops address them.
struct Barriers {
  Value full, empty;
  int64_t stages;
  Location loc;

  Value index(OpBuilder &b, int64_t v) const { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(OpBuilder &b, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value at(OpBuilder &b, Value bars, Value s) const {
    return SharedPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), bars,
                               ValueRange{s});
  }
  /// The stage of iteration `k`: k mod S.
  Value stage(OpBuilder &b, Value k) const {
    return arith::RemSIOp::create(b, loc, k, index(b, stages));
  }
  /// The parity (r & 1, i32) of iteration `k`'s round r = k / S.
  Value parity(OpBuilder &b, Value k) const {
    Value round = arith::DivSIOp::create(b, loc, k, index(b, stages));
    Value odd = arith::AndIOp::create(b, loc, round, index(b, 1));
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), odd);
  }
  void wait(OpBuilder &b, Value bars, Value s, Value parity) const {
    Value ticks = i32(b, kWaitTicks);
    Value bar = at(b, bars, s);
    NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, parity, ticks);
  }
};

/// Loads the 2-d shared buffer `dst` from the tensor `map` describes at
/// `coordinates` (outermost first), one cp.async.bulk.tensor per column
/// block of `columns`, completing on the mbarrier `bar`.
void issueTmaLoad(OpBuilder &b, Location loc, Value map, ValueRange coordinates, Value dst,
                  int64_t columns, Value bar, Value multicast = Value()) {
  MLIRContext *ctx = b.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
  auto clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); };
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  SmallVector<Value> coords; // innermost first, as TMA takes them
  for (Value c : llvm::reverse(coordinates))
    coords.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), c));
  int64_t chunks = cast<MemRefType>(dst.getType()).getShape().back() / columns;
  for (int64_t j = 0; j < chunks; ++j) {
    SmallVector<Value> at = coords;
    if (j)
      at[0] = arith::AddIOp::create(b, loc, coords[0], i32(j * columns));
    Value to =
        SharedPtrOp::create(b, loc, sharedPtr, dst, ValueRange{index(0), index(j * columns)});
    Value toCluster = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, to);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, toCluster, map, at, bar, ValueRange{}, multicast, Value(), NVVM::TMALoadMode::TILE,
        false, NVVM::CTAGroupKindAttr(), Value());
  }
}

/// issueTmaLoad of a load every block of the cluster mask `bits` expects on
/// its own `bar`: the mask's lowest block issues it into all of them (a
/// multicast), the others nothing; a block outside the mask loads its own.
void issueClusterTmaLoad(OpBuilder &b, Location loc, Value map, ValueRange coordinates,
                         Value dst, int64_t columns, Value bar, int64_t bits) {
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  Value rank = NVVM::ClusterId::create(b, loc, b.getI32Type());
  Value inMask = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, i32(bits), rank), i32(1)),
      i32(0));
  Value lowest = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                       i32(llvm::countr_zero(uint64_t(bits))));
  Value issue = arith::OrIOp::create(
      b, loc, lowest,
      arith::XOrIOp::create(b, loc, inMask,
                            arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1)));
  // A block outside the mask loads its own copy (a mask of itself).
  Value own = arith::ShLIOp::create(b, loc, i32(1), rank);
  Value to = arith::SelectOp::create(b, loc, inMask, i32(bits), own);
  Value multicast = arith::TruncIOp::create(b, loc, b.getI16Type(), to);
  auto once = scf::IfOp::create(b, loc, issue, /*withElseRegion=*/false);
  OpBuilder ob = OpBuilder::atBlockTerminator(once.thenBlock());
  issueTmaLoad(ob, loc, map, coordinates, dst, columns, bar, multicast);
}

/// The block barrier after barriers are initialised, or in a kernel launched
/// in clusters the cluster's (other blocks may arrive or multicast there).
void barriersInitialised(OpBuilder &b, Location loc, Operation *op) {
  auto kernel = op->getParentOfType<KernelOp>();
  if (kernel && kernel->hasAttr(kClusterDimsAttr)) {
    NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    return;
  }
  NVVM::BarrierOp::create(b, loc, Type(), Value(), Value(), NVVM::BarrierReductionAttr(),
                          Value());
}

/// The blocks a pipeline's stages are multicast to (tile-pipeline-loops'
/// kClusterMaskAttr on the pipeline): each consumer warp releases a stage at
/// every one of them. 1 without multicast.
int64_t clusterBlocks(PipelineOp pipe) {
  auto mask = pipe->getAttrOfType<IntegerAttr>(kClusterMaskAttr);
  return mask ? llvm::popcount(uint64_t(mask.getInt())) : 1;
}

/// Allocates and initialises `pipe`'s barriers where it is.
Barriers createBarriers(PipelineOp pipe) {
  MLIRContext *ctx = pipe.getContext();
  Location loc = pipe.getLoc();
  int64_t stages = pipe.getStages();
  OpBuilder b(pipe);
  auto type = MemRefType::get({stages}, b.getI64Type(), MemRefLayoutAttrInterface(),
                              gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  Value full = AllocSharedOp::create(b, loc, type, SharedLayoutAttr(), IntegerAttr());
  Value empty = AllocSharedOp::create(b, loc, type, SharedLayoutAttr(), IntegerAttr());
  Barriers bars{full, empty, stages, loc};
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, bars.index(b, 0));
  auto init = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder ib = OpBuilder::atBlockTerminator(init.thenBlock());
  for (int64_t s = 0; s < stages; ++s) {
    for (auto [array, count] :
         {std::pair<Value, int64_t>{full, 1},
          {empty, pipe.getConsumers() / 32 * clusterBlocks(pipe)}}) {
      Value bar = bars.at(ib, array, bars.index(ib, s));
      NVVM::MBarrierInitOp::create(ib, loc, bar, bars.i32(ib, count), Value());
    }
  }
  NVVM::FenceMbarrierInitOp::create(ib, loc);
  barriersInitialised(b, loc, pipe);
  return bars;
}

/// Replaces `pipe` and its ops by mbarriers.
void lowerPipeline(PipelineOp pipe, PipelineUses &uses) {
  MLIRContext *ctx = pipe.getContext();
  Barriers bars = createBarriers(pipe);
  Location loc = bars.loc;
  // Per acquire: the full barrier its loads complete on.
  DenseMap<Operation *, Value> fullOf;
  for (ProducerAcquireOp acquire : uses.acquires) {
    OpBuilder b(acquire);
    // (Built one value a statement: argument order is the compiler's.)
    Value s = bars.stage(b, acquire.getIteration());
    Value parity = bars.parity(b, acquire.getIteration());
    Value one = bars.i32(b, 1);
    Value free = arith::XOrIOp::create(b, loc, parity, one);
    bars.wait(b, bars.empty, s, free);
    Value full = bars.at(b, bars.full, s);
    int64_t bytes = 0;
    for (auto &[load, by] : uses.loadAcquire)
      if (by == acquire)
        bytes += bufferBytes(cast<TmaLoadOp>(load).getDst().getType());
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), full, bars.i32(b, bytes),
                                           NVVM::MemScopeKind::CTA, false, Value());
    fullOf[acquire] = full;
  }
  for (TmaLoadOp load : uses.loads) {
    OpBuilder b(load);
    Value full = fullOf[uses.loadAcquire[load]];
    if (auto mask = load->getAttrOfType<IntegerAttr>(kClusterMaskAttr))
      issueClusterTmaLoad(b, loc, load.getMap(), load.getCoordinates(), load.getDst(),
                          load.getBoxColumns(), full, mask.getInt());
    else
      issueTmaLoad(b, loc, load.getMap(), load.getCoordinates(), load.getDst(),
                   load.getBoxColumns(), full);
  }
  for (ConsumerWaitOp wait : uses.waits) {
    OpBuilder b(wait);
    Value s = bars.stage(b, wait.getIteration());
    Value parity = bars.parity(b, wait.getIteration());
    bars.wait(b, bars.full, s, parity);
  }
  for (ConsumerReleaseOp release : uses.releases) {
    OpBuilder b(release);
    Value s = bars.stage(b, release.getIteration());
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value lane = arith::RemUIOp::create(b, loc, tid, bars.index(b, 32));
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, bars.index(b, 0));
    auto arrive = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
    OpBuilder ab = OpBuilder::atBlockTerminator(arrive.thenBlock());
    Value empty = bars.at(ab, bars.empty, s);
    int64_t blocks = clusterBlocks(pipe);
    if (blocks == 1) {
      NVVM::MBarrierArriveOp::create(ab, loc, Type(), empty, Value(), NVVM::MemScopeKind::CTA,
                                     false);
      continue;
    }
    // Multicast stages: the stage is released at every block of the mask
    // (this one too, through its cluster address), whose lowest refills it.
    // The arrival releases at CTA scope, as CUTLASS's pipelines do: the
    // warp's wgmma reads of the stage have completed (waited for), so no
    // access is left to order. (At cluster scope, a multicast GEMM ran 2.3x
    // slower on an H100: bench/results/2026-12-06/session33.)
    int64_t bits = pipe->getAttrOfType<IntegerAttr>(kClusterMaskAttr).getInt();
    for (int64_t r = 0; r < 64; ++r)
      if (bits >> r & 1) {
        Value remote = NVVM::MapaOp::create(ab, loc, LLVM::LLVMPointerType::get(ctx, 7), empty,
                                            bars.i32(ab, r));
        NVVM::MBarrierArriveOp::create(ab, loc, Type(), remote, Value(),
                                       NVVM::MemScopeKind::CTA, false);
      }
  }
  for (Operation *op : uses.acquires)
    op->erase();
  for (Operation *op : uses.loads)
    op->erase();
  for (Operation *op : uses.waits)
    op->erase();
  for (Operation *op : uses.releases)
    op->erase();
  pipe.erase();
}

/// On sm_90a, the copies of whole global tiles into shared buffers that a
/// tile.ws body makes just before it arrives at one of the program's
/// barriers (only pure ops between) become TMA loads completing on that
/// barrier: the body's first thread arrives with the loads' bytes expected
/// and issues them, the others arrive as before. A thread waiting for the
/// phase then sees the tiles, as it saw the threads' stores. Copies TMA
/// cannot take (tmaCopy), into a buffer swizzled otherwise, or into a
/// buffer that threads other than other warpgroups' bodies use
/// (onlyOthersRead), stay the threads', unless the program asked for TMA
/// (T.tma_copy: an error when it cannot be one).
/// Whether every use of `buffer` (or of a stage of it) other than `copy` is
/// in a tile.ws body of warpgroups disjoint from `copy`'s: those wait for
/// the barrier before reading (the program's protocol), while the copying
/// warpgroup or the whole block would read what a TMA load may still be
/// writing (their thread copies were ordered by barriers of the compiler).
bool onlyOthersRead(AllocSharedOp buffer, CopyOp copy) {
  auto mine = copy->getParentOfType<WarpGroupsOp>();
  SmallVector<Value> values{buffer.getResult()};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == copy.getOperation())
        continue;
      if (auto stage = dyn_cast<StageOp>(user)) {
        values.push_back(stage.getResult());
        continue;
      }
      auto ws = user->getParentOfType<WarpGroupsOp>();
      if (!ws || (ws.getFirstWarp() < mine.getFirstWarp() + mine.getWarpCount() &&
                  mine.getFirstWarp() < ws.getFirstWarp() + ws.getWarpCount()))
        return false;
    }
  }
  return true;
}

LogicalResult tmaBeforeArrivals(KernelOp kernel) {
  // A T.tma_copy (tile.tma_required) that did not become a TMA load.
  auto checkRequired = [&] {
    WalkResult left = kernel.walk([](CopyOp copy) {
      if (!copy->hasAttr("tile.tma_required"))
        return WalkResult::advance();
      copy.emitOpError("is a T.tma_copy that cannot be a TMA load: it needs sm_90a, a whole 2-d "
                       "shared tile (or stage) of 128-byte rows (or 64- or 32-byte rows) in the "
                       "tensor's dtype, from a tensor TMA can map, and its T.ws body's arrival "
                       "at its barrier right after it (only index arithmetic between)");
      return WalkResult::interrupt();
    });
    return failure(left.wasInterrupted());
  };
  TargetAttr target = TargetAttr::lookup(kernel);
  if (!target || !target.has(TargetFeature::Tma) ||
      kernel->getParentOfType<ModuleOp>()->hasAttr(kNoWarpSpecializationAttr))
    return checkRequired();
  MLIRContext *ctx = kernel.getContext();
  SmallVector<BarrierArriveOp> arrivals;
  // Arrivals of a T.ws body, and of the kernel's own code every thread runs
  // (inside serial loops at most): their copies just before are issued by
  // the body's, or the block's, first thread.
  auto everyThread = [&](Operation *op) {
    for (Operation *p = op->getParentOp(); p != kernel.getOperation(); p = p->getParentOp())
      if (!isa<scf::ForOp>(p))
        return false;
    return true;
  };
  kernel.walk([&](BarrierArriveOp arrive) {
    if (arrive->getParentOfType<WarpGroupsOp>() || everyThread(arrive))
      arrivals.push_back(arrive);
  });
  for (BarrierArriveOp arrive : arrivals) {
    SmallVector<std::pair<CopyOp, TmaCopy>> copies;
    for (Operation *op = arrive->getPrevNode(); op; op = op->getPrevNode()) {
      auto copy = dyn_cast<CopyOp>(op);
      if (!copy) {
        if (isPure(op) && !op->getNumRegions())
          continue;
        break;
      }
      AllocSharedOp buffer = sharedAllocation(copy.getDst()); // or a stage of one
      std::optional<TmaCopy> t = buffer && getPlace(copy.getSrc().getType()) == Place::Global
                                     ? tmaCopy(copy, buffer)
                                     : std::nullopt;
      SwizzleAttr swizzle = t ? sharedLayout(buffer).getSwizzle() : SwizzleAttr();
      // Outside a T.ws body only the program's T.tma_copy loads are made TMA.
      bool asked = copy->hasAttr("tile.tma_required");
      if (!t || (swizzle && swizzle != tmaSwizzleForRows(ctx, t->swizzleBytes)) ||
          (!asked && (!arrive->getParentOfType<WarpGroupsOp>() || !onlyOthersRead(buffer, copy))))
        break;
      copies.push_back({copy, *t});
    }
    if (copies.empty())
      continue;
    auto ws = arrive->getParentOfType<WarpGroupsOp>();
    Location loc = arrive.getLoc();
    OpBuilder b(arrive);
    Barriers bars{Value(), Value(), 1, loc};
    Value bar = bars.at(b, arrive.getBarriers(), arrive.getIndex());
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value first = bars.index(b, ws ? ws.getFirstThread() : 0);
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, first);
    auto branch = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/true);
    OpBuilder lb = OpBuilder::atBlockTerminator(branch.thenBlock());
    int64_t bytes = 0;
    for (auto &[copy, t] : copies)
      bytes += bufferBytes(copy.getDst().getType());
    NVVM::MBarrierArriveExpectTxOp::create(lb, loc, Type(), bar, bars.i32(lb, bytes),
                                           NVVM::MemScopeKind::CTA, false, Value());
    for (auto &[copy, t] : llvm::reverse(copies)) {
      AllocSharedOp buffer = sharedAllocation(copy.getDst());
      SharedLayoutAttr layout = sharedLayout(buffer);
      if (t.columnBlock)
        layout = layout.withColumnBlock(t.columnBlock);
      buffer.setLayoutAttr(layout.withSwizzle(tmaSwizzleForRows(ctx, t.swizzleBytes)));
      Value map = TensorMapOp::create(lb, loc, LLVM::LLVMPointerType::get(ctx), copy.getSrc(),
                                      t.box, t.swizzleBytes);
      auto mask = copy->getAttrOfType<IntegerAttr>(kClusterMaskAttr);
      if (!mask) {
        issueTmaLoad(lb, loc, map, copy.getSrcOffsets(), copy.getDst(), t.box.back(), bar);
      } else { // every block of the mask expects the bytes; its lowest issues them to all
        issueClusterTmaLoad(lb, loc, map, copy.getSrcOffsets(), copy.getDst(), t.box.back(),
                            bar, mask.getInt());
      }
      copy.erase();
    }
    OpBuilder eb = OpBuilder::atBlockTerminator(branch.elseBlock());
    NVVM::MBarrierArriveOp::create(eb, loc, Type(), bar, Value(), NVVM::MemScopeKind::CTA, false);
    arrive.erase();
  }
  return checkRequired();
}

/// Lowers the program's own mbarriers (T.alloc_barrier) in `kernel`:
/// tile.init_barriers becomes thread 0's mbarrier.init of each barrier, the
/// init fence and a block barrier; tile.barrier_wait a try_wait.parity loop
/// on the parity's low bit; tile.barrier_arrive a fence.proxy.async (the
/// thread's generic-proxy writes, for the wgmma or TMA reads of the threads
/// that wait) and an arrive. Marks the kernel (kProgramBarriersAttr).
void lowerProgramBarriers(KernelOp kernel) {
  SmallVector<Operation *> ops;
  kernel.walk([&](Operation *op) {
    if (isa<InitBarriersOp, BarrierWaitOp, BarrierArriveOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  MLIRContext *ctx = kernel.getContext();
  kernel->setAttr(kProgramBarriersAttr, UnitAttr::get(ctx));
  // sm_90's mbarrier.try_wait, init fence and async proxy; sm_80 has the
  // mbarriers, test_wait and no async proxy.
  TargetAttr target = TargetAttr::lookup(kernel);
  bool hopper = !target || target.has(TargetFeature::Tma);
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Barriers bars{Value(), Value(), 1, loc};
    if (auto init = dyn_cast<InitBarriersOp>(op)) {
      Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, bars.index(b, 0));
      auto once = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      OpBuilder ib = OpBuilder::atBlockTerminator(once.thenBlock());
      for (auto [i, count] : llvm::enumerate(init.getCounts()))
        NVVM::MBarrierInitOp::create(ib, loc, bars.at(ib, init.getBarriers(), bars.index(ib, i)),
                                     bars.i32(ib, count), Value());
      if (hopper)
        NVVM::FenceMbarrierInitOp::create(ib, loc);
      barriersInitialised(b, loc, init);
    } else if (auto wait = dyn_cast<BarrierWaitOp>(op)) {
      Value low = arith::AndIOp::create(b, loc, wait.getParity(), bars.index(b, 1));
      Value parity = arith::IndexCastOp::create(b, loc, b.getI32Type(), low);
      if (hopper) {
        bars.wait(b, wait.getBarriers(), wait.getIndex(), parity);
      } else { // a loop on test_wait (its label scoped by the braces)
        Value bar = bars.at(b, wait.getBarriers(), wait.getIndex());
        Value generic =
            LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), bar);
        LLVM::InlineAsmOp::create(
            b, loc, TypeRange{}, ValueRange{generic, parity},
            "{\n.reg .pred p;\nLAB_WAIT:\nmbarrier.test_wait.parity.b64 p, [$0], $1;\n"
            "@!p bra LAB_WAIT;\n}",
            "l,r,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
            LLVM::TailCallKind::None, LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
            ArrayAttr());
      }
    } else {
      auto arrive = cast<BarrierArriveOp>(op);
      if (hopper)
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKindAttr::get(ctx, NVVM::ProxyKind::async_shared),
            NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      NVVM::MBarrierArriveOp::create(b, loc, Type(),
                                     bars.at(b, arrive.getBarriers(), arrive.getIndex()), Value(),
                                     NVVM::MemScopeKind::CTA, false);
    }
    op->erase();
  }
}

} // namespace

/// The buffer a tile.shared_ptr addresses (through a stage view), if any.
static Operation *barrierArray(Value ptr) {
  if (auto mapa = ptr.getDefiningOp<NVVM::MapaOp>()) // another block's copy of it
    ptr = mapa.getA();
  auto sp = ptr.getDefiningOp<SharedPtrOp>();
  return sp ? sp.getBuffer().getDefiningOp() : nullptr;
}

LogicalResult mlir::tile::verifyMbarrierProtocol(KernelOp kernel) {
  DenseMap<Operation *, int64_t> initCount;
  DenseSet<Operation *> arrived;
  SmallVector<NVVM::MBarrierTryWaitParityOp> waits;
  WalkResult result = kernel.walk([&](Operation *op) {
    if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
      std::optional<int64_t> count = getConstantIntValue(init.getCount());
      if (Operation *bars = barrierArray(init.getAddr()))
        initCount[bars] = count.value_or(1);
      if (count && *count < 1)
        return init.emitOpError("initialises an mbarrier with ")
                   << *count << " arrivals: its phase can never complete",
               WalkResult::interrupt();
    } else if (auto arrive = dyn_cast<NVVM::MBarrierArriveOp>(op)) {
      arrived.insert(barrierArray(arrive.getAddr()));
    } else if (auto wait = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
      waits.push_back(wait);
    } else if (auto expect = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
      arrived.insert(barrierArray(expect.getAddr()));
      std::optional<int64_t> bytes = getConstantIntValue(expect.getTxcount());
      // The loads after it (a multicast one in the branch of the block that
      // issues it).
      int64_t loaded = 0;
      bool outlined = false;
      for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
        next->walk([&](NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp load) {
          if (load.getMbar() != expect.getAddr())
            return;
          auto map = load.getTmaDescriptor().getDefiningOp<TensorMapOp>();
          if (!map) { // a parameter already: outlined, nothing more to check here
            outlined = true;
            return;
          }
          int64_t box = map.getSrc().getType().getElementTypeBitWidth() / 8;
          for (int64_t extent : map.getBox())
            box *= extent;
          loaded += box;
        });
      if (outlined)
        return WalkResult::advance();
      if (!bytes || *bytes != loaded)
        return expect.emitOpError("expects ")
                   << (bytes ? std::to_string(*bytes) : std::string("a run-time count of"))
                   << " bytes, but the TMA loads completing on this mbarrier after it bring "
                   << loaded << ": the phase would never complete (or complete early)",
               WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (NVVM::MBarrierTryWaitParityOp wait : waits) {
    Operation *bars = barrierArray(wait.getAddr());
    if (!bars || !initCount.count(bars))
      return wait.emitOpError("waits on an mbarrier that is never initialised");
    if (!arrived.contains(bars))
      return wait.emitOpError("waits on an mbarrier nothing arrives on: it would hang");
  }
  return success();
}

LogicalResult mlir::tile::insertMbarriers(ModuleOp module) {
  SmallVector<PipelineOp> pipes;
  module.walk([&](PipelineOp pipe) { pipes.push_back(pipe); });
  for (PipelineOp pipe : pipes) {
    FailureOr<PipelineUses> uses = checkPipeline(pipe);
    if (failed(uses))
      return failure();
    lowerPipeline(pipe, *uses);
  }
  // Ops of a pipeline outside the kernel of their tile.pipeline, or of one
  // defined elsewhere, are left: the verifier's rules would have caught a
  // pipeline value not defined by a tile.pipeline.
  WalkResult left = module.walk([&](Operation *op) {
    if (isa<ProducerAcquireOp, TmaLoadOp, ConsumerWaitOp, ConsumerReleaseOp>(op)) {
      op->emitOpError("uses a pipeline that is not a tile.pipeline of its kernel");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (left.wasInterrupted())
    return failure();
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp kernel) { kernels.push_back(kernel); });
  for (KernelOp kernel : kernels) {
    // T.set_max_nreg (nvvm.setmaxregister in a tile.ws body) needs the
    // instruction; elsewhere the backend could not select it. (A kernel the
    // compiler warp-specialized has its own, outside any tile.ws.)
    TargetAttr target = TargetAttr::lookup(kernel);
    WalkResult regs = kernel.walk([&](NVVM::SetMaxRegisterOp op) {
      if (kernel->hasAttr(kProducerThreadsAttr))
        return WalkResult::skip();
      if (target && !target.has(TargetFeature::SetMaxNReg)) {
        op.emitOpError("(T.set_max_nreg) needs setmaxnreg (sm_90a); the target has none");
        return WalkResult::interrupt();
      }
      auto ws = op->getParentOfType<WarpGroupsOp>();
      if (!ws || !ws.getWarpgroups()) {
        op.emitOpError("(T.set_max_nreg) must be in a tile.ws body of whole warpgroups, which "
                       "each of its warpgroups runs whole");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (regs.wasInterrupted() || failed(tmaBeforeArrivals(kernel)))
      return failure();
    lowerProgramBarriers(kernel);
    if (failed(verifyMbarrierProtocol(kernel)))
      return failure();
  }
  return success();
}

namespace {
struct TileInsertMbarriers : mlir::tile::impl::TileInsertMbarriersBase<TileInsertMbarriers> {
  void runOnOperation() final {
    if (failed(insertMbarriers(getOperation())))
      signalPassFailure();
  }
};
} // namespace

bool mlir::tile::dependsOnThread(Value v) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    Operation *op = x.getDefiningOp();
    if (!op)
      continue;
    if (isa<gpu::ThreadIdOp, gpu::LaneIdOp>(op))
      return true;
    llvm::append_range(work, op->getOperands());
  }
  return false;
}
