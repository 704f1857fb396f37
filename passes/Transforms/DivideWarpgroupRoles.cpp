//===- DivideWarpgroupRoles.cpp - One warpgroup for the row gemm ----------===//
//
// A two-warpgroup block whose pipelined loop computes a narrow row block
// (FlashMLA's scores: 64 x 64) and a wide one from it (the 64 x 512 output),
// both split by columns (GemmWarpPolicy.FullCol), is rewritten into
// warpgroup roles written out, FlashMLA's division: a producer warpgroup
// loads each iteration's tiles into a ring; warpgroup 0 computes the narrow
// gemm whole (m64n64: shared memory feeds the tensor cores at their rate,
// where two m64n32 halves would each read the row block again), everything
// computed from it, and the left half of the wide gemm with its A from
// registers; warpgroup 1 the right half, from what warpgroup 0 publishes in
// shared memory (the A tile and the row vectors its columns read), while
// warpgroup 0 goes on to the next iteration. Anything that does not fit the
// pattern this pass checks stays as written (the FullCol split).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Debug.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEDIVIDEWARPGROUPROLES
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-divide-warpgroup-roles"

namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kRows = 64; // one wgmma row block
// setmaxnreg of the three bodies: 56 + 240 + 208 = 3 x 168 registers at launch.
constexpr int64_t kProducerRegisters = 56;
constexpr int64_t kRowRegisters = 240;
constexpr int64_t kColumnRegisters = 208;

enum class Role { Scalar, Alloc, Load, Row, Column };

/// Why the kernel keeps its FullCol split (for -debug-only).
LogicalResult skip(const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": kept as written: " << why << "\n");
  return failure();
}

bool isAlloc(Value v) {
  return v.getDefiningOp<AllocSharedOp>() || v.getDefiningOp<AllocFragmentOp>();
}

Place placeOf(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type ? getPlace(type) : Place::Unknown;
}

/// Whether a copy side covers all of `buffer` (offsets 0, sizes its shape).
bool whole(Value buffer, ValueRange offsets, ArrayRef<int64_t> sizes) {
  auto shape = cast<MemRefType>(buffer.getType()).getShape();
  if (shape != sizes)
    return false;
  return llvm::all_of(offsets, [](Value o) { return getConstantIntValue(o) == 0; });
}

SmallVector<Value> both(const SetVector<Value> &reads, const SetVector<Value> &writes) {
  SmallVector<Value> all(reads.begin(), reads.end());
  all.append(writes.begin(), writes.end());
  return all;
}

/// The memrefs `op` reads and writes; failure for effects this pass does not
/// follow.
LogicalResult accesses(Operation *op, SetVector<Value> &reads, SetVector<Value> &writes) {
  if (auto copy = dyn_cast<CopyOp>(op)) {
    reads.insert(copy.getSrc());
    writes.insert(copy.getDst());
    return success(!copy.getPred() && !copy.getAsync());
  }
  if (auto fill = dyn_cast<FillOp>(op)) {
    writes.insert(fill.getDst());
    return success();
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    reads.insert(gemm.getA());
    reads.insert(gemm.getB());
    reads.insert(gemm.getC());
    writes.insert(gemm.getC());
    return success(gemm.getPrefetch().empty());
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    reads.insert(reduce.getSrc());
    reads.insert(reduce.getDst());
    writes.insert(reduce.getDst());
    return success();
  }
  if (isa<ParallelOp, scf::IfOp>(op)) {
    LogicalResult ok = success();
    op->walk([&](Operation *inner) {
      if (inner == op)
        return;
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        reads.insert(load.getMemRef());
      else if (auto store = dyn_cast<memref::StoreOp>(inner))
        writes.insert(store.getMemRef());
      else if (isa<ParallelOp, scf::IfOp, scf::YieldOp>(inner))
        ;
      else if (isa<CopyOp, FillOp, GemmOp, ReduceOp>(inner)) {
        if (failed(accesses(inner, reads, writes)))
          ok = failure();
      } else if (!isMemoryEffectFree(inner))
        ok = failure();
    });
    return ok;
  }
  return failure();
}

/// What the pass found: the kernel's parts and what each op of it is.
struct Division {
  KernelOp kernel;
  PipelinedOp loop;
  int64_t stages = 1;
  Value s, o;   // the narrow accumulator, the wide one
  GemmOp wide;  // P x B -> o, FullCol
  // P: the shared tile warpgroup 1 reads (null: the pass makes one), written
  // at `publish` from a fragment; `reload` a copy of it back into the
  // fragment `pFragment` that the wide gemm reads, when it does.
  Value pbuf, pFragment;
  CopyOp publish, reload;
  SmallVector<GemmOp> narrow;
  int64_t width = 0, half = 0;
  SetVector<Value> split;  // shared buffers cut into left and right column halves
  SetVector<Value> loaded; // shared buffers the loop's loads fill (staged)
  SetVector<Value> inLoop, afterLoop; // row vectors column ops read
  DenseMap<Value, CopyOp> staged;     // o -> X -> global staging: X -> the copy out
  DenseMap<Operation *, Role> roles;
};

/// Fragments the column ops of `op` (a parallel loop writing o) read by row:
/// appended to `vectors`; failure for other accesses.
LogicalResult columnLoopReads(ParallelOp loop, const Division &d, SetVector<Value> &vectors) {
  Block &body = loop.getBody().front();
  if (loop.getShape() != ArrayRef<int64_t>{kRows, d.width})
    return skip("a parallel loop over the wide accumulator has another shape");
  Value i = body.getArgument(0), j = body.getArgument(1);
  LogicalResult ok = success();
  loop.walk([&](Operation *inner) {
    if (inner == loop.getOperation())
      return;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      Value m = load.getMemRef();
      auto idx = load.getIndices();
      if (m == d.o) {
        if (idx.size() != 2 || idx[0] != i || idx[1] != j)
          ok = skip("the wide accumulator read at other than its loop's indices");
      } else if (placeOf(m) == Place::Fragment) {
        if (idx.size() != 1 || idx[0] != i ||
            cast<MemRefType>(m.getType()).getShape() != ArrayRef<int64_t>{kRows})
          ok = skip("a fragment the column loop reads is not a row vector");
        else
          vectors.insert(m);
      } else if (placeOf(m) != Place::Global) {
        ok = skip("a column loop reads shared memory");
      }
    } else if (auto store = dyn_cast<memref::StoreOp>(inner)) {
      auto idx = store.getIndices();
      if (store.getMemRef() != d.o || idx.size() != 2 || idx[0] != i || idx[1] != j)
        ok = skip("a column loop stores to other than the wide accumulator");
    } else if (!isMemoryEffectFree(inner)) {
      ok = skip("a column loop has other memory effects");
    }
  });
  return ok;
}

/// Finds the division in `kernel`, or failure (kernel kept as written).
FailureOr<Division> analyze(KernelOp kernel, TargetAttr target) {
  Division d;
  d.kernel = kernel;
  if (kernel.getThreads() != 2 * kWarpgroup)
    return skip("the block is not two warpgroups");
  Block &top = kernel.getBody().front();
  bool bad = false;
  kernel.walk([&](Operation *op) {
    if (isa<WarpGroupsOp, InitBarriersOp, PipelineOp, scf::ForOp, scf::WhileOp,
            gpu::ThreadIdOp, gpu::LaneIdOp>(op))
      bad = true;
    if (auto loop = dyn_cast<PipelinedOp>(op)) {
      if (d.loop || op->getBlock() != &top)
        bad = true;
      d.loop = loop;
    }
  });
  if (bad || !d.loop)
    return skip("not one pipelined loop directly in the kernel, or warpgroups, "
                "barriers, other loops or thread indices of its own");
  if (getConstantIntValue(d.loop.getLowerBound()) != 0 ||
      getConstantIntValue(d.loop.getStep()) != 1 ||
      d.loop.getCopiesLast())
    return skip("the loop does not count from 0 by 1");
  d.stages = std::max<int64_t>(1, d.loop.getNumStages());
  Block &body = d.loop.getBody().front();

  // The gemms: all in the loop's own block, FullCol, one m64 row block.
  bool ok = true;
  kernel.walk([&](GemmOp gemm) {
    auto c = cast<MemRefType>(gemm.getC().getType());
    if (gemm->getBlock() != &body || gemm.getPolicy() != WarpPolicy::FullCol ||
        gemm.getTransposeA() || gemm.getWgWait() || gemm.getMma() ||
        !gemm.getPrefetch().empty() || c.getRank() != 2 || c.getDimSize(0) != kRows ||
        !isAlloc(gemm.getA()) || !isAlloc(gemm.getB()) || !isAlloc(gemm.getC()) ||
        placeOf(gemm.getB()) != Place::Shared) {
      ok = false;
      return;
    }
    int64_t n = c.getDimSize(1);
    if (n < 2 * 64 && placeOf(gemm.getA()) == Place::Shared) {
      d.narrow.push_back(gemm);
    } else if (!d.wide && n % (2 * 64) == 0 && n <= 2 * 256 && !gemm.getTransposeB()) {
      d.wide = gemm;
    } else {
      ok = false;
    }
  });
  if (!ok || !d.wide || d.narrow.empty())
    return skip("the gemms are not one wide FullCol gemm and narrow ones in the loop");
  d.s = d.narrow.front().getC();
  if (llvm::any_of(d.narrow, [&](GemmOp g) { return g.getC() != d.s; }))
    return skip("the narrow gemms accumulate into different fragments");
  d.o = d.wide.getC();
  d.width = cast<MemRefType>(d.o.getType()).getDimSize(1);
  d.half = d.width / 2;
  auto btype = cast<MemRefType>(d.wide.getB().getType());
  if ((d.half * btype.getElementTypeBitWidth() / 8) % 128)
    return skip("the wide gemm's column halves are not whole 128-byte blocks");

  // P: written once, by a copy of a whole fragment in the loop before the
  // gemm, into the shared tile the gemm reads, or into the fragment it reads
  // (TileLang's `T.copy(acc_s, acc_s_cast)`), or into a shared tile copied
  // into that fragment (`T.copy(acc_s, S_shared); T.copy(S_shared, acc_s_cast)`).
  auto onlyWriter = [&](Value buffer, Operation *reader) -> CopyOp {
    CopyOp writer;
    for (Operation *user : buffer.getUsers()) {
      if (user == reader)
        continue;
      auto copy = dyn_cast<CopyOp>(user);
      if (!copy || writer || copy.getDst() != buffer || copy->getBlock() != &body ||
          !copy->isBeforeInBlock(reader) || !isAlloc(copy.getSrc()) ||
          !whole(copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes()) ||
          !whole(buffer, copy.getDstOffsets(), copy.getDstSizes()))
        return CopyOp();
      writer = copy;
    }
    return writer;
  };
  Value a = d.wide.getA();
  CopyOp toA = onlyWriter(a, d.wide);
  if (!toA)
    return skip("the wide gemm's A is not written once by a copy in the loop");
  if (placeOf(a) == Place::Shared) {
    d.pbuf = a;
    d.publish = toA;
  } else {
    d.pFragment = a;
    if (placeOf(toA.getSrc()) == Place::Shared) { // through a shared tile
      d.pbuf = toA.getSrc();
      d.reload = toA;
      d.publish = onlyWriter(d.pbuf, toA);
      if (!d.publish)
        return skip("P's shared tile is not written once by a copy in the loop");
    } else {
      d.publish = toA; // the pass adds the shared tile
    }
  }
  if (placeOf(d.publish.getSrc()) != Place::Fragment || d.publish.getSrc() == d.o ||
      d.publish.getSrc() == d.pFragment)
    return skip("P is not copied from a fragment of the row role");
  if (cast<MemRefType>(a.getType()).getElementTypeBitWidth() != 16)
    return skip("the wide gemm's A is not 16-bit");

  // Every op: what it is and who runs it.
  auto classify = [&](Operation *op, bool inLoop) -> LogicalResult {
    if (isa<AllocSharedOp, AllocFragmentOp>(op)) {
      d.roles[op] = Role::Alloc;
      return success();
    }
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op)) {
      d.roles[op] = Role::Scalar;
      return success();
    }
    if (isa<memref::LoadOp>(op)) { // every body may read it (a page table)
      if (!isReadOnlyGlobalLoad(op))
        return skip("a scalar load of other than a tensor the kernel never writes");
      d.roles[op] = Role::Scalar;
      return success();
    }
    SetVector<Value> reads, writes;
    if (!isa<CopyOp, FillOp, GemmOp, ReduceOp, ParallelOp, scf::IfOp>(op) ||
        failed(accesses(op, reads, writes)))
      return skip("an op this pass does not follow");
    for (Value v : both(reads, writes))
      if (placeOf(v) != Place::Global && !isAlloc(v))
        return skip("a buffer that is not an allocation of the kernel");
    bool touchesO = reads.contains(d.o) || writes.contains(d.o);
    auto copy = dyn_cast<CopyOp>(op);
    if (inLoop && copy && placeOf(copy.getSrc()) == Place::Global &&
        placeOf(copy.getDst()) == Place::Shared) {
      if (op->getBlock() != &body || !whole(copy.getDst(), copy.getDstOffsets(), copy.getDstSizes()) ||
          d.loaded.contains(copy.getDst()))
        return skip("a load into part of a buffer, or into one buffer twice");
      d.loaded.insert(copy.getDst());
      d.roles[op] = Role::Load;
      return success();
    }
    if (touchesO || (copy && d.staged.count(copy.getSrc()))) {
      if (!inLoop && !isa<FillOp, ParallelOp, CopyOp>(op))
        return skip("an op of the wide accumulator outside the loop");
      if (inLoop && op->getBlock() != &body)
        return skip("a column op under a branch");
      if (auto loop = dyn_cast<ParallelOp>(op)) {
        if (failed(columnLoopReads(loop, d, inLoop ? d.inLoop : d.afterLoop)))
          return failure();
      } else if (copy && copy.getSrc() == d.o) {
        if (!whole(d.o, copy.getSrcOffsets(), copy.getSrcSizes()) || copy.getDstSizes().back() != d.width)
          return skip("a copy of part of the wide accumulator");
        Value dst = copy.getDst();
        if (placeOf(dst) == Place::Shared) { // staged out: X -> global next
          CopyOp out;
          for (Operation *user : dst.getUsers())
            if (auto c = dyn_cast<CopyOp>(user); c && c != copy && c.getSrc() == dst)
              out = c;
          if (!out || llvm::range_size(dst.getUsers()) != 2 || placeOf(out.getDst()) != Place::Global ||
              out->getBlock() != copy->getBlock() || !copy->isBeforeInBlock(out) ||
              !whole(dst, out.getSrcOffsets(), out.getSrcSizes()) ||
              !whole(dst, copy.getDstOffsets(), copy.getDstSizes()))
            return skip("the wide accumulator staged through shared memory other than to a tensor");
          d.staged[dst] = out;
        } else if (placeOf(dst) != Place::Global) {
          return skip("the wide accumulator copied into a fragment");
        }
      } else if (copy) { // X -> global of a staged X
        if (!d.staged.count(copy.getSrc()) || d.staged[copy.getSrc()] != copy)
          return skip("a copy into the wide accumulator, or of its staging tile twice");
      } else if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm != d.wide) {
        return skip("another gemm of the wide accumulator");
      } else if (!isa<FillOp, GemmOp>(op)) {
        return skip("a column op of another kind");
      }
      for (Value w : writes)
        if (w != d.o && placeOf(w) != Place::Global && !d.staged.count(w))
          return skip("a column op writes another buffer");
      d.roles[op] = Role::Column;
      return success();
    }
    d.roles[op] = Role::Row;
    return success();
  };
  for (Operation &op : top.without_terminator()) {
    if (&op == d.loop.getOperation())
      continue;
    if (failed(classify(&op, false)))
      return failure();
  }
  for (Operation &op : body)
    if (failed(classify(&op, true)))
      return failure();

  // Column ops before the loop read no row vector (nothing is published yet).
  for (Operation &op : top.without_terminator()) {
    if (!op.isBeforeInBlock(d.loop))
      break;
    if (d.roles[&op] != Role::Column)
      continue;
    if (!isa<FillOp>(op))
      return skip("a column op before the loop other than a fill");
  }

  // Loads precede every tile op of the loop; the loaded buffers are used only in it.
  bool seenWork = false;
  for (Operation &op : body) {
    Role role = d.roles[&op];
    if (role == Role::Load && seenWork)
      return skip("a load after the loop's compute");
    if (role == Role::Row || role == Role::Column)
      seenWork = true;
  }
  for (Value buffer : d.loaded)
    for (Operation *user : buffer.getUsers())
      if (!d.loop->isAncestor(user))
        return skip("a loaded buffer used outside the loop");

  // Rows: fragments other than o belong to warpgroup 0; ops of the row role
  // must not touch o or what the column role writes. No op but its load
  // writes a loaded buffer (warpgroup 1 reads a stage unsynchronized with
  // warpgroup 0's writes), and a tensor one role writes the other does not
  // touch.
  DenseMap<Value, Role> tensorWriter;
  for (auto &[op, role] : d.roles) {
    if (role != Role::Row && role != Role::Column)
      continue;
    SetVector<Value> reads, writes;
    (void)accesses(op, reads, writes);
    for (Value v : both(reads, writes))
      if (role == Role::Row && (v == d.o || d.staged.count(v)))
        return skip("a row op touches what the column role owns");
    for (Value w : writes) {
      if (d.loaded.contains(w))
        return skip("a loaded buffer written in the loop");
      if (placeOf(w) == Place::Global && tensorWriter.try_emplace(w, role).first->second != role)
        return skip("a tensor both roles write");
    }
  }
  for (auto &[op, role] : d.roles) {
    if (role != Role::Row && role != Role::Column)
      continue;
    SetVector<Value> reads, writes;
    (void)accesses(op, reads, writes);
    for (Value r : reads)
      if (auto it = tensorWriter.find(r); it != tensorWriter.end() && it->second != role)
        return skip("a tensor one role writes and the other reads");
  }

  // Layouts of the program's own (T.annotate_layout) would not carry over to
  // fragments now laid out over one warpgroup, or to a buffer's column halves.
  bool annotated = false;
  kernel.walk([&](AllocFragmentOp f) { annotated |= bool(f.getLayoutAttr()); });
  if (annotated)
    return skip("a fragment with a layout of the program's");

  // Column halves: the wide gemm's B, then the A of each narrow gemm whose
  // transposed B is split (the contraction cut in two).
  d.split.insert(d.wide.getB());
  if (!d.loaded.contains(d.wide.getB()))
    return skip("the wide gemm's B is not loaded in the loop");
  for (GemmOp g : d.narrow) {
    if (!d.split.contains(g.getB()))
      continue;
    auto at = cast<MemRefType>(g.getA().getType());
    if (!g.getTransposeB() || at.getRank() != 2 || at.getDimSize(1) != d.width)
      return skip("a narrow gemm reads the split B other than transposed over its columns");
    d.split.insert(g.getA());
  }
  for (Value x : d.split) {
    auto type = cast<MemRefType>(x.getType());
    if (type.getRank() != 2 || type.getDimSize(1) != d.width)
      return skip("a buffer to split is not 2-d of the wide gemm's width");
    auto alloc = x.getDefiningOp<AllocSharedOp>();
    if (!alloc || !sharedLayout(alloc).isPlain() || alloc->hasAttr("tile.row_major"))
      return skip("a buffer to split has a layout of the program's");
    for (Operation *user : x.getUsers()) {
      if (auto copy = dyn_cast<CopyOp>(user)) {
        if (copy.getDst() != x || placeOf(copy.getSrc()) != Place::Global ||
            copy.getSrcSizes().back() != d.width ||
            !whole(x, copy.getDstOffsets(), copy.getDstSizes()))
          return skip("a split buffer copied other than whole from a tensor");
        continue;
      }
      auto gemm = dyn_cast<GemmOp>(user);
      if (!gemm)
        return skip("a split buffer used by other than copies and gemms");
      if (gemm == d.wide)
        continue;
      if (!llvm::is_contained(d.narrow, gemm) || !d.split.contains(gemm.getA()) ||
          !d.split.contains(gemm.getB()))
        return skip("a gemm reads one split buffer with an unsplit one");
    }
  }

  // The shared bytes of the division (no buffer shares bytes with another in
  // warp-specialized bodies) fit the target's.
  int64_t bytes = 0;
  auto add = [&](MemRefType type, int64_t copies) {
    bytes += copies * static_cast<int64_t>(llvm::alignTo(bufferBytes(type), 128));
  };
  kernel.walk([&](AllocSharedOp alloc) {
    Value v = alloc.getResult();
    if (!d.staged.count(v)) // staging tiles go; loaded buffers become rings
      add(alloc.getType(), d.loaded.contains(v) ? d.stages : 1);
  });
  for (Value v : d.inLoop)
    add(cast<MemRefType>(v.getType()), 1);
  for (Value v : d.afterLoop)
    add(cast<MemRefType>(v.getType()), 1);
  if (!d.pbuf) // the tile P goes through
    add(MemRefType::get(cast<MemRefType>(d.pFragment.getType()).getShape(),
                        cast<MemRefType>(d.pFragment.getType()).getElementType()),
        1);
  bytes += 5 * 128; // the barriers
  if (bytes > target.getSharedBytes())
    return skip("the division's shared buffers would not fit");

  // Row vectors the column role reads: in the loop, written before it
  // publishes them and before any column op reads them; after it, not written.
  for (Value v : d.inLoop) {
    Operation *firstRead = nullptr;
    for (Operation &op : body) {
      SetVector<Value> reads, writes;
      (void)accesses(&op, reads, writes);
      if (d.roles[&op] == Role::Column && reads.contains(v) && !firstRead)
        firstRead = &op;
      if (!writes.contains(v))
        continue;
      if (!op.isBeforeInBlock(d.publish) || firstRead)
        return skip("a row vector written after the column role reads it");
    }
  }
  // After the loop, warpgroup 0 publishes the row vectors as the loop left
  // them: nothing writes one before the column role's last read of it (a
  // write after that, TileLang's log-sum-exp into the row sums, is warpgroup
  // 0's own).
  for (Value v : d.afterLoop) {
    Operation *lastRead = nullptr;
    for (Operation &op : top.without_terminator()) {
      SetVector<Value> reads, writes;
      if (d.loop->isBeforeInBlock(&op) && d.roles[&op] == Role::Column &&
          succeeded(accesses(&op, reads, writes)) && reads.contains(v))
        lastRead = &op;
    }
    for (Operation &op : top.without_terminator()) {
      if (&op == lastRead)
        break;
      SetVector<Value> reads, writes;
      (void)accesses(&op, reads, writes);
      if (d.loop->isBeforeInBlock(&op) && writes.contains(v))
        return skip("a row vector written after the loop before the column role reads it");
    }
  }
  return d;
}

/// A gemm of one warpgroup (its default warp policy).
void gemm(OpBuilder &b, Location loc, Value a, Value bm, Value c, bool transposeB, bool clear) {
  GemmOp::create(b, loc, a, bm, c, ValueRange(), false, transposeB, WarpPolicy::Square, clear,
                 MmaAttr(), IntegerAttr(), IntegerAttr());
}

/// A synchronous, unpredicated copy.
void copy(OpBuilder &b, Location loc, Value src, ValueRange so, ArrayRef<int64_t> ss, Value dst,
          ValueRange dof, ArrayRef<int64_t> ds) {
  CopyOp::create(b, loc, src, so, ss, dst, dof, ds, Value(), false);
}

/// Builds the three warpgroups' bodies of `d` and removes what they replace.
class Divider {
public:
  Divider(Division &d) : d(d), ctx(d.kernel.getContext()), loc(d.kernel.getLoc()) {}
  void run();

private:
  /// An index constant, made once at the top of the kernel (every body sees it).
  Value idx(OpBuilder &, int64_t v) {
    Value &c = constants[v];
    if (!c) {
      OpBuilder top = OpBuilder::atBlockBegin(&d.kernel.getBody().front());
      c = arith::ConstantIndexOp::create(top, loc, v);
    }
    return c;
  }
  /// A column half of the shared buffer `x` (at its location, which
  /// messages name).
  Value halfOf(OpBuilder &b, Value x);
  Value barriers(OpBuilder &b, ArrayRef<int64_t> counts);
  /// Clones `op` of the row role (warpgroup 0) into `b`.
  void cloneRow(OpBuilder &b, Operation *op, IRMapping &map, Value i);
  /// Clones `op` of the column role for half `h` into `b`; `vectors` maps the
  /// row vectors it reads (fragments for warpgroup 0, their published copies
  /// for warpgroup 1).
  void cloneColumn(OpBuilder &b, Operation *op, IRMapping &map, int h);
  /// A copy of `copy` with its split / wide sides replaced by their half h.
  void splitCopy(OpBuilder &b, CopyOp copy, IRMapping &map, int h, Value src, Value dst);
  Value piece(Value buffer, int h, IRMapping &map);
  /// Warpgroup 0's copies of the row vectors `vectors` into `shared`.
  void publishVectors(OpBuilder &b, const SetVector<Value> &vectors, DenseMap<Value, Value> &shared) {
    for (Value v : vectors)
      ::copy(b, loc, v, ValueRange{idx(b, 0)}, {kRows}, shared[v], ValueRange{idx(b, 0)}, {kRows});
  }
  /// At the top of a body's loop: the stage index and a view of every staged
  /// buffer's stage, into `map`.
  Value stageViews(OpBuilder &b, Value i, IRMapping &map);
  void buildProducer(OpBuilder &b);
  void buildRow(OpBuilder &b);
  void buildColumn(OpBuilder &b);
  /// A body's loop over the pipelined loop's iterations, at `b`: its builder
  /// (at the end of the loop body), index, stage, and `outer` extended with the
  /// old loop's index and the staged buffers' views.
  struct BodyLoop {
    OpBuilder b;
    Value i, st;
    IRMapping map;
  };
  BodyLoop openLoop(OpBuilder &b, const IRMapping &outer);
  /// The parity of round i / stages of a ring barrier (plus `ahead`), mod 2.
  Value roundParity(OpBuilder &b, Value i, int64_t ahead);

  Division &d;
  MLIRContext *ctx;
  Location loc;
  DenseMap<Value, std::array<Value, 2>> halves; // split buffers, and o -> o_l, o_r
  llvm::MapVector<Value, Value> stagedAlloc;    // loaded (or piece of one) -> its ring
  DenseMap<Value, Value> inLoopShared, afterLoopShared;
  Value pLocal, pShared, full, empty, pReady, pFree, lReady;
  DenseMap<int64_t, Value> constants;
};

Value Divider::halfOf(OpBuilder &b, Value x) {
  auto type = cast<MemRefType>(x.getType());
  auto half = MemRefType::get({type.getDimSize(0), d.half}, type.getElementType(),
                              MemRefLayoutAttrInterface(), type.getMemorySpace());
  return AllocSharedOp::create(b, x.getLoc(), half, SharedLayoutAttr(), IntegerAttr()).getResult();
}

Value Divider::barriers(OpBuilder &b, ArrayRef<int64_t> counts) {
  auto type = MemRefType::get({static_cast<int64_t>(counts.size())}, b.getI64Type(),
                              MemRefLayoutAttrInterface(), gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  Value v = AllocSharedOp::create(b, loc, type, SharedLayoutAttr(), IntegerAttr()).getResult();
  InitBarriersOp::create(b, loc, v, b.getDenseI64ArrayAttr(counts));
  return v;
}

Value Divider::piece(Value buffer, int h, IRMapping &map) {
  Value p = halves.count(buffer) ? halves[buffer][h] : buffer;
  return map.lookupOrDefault(p);
}

void Divider::splitCopy(OpBuilder &b, CopyOp copy, IRMapping &map, int h, Value src, Value dst) {
  // The side that is a tensor takes columns [h * half, (h + 1) * half) of
  // what it covered; the other is the whole half buffer.
  auto side = [&](Value buffer, ValueRange offsets, ArrayRef<int64_t> sizes, Value replaced,
                  SmallVector<Value> &newOffsets, SmallVector<int64_t> &newSizes) {
    newSizes.assign(sizes.begin(), sizes.end());
    newSizes.back() = d.half;
    if (placeOf(buffer) == Place::Global) {
      for (Value o : offsets)
        newOffsets.push_back(map.lookupOrDefault(o));
      if (h)
        newOffsets.back() = arith::AddIOp::create(b, loc, newOffsets.back(), idx(b, d.half));
    } else {
      for (size_t k = 0; k < offsets.size(); ++k)
        newOffsets.push_back(idx(b, 0));
      auto shape = cast<MemRefType>(replaced.getType()).getShape();
      newSizes.assign(shape.begin(), shape.end());
    }
  };
  SmallVector<Value> so, dof;
  SmallVector<int64_t> ss, ds;
  side(copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes(), src, so, ss);
  side(copy.getDst(), copy.getDstOffsets(), copy.getDstSizes(), dst, dof, ds);
  ::copy(b, loc, src, so, ss, dst, dof, ds);
}

Value Divider::stageViews(OpBuilder &b, Value i, IRMapping &map) {
  Value st = arith::RemSIOp::create(b, loc, i, idx(b, d.stages));
  for (auto &[buffer, ring] : stagedAlloc) {
    auto type = cast<MemRefType>(buffer.getType());
    map.map(buffer, StageOp::create(b, loc, type, ring, st).getResult());
  }
  return st;
}

Divider::BodyLoop Divider::openLoop(OpBuilder &b, const IRMapping &outer) {
  auto loop = scf::ForOp::create(b, loc, idx(b, 0), d.loop.getUpperBound(), idx(b, 1));
  BodyLoop body{OpBuilder::atBlockTerminator(loop.getBody()), loop.getInductionVar(), Value(),
                outer};
  body.map.map(d.loop.getBody().front().getArgument(0), body.i);
  body.st = stageViews(body.b, body.i, body.map);
  return body;
}

Value Divider::roundParity(OpBuilder &b, Value i, int64_t ahead) {
  Value r = arith::DivSIOp::create(b, loc, i, idx(b, d.stages));
  if (ahead)
    r = arith::AddIOp::create(b, loc, r, idx(b, ahead));
  return arith::RemSIOp::create(b, loc, r, idx(b, 2));
}

void Divider::buildProducer(OpBuilder &b) {
  NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters, NVVM::SetMaxRegisterAction::decrease);
  BodyLoop l = openLoop(b, IRMapping());
  auto &[lb, i, st, map] = l;
  for (Operation &op : d.loop.getBody().front())
    if (d.roles[&op] == Role::Scalar)
      lb.clone(op, map);
  BarrierWaitOp::create(lb, loc, empty, st, roundParity(lb, i, 1));
  for (Operation &op : d.loop.getBody().front()) {
    if (d.roles[&op] != Role::Load)
      continue;
    auto copy = cast<CopyOp>(op);
    if (d.split.contains(copy.getDst())) {
      for (int h = 0; h < 2; ++h)
        splitCopy(lb, copy, map, h, copy.getSrc(), piece(copy.getDst(), h, map));
    } else {
      lb.clone(op, map);
    }
  }
  BarrierArriveOp::create(lb, loc, full, st);
}

void Divider::cloneRow(OpBuilder &b, Operation *op, IRMapping &map, Value i) {
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    Value c = map.lookupOrDefault(gemm.getC());
    if (d.split.contains(gemm.getA())) { // the contraction cut in two
      for (int h = 0; h < 2; ++h)
        ::gemm(b, loc, piece(gemm.getA(), h, map), piece(gemm.getB(), h, map), c, true,
               h == 0 && gemm.getClearAccum());
      return;
    }
    ::gemm(b, loc, map.lookupOrDefault(gemm.getA()), map.lookupOrDefault(gemm.getB()), c,
           gemm.getTransposeB(), gemm.getClearAccum());
    return;
  }
  if (auto copy = dyn_cast<CopyOp>(op); copy && d.split.contains(copy.getDst())) {
    for (int h = 0; h < 2; ++h)
      splitCopy(b, copy, map, h, map.lookupOrDefault(copy.getSrc()), piece(copy.getDst(), h, map));
    return;
  }
  if (op == d.reload.getOperation())
    return; // warpgroup 0 keeps P in registers (pLocal); warpgroup 1 reads the tile
  if (op == d.publish.getOperation()) {
    // Warpgroup 1 is done with the previous iteration's P and row vectors.
    Value parity = arith::RemSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i, idx(b, 1)), idx(b, 2));
    BarrierWaitOp::create(b, loc, pFree, idx(b, 0), parity);
    auto p = cast<MemRefType>(pLocal.getType()).getShape();
    SmallVector<Value> zeros{idx(b, 0), idx(b, 0)};
    ::copy(b, loc, map.lookupOrDefault(d.publish.getSrc()), zeros, p, pLocal, zeros, p);
    ::copy(b, loc, pLocal, zeros, p, pShared, zeros, p);
    publishVectors(b, d.inLoop, inLoopShared);
    BarrierArriveOp::create(b, loc, pReady, idx(b, 0));
    return;
  }
  b.clone(*op, map);
}

void Divider::cloneColumn(OpBuilder &b, Operation *op, IRMapping &map, int h) {
  Value oh = halves[d.o][h];
  if (auto fill = dyn_cast<FillOp>(op)) {
    FillOp::create(b, loc, oh, map.lookupOrDefault(fill.getValue()));
    return;
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) { // the wide gemm, one half
    Value a = h == 0 ? pLocal : pShared;
    ::gemm(b, loc, a, piece(gemm.getB(), h, map), oh, false, gemm.getClearAccum());
    return;
  }
  if (auto copy = dyn_cast<CopyOp>(op)) {
    if (d.staged.count(copy.getSrc()))
      return; // done with the copy into the staging buffer
    CopyOp out = copy;
    if (d.staged.count(copy.getDst()))
      out = d.staged[copy.getDst()];
    // o_h -> the tensor's columns of half h.
    SmallVector<Value> so{idx(b, 0), idx(b, 0)}, dof;
    for (Value v : out.getDstOffsets())
      dof.push_back(map.lookupOrDefault(v));
    if (h)
      dof.back() = arith::AddIOp::create(b, loc, dof.back(), idx(b, d.half));
    SmallVector<int64_t> ds(out.getDstSizes());
    ds.back() = d.half;
    ::copy(b, loc, oh, so, {kRows, d.half}, out.getDst(), dof, ds);
    return;
  }
  auto loop = cast<ParallelOp>(op);
  auto nl = ParallelOp::create(b, loc, b.getDenseI64ArrayAttr({kRows, d.half}), LayoutAttr());
  Block *block = new Block();
  nl.getBody().push_back(block);
  Value i = block->addArgument(b.getIndexType(), loc);
  Value jl = block->addArgument(b.getIndexType(), loc);
  OpBuilder ib = OpBuilder::atBlockBegin(block);
  Value jg = h ? arith::AddIOp::create(ib, loc, jl, idx(ib, d.half)).getResult() : jl;
  Block &old = loop.getBody().front();
  IRMapping inner = map;
  inner.map(old.getArgument(0), i);
  inner.map(old.getArgument(1), jg);
  inner.map(d.o, oh);
  for (Operation &x : old)
    ib.clone(x, inner);
  // The accumulator's half is indexed by the local column.
  block->walk([&](Operation *x) {
    if (auto ld = dyn_cast<memref::LoadOp>(x); ld && ld.getMemRef() == oh)
      ld.getIndicesMutable()[1].assign(jl);
    if (auto stv = dyn_cast<memref::StoreOp>(x); stv && stv.getMemRef() == oh)
      stv.getIndicesMutable()[1].assign(jl);
  });
}

void Divider::buildRow(OpBuilder &b) {
  NVVM::SetMaxRegisterOp::create(b, loc, kRowRegisters, NVVM::SetMaxRegisterAction::increase);
  Block &top = d.kernel.getBody().front();
  IRMapping map;
  auto emit = [&](OpBuilder &at, Operation &op, IRMapping &m, Value i) {
    Role role = d.roles[&op];
    if (role == Role::Row)
      cloneRow(at, &op, m, i);
    else if (role == Role::Column)
      cloneColumn(at, &op, m, 0);
  };
  for (Operation &op : top.without_terminator()) {
    if (&op == d.loop.getOperation()) {
      BodyLoop l = openLoop(b, map);
      auto &[lb, i, st, lm] = l;
      BarrierWaitOp::create(lb, loc, full, st, roundParity(lb, i, 0));
      for (Operation &inner : d.loop.getBody().front()) {
        if (d.roles[&inner] == Role::Scalar)
          lb.clone(inner, lm);
        else
          emit(lb, inner, lm, i);
      }
      BarrierArriveOp::create(lb, loc, empty, st);
      if (!afterLoopShared.empty()) {
        publishVectors(b, d.afterLoop, afterLoopShared);
        BarrierArriveOp::create(b, loc, lReady, idx(b, 0));
      }
      continue;
    }
    emit(b, op, map, Value());
  }
}

void Divider::buildColumn(OpBuilder &b) {
  NVVM::SetMaxRegisterOp::create(b, loc, kColumnRegisters, NVVM::SetMaxRegisterAction::increase);
  Block &top = d.kernel.getBody().front();
  IRMapping map;
  for (Operation &op : top.without_terminator()) {
    if (&op == d.loop.getOperation()) {
      BodyLoop l = openLoop(b, map);
      auto &[lb, i, st, lm] = l;
      for (Value v : d.inLoop)
        lm.map(v, inLoopShared[v]);
      Value parity = arith::RemSIOp::create(lb, loc, i, idx(lb, 2));
      BarrierWaitOp::create(lb, loc, pReady, idx(lb, 0), parity);
      for (Operation &inner : d.loop.getBody().front()) {
        if (d.roles[&inner] == Role::Scalar)
          lb.clone(inner, lm);
        else if (d.roles[&inner] == Role::Column)
          cloneColumn(lb, &inner, lm, 1);
      }
      BarrierArriveOp::create(lb, loc, pFree, idx(lb, 0));
      BarrierArriveOp::create(lb, loc, empty, st);
      if (!afterLoopShared.empty()) {
        BarrierWaitOp::create(b, loc, lReady, idx(b, 0), idx(b, 0));
        for (Value v : d.afterLoop)
          map.map(v, afterLoopShared[v]);
      }
      continue;
    }
    if (d.roles[&op] == Role::Column)
      cloneColumn(b, &op, map, 1);
  }
}

void Divider::run() {
  Block &top = d.kernel.getBody().front();
  // Every allocation first, so the bodies (at the end) see them all.
  SmallVector<Operation *> allocs;
  for (Operation &op : top)
    if (isa<AllocSharedOp, AllocFragmentOp>(op))
      allocs.push_back(&op);
  for (Operation *op : llvm::reverse(allocs))
    op->moveBefore(&top, top.begin());
  OpBuilder b = OpBuilder::atBlockBegin(&top);
  b.setInsertionPointAfter(allocs.back());

  for (Value x : d.split) {
    for (int h = 0; h < 2; ++h)
      halves[x][h] = halfOf(b, x);
  }
  auto otype = cast<MemRefType>(d.o.getType());
  for (int h = 0; h < 2; ++h)
    halves[d.o][h] = AllocFragmentOp::create(
        b, d.o.getLoc(), MemRefType::get({kRows, d.half}, otype.getElementType(), MemRefLayoutAttrInterface(),
                                otype.getMemorySpace()), LayoutAttr()).getResult();
  // The rings: the loaded buffers (their halves where split), S stages each,
  // in the layout the program gave them.
  for (Value x : d.loaded) {
    SmallVector<Value> pieces{x};
    if (d.split.contains(x))
      pieces.assign(halves[x].begin(), halves[x].end());
    for (Value p : pieces)
      stagedAlloc[p] = allocateStages(p.getDefiningOp<AllocSharedOp>(), d.stages).getResult();
  }
  Value a = d.wide.getA();
  auto ptype = cast<MemRefType>(a.getType());
  pShared = d.pbuf ? d.pbuf
                   : AllocSharedOp::create(
                         b, a.getLoc(),
                         MemRefType::get(ptype.getShape(), ptype.getElementType(),
                                         MemRefLayoutAttrInterface(),
                                         gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)),
                         SharedLayoutAttr(), IntegerAttr())
                         .getResult();
  pLocal = AllocFragmentOp::create(
      b, a.getLoc(), MemRefType::get(ptype.getShape(), ptype.getElementType(), MemRefLayoutAttrInterface(),
                              getPlaceAttr(ctx, Place::Fragment)), LayoutAttr()).getResult();
  auto vectorType = [&](Value v) {
    auto t = cast<MemRefType>(v.getType());
    return MemRefType::get(t.getShape(), t.getElementType(), MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  };
  for (Value v : d.inLoop)
    inLoopShared[v] = AllocSharedOp::create(b, v.getLoc(), vectorType(v), SharedLayoutAttr(), IntegerAttr());
  for (Value v : d.afterLoop)
    afterLoopShared[v] = AllocSharedOp::create(b, v.getLoc(), vectorType(v), SharedLayoutAttr(), IntegerAttr());
  full = barriers(b, SmallVector<int64_t>(d.stages, kWarpgroup));
  empty = barriers(b, SmallVector<int64_t>(d.stages, 2 * kWarpgroup));
  pReady = barriers(b, {kWarpgroup});
  pFree = barriers(b, {kWarpgroup});
  if (!d.afterLoop.empty())
    lReady = barriers(b, {kWarpgroup});

  // The bodies, after everything the kernel computes for all its threads.
  b.setInsertionPointToEnd(&top);
  auto body = [&](int64_t wg) {
    auto ws = WarpGroupsOp::create(b, loc, b.getDenseI64ArrayAttr({wg}), DenseI64ArrayAttr());
    ws.getBody().push_back(new Block());
    return OpBuilder::atBlockBegin(&ws.getBody().front());
  };
  OpBuilder producer = body(2);
  buildProducer(producer);
  OpBuilder row = body(0);
  buildRow(row);
  OpBuilder column = body(1);
  buildColumn(column);

  // What the bodies replace.
  SmallVector<Operation *> dead;
  for (Operation &op : top)
    if (&op == d.loop.getOperation() ||
        (d.roles.count(&op) && d.roles[&op] != Role::Scalar && d.roles[&op] != Role::Alloc))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  SetVector<Value> gone;
  gone.insert(d.o);
  if (d.pFragment)
    gone.insert(d.pFragment);
  gone.insert(d.split.begin(), d.split.end());
  gone.insert(d.loaded.begin(), d.loaded.end());
  for (auto &[x, out] : d.staged)
    gone.insert(x);
  for (auto &[x, pieces] : halves) // a loaded buffer's halves live on as rings
    gone.insert(pieces.begin(), pieces.end());
  for (Value v : gone)
    if (v.use_empty())
      v.getDefiningOp()->erase();
  // A fragment nothing uses would be laid out over the 384 threads, which
  // may not divide it (the program's 256 did).
  SmallVector<Operation *> unused;
  for (Operation &op : top)
    if (auto frag = dyn_cast<AllocFragmentOp>(op); frag && frag->use_empty())
      unused.push_back(frag);
  for (Operation *op : unused)
    op->erase();
  d.kernel.setThreads(3 * kWarpgroup);
  // Scalars each body cloned and does not use.
  bool changed = true;
  while (changed) {
    changed = false;
    d.kernel.walk([&](Operation *op) {
      if (op->use_empty() && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
}

struct TileDivideWarpgroupRoles
    : mlir::tile::impl::TileDivideWarpgroupRolesBase<TileDivideWarpgroupRoles> {
  void runOnOperation() final { divideWarpgroupRoles(getOperation()); }
};

} // namespace

void mlir::tile::divideWarpgroupRoles(ModuleOp module) {
  TargetAttr target = TargetAttr::lookup(module);
  if (!target || !target.has(TargetFeature::Wgmma) || !target.has(TargetFeature::SetMaxNReg))
    return;
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp k) { kernels.push_back(k); });
  for (KernelOp kernel : kernels) {
    FailureOr<Division> d = analyze(kernel, target);
    if (succeeded(d))
      Divider(*d).run();
  }
}
