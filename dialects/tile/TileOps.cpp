//===- TileOps.cpp - tile dialect operations ------------------------------===//

#include "dialects/tile/TileDialect.h"
#include "dialects/tile/Layout.h"

#include "llvm/Support/MathExtras.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tile;

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.cpp.inc"

namespace {

/// Prints a shape as "32x128" for messages.
std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os, [&](int64_t d) { ShapedType::isDynamic(d) ? os << "?" : os << d; },
      "x");
  return s;
}

/// Drops the unit dimensions of a region's sizes.
SmallVector<int64_t> squeeze(ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> result;
  for (int64_t s : sizes)
    if (s != 1)
      result.push_back(s);
  return result;
}

bool isFloatOrInt(Type t) { return isa<FloatType, IntegerType>(t); }

/// "global memory (no memory space)", "shared memory", or the raw space.
std::string describePlace(MemRefType type) {
  Place place = getPlace(type);
  if (place == Place::Unknown) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "memory space " << type.getMemorySpace();
    return s;
  }
  if (place == Place::Global && !type.getMemorySpace())
    return "global memory (no memory space)";
  return (stringifyPlace(place) + " memory").str();
}

/// The thread count of the kernel `op` is nested in: a tile.kernel, or the
/// gpu.func kernel that tile-outline-kernels made of one (less its producer
/// warpgroup: the tile program runs on the rest).
FailureOr<int64_t> getKernelThreads(Operation *op) {
  if (auto kernel = op->getParentOfType<KernelOp>())
    return kernel.getThreads();
  if (auto func = op->getParentOfType<gpu::GPUFuncOp>())
    if (std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize()) {
      int64_t threads = 1;
      for (int32_t d : *block)
        threads *= d;
      if (auto producers = func->getAttrOfType<IntegerAttr>(kProducerThreadsAttr))
        threads -= producers.getInt();
      return threads;
    }
  return op->emitOpError("must be nested in a tile.kernel");
}

/// The thread count of the code `op` is in: its tile.ws's, else its kernel's.
FailureOr<int64_t> getEnclosingThreads(Operation *op) {
  FailureOr<ThreadGroup> group = threadGroupOf(op);
  if (failed(group))
    return failure();
  return group->count;
}

/// Checks the memory space and layout shared by all tile allocations.
LogicalResult verifyAlloc(Operation *op, MemRefType type, Place expected) {
  if (failed(getEnclosingThreads(op)))
    return failure();
  Place place = getPlace(type);
  if (place != expected)
    return op->emitOpError("result must be in ")
           << stringifyPlace(expected) << " memory, got " << describePlace(type);
  if (!type.getLayout().isIdentity())
    return op->emitOpError("result must have the identity layout, got ")
           << type.getLayout();
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat())
    return op->emitOpError("element type must be an integer or float, got ")
           << elem;
  // Memory holds whole bytes: a bool buffer is stored as i8.
  if (elem.getIntOrFloatBitWidth() < 8)
    return op->emitOpError("element type must be at least 8 bits wide in memory, got ")
           << elem << " (store bools as i8)";
  if (!type.hasStaticShape() || llvm::any_of(type.getShape(), [](int64_t d) { return d <= 0; }))
    return op->emitOpError("result must have a static shape of positive sizes, got ")
           << shapeStr(type.getShape());
  // On-chip buffers are far below 2^31 bytes; larger ones overflow 32-bit
  // offsets (and no block has that much memory).
  int64_t bytes = 1;
  for (int64_t d : type.getShape())
    if (llvm::MulOverflow(bytes, d, bytes) || bytes > (int64_t(1) << 31))
      return op->emitOpError("result of ") << shapeStr(type.getShape())
                                           << " elements is too large for on-chip memory";
  return success();
}

} // namespace

FailureOr<ThreadGroup> mlir::tile::threadGroupOf(Operation *op) {
  if (auto ws = op->getParentOfType<WarpGroupsOp>()) {
    ThreadGroup g;
    g.first = ws.getFirstThread();
    g.count = ws.getThreadCount();
    g.part = true;
    return g;
  }
  FailureOr<int64_t> threads = getKernelThreads(op);
  if (failed(threads))
    return failure();
  return ThreadGroup{0, *threads, {}};
}

FailureOr<ThreadGroup> mlir::tile::bufferThreadGroup(Operation *alloc) {
  FailureOr<ThreadGroup> whole = threadGroupOf(alloc);
  if (failed(whole))
    return failure();
  std::optional<ThreadGroup> group;
  bool mixed = false;
  for (Operation *user : alloc->getUsers()) {
    FailureOr<ThreadGroup> g = threadGroupOf(user);
    if (failed(g))
      return failure();
    mixed |= group && !(*g == *group);
    if (!group)
      group = *g;
  }
  if (!mixed)
    return group ? *group : *whole;
  // Two uses on different threads: name the first two in program order (the
  // use list is not in it).
  SmallVector<Operation *> users;
  alloc->getParentRegion()->walk([&](Operation *op) {
    if (llvm::is_contained(op->getOperands(), alloc->getResult(0)))
      users.push_back(op);
  });
  ThreadGroup first = *threadGroupOf(users.front());
  Operation *other = *llvm::find_if(
      users, [&](Operation *u) { return !(*threadGroupOf(u) == first); });
  ThreadGroup second = *threadGroupOf(other);
  auto describe = [](const ThreadGroup &t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (t.whole())
      os << "the whole block";
    else
      os << t.describe();
    return s;
  };
  InFlightDiagnostic diag = alloc->emitOpError("is used by ")
                            << describe(first) << " and by " << describe(second)
                            << "; a fragment lives on the threads of one T.ws (or on "
                               "the whole block)";
  diag.attachNote(users.front()->getLoc()) << "used by " << describe(first) << " here";
  diag.attachNote(other->getLoc()) << "used by " << describe(second) << " here";
  return diag;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

// tile.kernel blocks(%bx, %by) in (%gx, %gy) threads = 128 {attrs} { ... }
ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> indices;
  SmallVector<OpAsmParser::UnresolvedOperand> grid;
  Builder &b = parser.getBuilder();
  if (parser.parseKeyword("blocks") ||
      parser.parseArgumentList(indices, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") ||
      parser.parseOperandList(grid, OpAsmParser::Delimiter::Paren) ||
      parser.resolveOperands(grid, b.getIndexType(), result.operands))
    return failure();
  int64_t threads;
  if (parser.parseKeyword("threads") || parser.parseEqual() ||
      parser.parseInteger(threads))
    return failure();
  result.addAttribute(getThreadsAttrName(result.name),
                      b.getI64IntegerAttr(threads));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  for (OpAsmParser::Argument &arg : indices)
    arg.type = b.getIndexType();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, indices))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << " blocks(";
  llvm::interleaveComma(getBlockIndices(), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") in (" << getGrid() << ") threads = " << getThreads();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getThreadsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult KernelOp::verify() {
  size_t rank = getGrid().size();
  if (rank < 1 || rank > 3)
    return emitOpError("grid must have 1 to 3 dimensions, got ") << rank;
  if (getThreads() < 1 || getThreads() > 1024)
    return emitOpError("threads must be in [1, 1024], got ") << getThreads();
  if (Attribute attr = (*this)->getAttr(kProducerThreadsAttr)) {
    auto producers = dyn_cast<IntegerAttr>(attr);
    if (!producers || producers.getInt() < 32 || producers.getInt() % 32 != 0 ||
        getThreads() + producers.getInt() > 1024)
      return emitOpError(kProducerThreadsAttr)
             << " must be whole warps that, with the kernel's " << getThreads()
             << " threads, make at most 1024, got " << attr;
  }
  if ((*this)->getParentOfType<KernelOp>())
    return emitOpError("cannot be nested in another tile.kernel");
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getGrid().size())
    return emitOpError("expected one block-index argument per grid "
                       "dimension (")
           << getGrid().size() << "), got " << body.getNumArguments();
  for (BlockArgument arg : body.getArguments())
    if (!arg.getType().isIndex())
      return emitOpError("block indices must be of index type, got ")
             << arg.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

LogicalResult AllocSharedOp::verify() {
  if (failed(verifyAlloc(*this, getType(), Place::Shared)))
    return failure();
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError("offset must be non-negative, got ") << *offset;
  if (std::optional<SharedLayoutAttr> layout = getLayout()) {
    std::string problem = layout->checkFits(getType());
    if (!problem.empty())
      return emitOpError("layout does not fit the buffer: ") << problem;
  }
  return success();
}

LogicalResult AllocFragmentOp::verify() {
  if (failed(verifyAlloc(*this, getType(), Place::Fragment)))
    return failure();
  std::optional<LayoutAttr> layout = getLayout();
  if (!layout)
    return success();
  FailureOr<ThreadGroup> group = bufferThreadGroup(*this);
  if (failed(group))
    return failure();
  if (layout->getThreads() != group->count)
    return emitOpError("layout spreads over ")
           << layout->getThreads() << " threads but "
           << (group->whole() ? "the kernel has " : "its warpgroups have ") << group->count;
  std::string problem = layout->checkCovers(getType().getShape());
  if (!problem.empty())
    return emitOpError("layout does not cover the ")
           << shapeStr(getType().getShape()) << " tile: " << problem;
  return success();
}

LogicalResult AllocLocalOp::verify() {
  return verifyAlloc(*this, getType(), Place::Local);
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verify() {
  MemRefType src = getSource().getType(), res = getResult().getType();
  if (getPlace(src) != Place::Shared || getPlace(res) != Place::Shared)
    return emitOpError("source and result must be in shared memory, got ")
           << describePlace(src) << " and " << describePlace(res);
  if (src.getRank() != res.getRank() + 1 ||
      src.getShape().drop_front() != res.getShape())
    return emitOpError("result must be the source without its leading stage "
                       "dimension: expected ")
           << shapeStr(src.getShape().drop_front()) << ", got "
           << shapeStr(res.getShape());
  if (src.getElementType() != res.getElementType())
    return emitOpError("element types differ: ")
           << src.getElementType() << " vs " << res.getElementType();
  if (auto alloc = getSource().getDefiningOp<AllocSharedOp>()) {
    std::optional<SharedLayoutAttr> layout = alloc.getLayout();
    if (!layout || layout->getStages() != src.getDimSize(0))
      return emitOpError("indexes the stages of a buffer whose layout does not say "
                         "`stages = ")
             << src.getDimSize(0) << "` (#tile.shared)";
  }
  APInt index;
  if (matchPattern(getIndex(), m_ConstantInt(&index)) &&
      (index.getSExtValue() < 0 || index.getSExtValue() >= src.getDimSize(0)))
    return emitOpError("stage ") << index.getSExtValue() << " is out of range [0, "
                                 << src.getDimSize(0) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  MemRefType src = getSrc().getType(), dst = getDst().getType();
  if (getPlace(src) != Place::Shared || getPlace(dst) != Place::Shared)
    return emitOpError("transposes a shared buffer into a shared buffer, got ")
           << describePlace(src) << " and " << describePlace(dst);
  if (src.getElementType() != dst.getElementType() || src.getElementTypeBitWidth() != 8)
    return emitOpError("moves bytes: both buffers of one 8-bit element type, got ")
           << src.getElementType() << " and " << dst.getElementType();
  if (src.getRank() != 2 || dst.getRank() != 2 || dst.getDimSize(0) != src.getDimSize(1) ||
      dst.getDimSize(1) != src.getDimSize(0))
    return emitOpError("the destination is the source's shape reversed: ")
           << shapeStr(src.getShape()) << " to " << shapeStr(dst.getShape());
  if (src.getDimSize(0) % 128 || src.getDimSize(1) % 32 ||
      (src.getDimSize(1) % 128 && src.getDimSize(1) % 128 != 32 &&
       src.getDimSize(1) % 128 != 64))
    return emitOpError("takes tiles of 128 rows of whole 128-byte blocks (and one of 64 or 32 "
                       "bytes): rows a multiple of 128, columns of 32, 64 or 128k (+ 32 or 64), "
                       "got ")
           << shapeStr(src.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// ViewOp
//===----------------------------------------------------------------------===//

LogicalResult ViewOp::verify() {
  MemRefType src = getSource().getType(), res = getResult().getType();
  if (getPlace(src) == Place::Fragment && getPlace(res) == Place::Fragment) {
    // A fragment: the same registers, indexed row-major with another shape.
    if (src.getElementType() != res.getElementType() ||
        src.getNumElements() != res.getNumElements())
      return emitOpError("views a fragment with another shape of as many elements of "
                         "the same type, got ")
             << src << " to " << res;
    if (!res.getLayout().isIdentity())
      return emitOpError("result must be row-major (an identity layout)");
    AllocFragmentOp root = fragmentRoot(getSource());
    if (!root)
      return emitOpError("source must be a tile.alloc_fragment or a view of one");
    if (root->hasAttr("tile.reducer"))
      return emitOpError("views a reducer's partials (one row per thread), which have no "
                         "element placement to view");
    return success();
  }
  if (getPlace(src) != Place::Shared || getPlace(res) != Place::Shared)
    return emitOpError("source and result must both be in shared memory or both fragments, "
                       "got ")
           << describePlace(src) << " and " << describePlace(res);
  if (!src.getLayout().isIdentity() || !res.getLayout().isIdentity())
    return emitOpError("source and result must be row-major (identity layouts)");
  auto typeStr = [](MemRefType t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << shapeStr(t.getShape()) << "x" << t.getElementType();
    return s;
  };
  if (bufferBytes(src) != bufferBytes(res))
    return emitOpError("keeps the buffer's size: ")
           << typeStr(src) << " is " << bufferBytes(src) << " bytes, " << typeStr(res)
           << " is " << bufferBytes(res);
  Value root = getSource();
  while (auto view = root.getDefiningOp<ViewOp>())
    root = view.getSource();
  auto alloc = root.getDefiningOp<AllocSharedOp>();
  if (!alloc)
    return emitOpError("source must be a tile.alloc_shared or a view of one");
  if (sharedLayout(alloc).getStages() > 0)
    return emitOpError("views a shared allocation in stages (")
           << *alloc.getLayout() << "); a viewed allocation has none";
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> CopyOp::getTileShape() { return squeeze(getDstSizes()); }

/// Verifies one side of a copy: its place, index count and bounds.
//===----------------------------------------------------------------------===//
// TMA descriptors and shared addresses
//===----------------------------------------------------------------------===//

int64_t mlir::tile::stridedVectorLimit(MemRefType type, int64_t limit) {
  if (type.getLayout().isIdentity())
    return limit;
  if (!type.isStrided())
    return 1;
  auto [strides, offset] = type.getStridesAndOffset();
  if (strides.empty() || strides.back() != 1 || ShapedType::isDynamic(offset))
    return 1;
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back()) {
    if (ShapedType::isDynamic(stride))
      return 1;
    if (stride != 0)
      limit = std::min(limit, stride & -stride);
  }
  return std::max<int64_t>(limit, 1);
}

std::string mlir::tile::tmaProblem(MemRefType type) {
  std::string why;
  llvm::raw_string_ostream os(why);
  int64_t bits = type.getElementTypeBitWidth();
  if (getPlace(type) != Place::Global || !type.getLayout().isIdentity())
    os << "TMA maps row-major global tensors, not " << type;
  else if (type.getRank() < 1 || type.getRank() > 5)
    os << "TMA maps tensors of rank 1 to 5, not rank " << type.getRank();
  else if (bits < 8 || bits % 8)
    os << "TMA moves whole bytes, not " << type.getElementType() << " elements";
  if (!why.empty())
    return why;
  // A dynamic size is fine where the stride it multiplies is already a
  // multiple of 16 bytes: every stride outside it is then one too, whatever
  // the size (the runtime encodes the map from the tensor's actual sizes).
  int64_t stride = bits / 8;
  for (int64_t d = type.getRank() - 1; d >= 1; --d) {
    if (ShapedType::isDynamic(type.getDimSize(d))) {
      if (stride % 16)
        return (os << "dimension " << d << " of " << type << " is dynamic and its elements are "
                   << stride << " bytes apart; TMA needs every stride a multiple of 16 bytes, "
                   << "which that size does not guarantee",
                why);
      return why;
    }
    stride *= type.getDimSize(d);
    if (stride % 16)
      return (os << "the stride of dimension " << d - 1 << " of " << type << " is " << stride
                 << " bytes, not a multiple of 16 as TMA needs",
              why);
  }
  return why;
}

LogicalResult TensorMapOp::verify() {
  MemRefType type = getSrc().getType();
  ArrayRef<int64_t> box = getBox();
  if (std::string why = tmaProblem(type); !why.empty())
    return emitOpError(why);
  if (static_cast<int64_t>(box.size()) != type.getRank())
    return emitOpError("box has ") << box.size() << " extents for a rank-" << type.getRank()
                                   << " tensor";
  for (int64_t extent : box)
    if (extent < 1 || extent > 256)
      return emitOpError("box extents must be in [1, 256], got ") << extent;
  int64_t swizzle = getSwizzle(), inner = box.back() * type.getElementTypeBitWidth() / 8;
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitOpError("swizzle must be 0, 32, 64 or 128 bytes, got ") << swizzle;
  if (inner % 16 || (swizzle && inner > swizzle))
    return emitOpError("the innermost box extent is ")
           << inner << " bytes; it must be a multiple of 16"
           << (swizzle ? " and at most the swizzle span" : "");
  return success();
}

/// Columns of one TMA box of `tile`: its column block, else all columns.
static int64_t boxColumns(MemRefType tile, SharedLayoutAttr layout) {
  if (int64_t block = layout ? layout.getColumnBlock() : 0)
    return block;
  return tile.getShape().back();
}

/// What tile.tma_load and tile.tma_store share: a 2-d tile of boxes of
/// 128-byte rows in TMA's swizzle, the tensor map's box one column block of
/// it, one coordinate per tensor dimension, the same element type.
/// `verb`/`preposition` word the dtype message ("stores ... into").
static LogicalResult verifyTmaTile(Operation *op, MemRefType tile, SharedLayoutAttr layout,
                                   Value mapValue, ValueRange coordinates, StringRef verb,
                                   StringRef preposition) {
  int64_t columns = boxColumns(tile, layout), rows = tile.getDimSize(0);
  int64_t bytes = columns * tile.getElementTypeBitWidth() / 8;
  if (bytes != tmaSwizzleBytes(layout.getSwizzle()))
    return op->emitOpError("needs boxes of 32-, 64- or 128-byte rows with the swizzle of "
                           "their width (column_block * element bytes = 128 with "
                           "#tile.swizzle<bits = 3, base = 4, shift = 3>, or a whole row of "
                           "64 / 32 bytes with bits = 2 / 1), got ")
           << bytes << "-byte rows and " << layout;
  if (tile.getShape().back() % columns)
    return op->emitOpError("column blocks of ") << columns << " do not divide "
                                                << tile.getShape().back() << " columns";
  auto map = mapValue.getDefiningOp<TensorMapOp>();
  if (!map)
    return success(); // a kernel parameter once outlined
  MemRefType tensor = map.getSrc().getType();
  if (static_cast<int64_t>(coordinates.size()) != tensor.getRank())
    return op->emitOpError("expected ") << tensor.getRank() << " coordinates for " << tensor
                                        << ", got " << coordinates.size();
  if (tensor.getElementType() != tile.getElementType())
    return op->emitOpError(verb) << " " << tile.getElementType() << " elements " << preposition
                                 << " a tensor of " << tensor.getElementType();
  ArrayRef<int64_t> box = map.getBox();
  int64_t boxRows = 1;
  for (int64_t extent : box.drop_back())
    boxRows *= extent;
  if (box.back() != columns || boxRows != rows || (int64_t)map.getSwizzle() != bytes) {
    InFlightDiagnostic diag = op->emitOpError("the tensor map's box (");
    llvm::interleave(box, [&](int64_t e) { diag << e; }, [&] { diag << " x "; });
    return diag << ", swizzle " << map.getSwizzle() << ") is not one " << rows << " x "
                << columns << " column block of the tile with the " << bytes
                << "-byte swizzle";
  }
  return success();
}

int64_t TmaStoreOp::getBoxColumns() {
  auto alloc = getSrc().getDefiningOp<AllocSharedOp>();
  return boxColumns(getSrc().getType(), alloc ? sharedLayout(alloc) : SharedLayoutAttr());
}

/// A semaphore's flags are an int32 tensor in global memory, which other
/// blocks see.
static LogicalResult verifySemaphoreFlags(Operation *op, MemRefType flags) {
  if (getPlace(flags) != Place::Global)
    return op->emitOpError("flags must be a global tensor (other blocks read them), got ")
           << flags;
  return success();
}

LogicalResult SemaphoreSignalOp::verify() {
  if (getLevel() < 1)
    return emitOpError("raises a flag to a positive level, got ") << getLevel();
  return verifySemaphoreFlags(*this, getFlags().getType());
}

LogicalResult SemaphoreWaitOp::verify() {
  if (getLevel() < 1)
    return emitOpError("waits for a positive level, got ") << getLevel();
  return verifySemaphoreFlags(*this, getFlags().getType());
}

//===----------------------------------------------------------------------===//
// Warp groups and the program's mbarriers
//===----------------------------------------------------------------------===//

LogicalResult WarpGroupsOp::verify() {
  if (bool(getWarpgroups()) == bool(getWarps()))
    return emitOpError("lists either warpgroups or warps");
  bool groups = bool(getWarpgroups());
  ArrayRef<int64_t> units = groups ? *getWarpgroups() : *getWarps();
  StringRef unit = groups ? "warpgroup" : "warp";
  int64_t size = groups ? 128 : 32;
  if (units.empty())
    return emitOpError("needs at least one ") << unit;
  for (size_t i = 0; i < units.size(); ++i)
    if (units[i] < 0 || (i && units[i] != units[i - 1] + 1))
      return emitOpError() << unit << "s must be ascending, contiguous and non-negative, got ["
                           << units << "]";
  if ((*this)->getParentOfType<WarpGroupsOp>())
    return emitOpError("cannot be nested in another tile.ws");
  if ((*this)->getParentOfType<PipelinedOp>())
    return emitOpError("cannot be in a tile.pipelined loop: the compiler does not pipeline a "
                       "loop whose warpgroups the program specializes itself");
  FailureOr<int64_t> threads = getKernelThreads(*this);
  if (failed(threads))
    return failure();
  if (*threads % size)
    return emitOpError("needs a block of whole ")
           << unit << "s (a multiple of " << size << " threads), the kernel has " << *threads;
  if (size * (units.back() + 1) > *threads)
    return emitOpError() << unit << " " << units.back() << " is past the kernel's " << *threads
                         << " threads (" << *threads / size << " " << unit << "s)";
  return success();
}

/// The shared allocation holding mbarriers, or an error at `op`.
static FailureOr<AllocSharedOp> barrierAllocation(Operation *op, Value barriers) {
  AllocSharedOp alloc = barriers.getDefiningOp<AllocSharedOp>();
  if (!alloc)
    return op->emitOpError("barriers must be a tile.alloc_shared buffer");
  return alloc;
}

/// Checks a use of the program's mbarriers: an initialised buffer, an index
/// in it.
static LogicalResult verifyBarrierUse(Operation *op, Value barriers, Value index) {
  FailureOr<AllocSharedOp> alloc = barrierAllocation(op, barriers);
  if (failed(alloc))
    return failure();
  if (llvm::none_of(alloc->getResult().getUsers(),
                    [](Operation *user) { return isa<InitBarriersOp>(user); }))
    return op->emitOpError("barriers must be initialised by tile.init_barriers");
  int64_t size = cast<MemRefType>(barriers.getType()).getDimSize(0);
  if (std::optional<int64_t> i = getConstantIntValue(index); i && (*i < 0 || *i >= size))
    return op->emitOpError("barrier ") << *i << " is out of range: there are " << size;
  if (op->getParentOfType<ParallelOp>())
    return op->emitOpError("runs once per thread: it cannot be in a tile.parallel body");
  return success();
}

LogicalResult InitBarriersOp::verify() {
  FailureOr<AllocSharedOp> alloc = barrierAllocation(*this, getBarriers());
  if (failed(alloc))
    return failure();
  MemRefType type = getBarriers().getType();
  if (getPlace(type) != Place::Shared)
    return emitOpError("barriers must be in shared memory, got ") << type;
  if (int64_t(getCounts().size()) != type.getDimSize(0))
    return emitOpError("has ") << getCounts().size() << " arrival counts for "
                               << type.getDimSize(0) << " barriers";
  for (int64_t count : getCounts())
    if (count < 1 || count >= (int64_t(1) << 20))
      return emitOpError("arrival counts must be in [1, 1048575], got ") << count;
  if (!isa<KernelOp, gpu::GPUFuncOp>((*this)->getParentOp()))
    return emitOpError("must be directly in the kernel's body, where every thread runs it");
  if (llvm::count_if(alloc->getResult().getUsers(),
                     [](Operation *user) { return isa<InitBarriersOp>(user); }) > 1)
    return emitOpError("initialises barriers that are initialised again elsewhere");
  return success();
}

LogicalResult BarrierWaitOp::verify() { return verifyBarrierUse(*this, getBarriers(), getIndex()); }

LogicalResult BarrierArriveOp::verify() {
  return verifyBarrierUse(*this, getBarriers(), getIndex());
}

/// A fragment and the global rows of partial sums that hold its elements.
static LogicalResult verifyPartials(Operation *op, MemRefType fragment, MemRefType partials) {
  if (getPlace(fragment) != Place::Fragment)
    return op->emitOpError("moves the registers of a fragment, got ") << fragment;
  if (getPlace(partials) != Place::Global)
    return op->emitOpError("partials must be a global tensor, got ") << partials;
  if (!fragment.getElementType().isF32())
    return op->emitOpError("moves fp32 partial sums (16-byte vectors of four registers), got ")
           << fragment.getElementType();
  if (partials.getElementType() != fragment.getElementType())
    return op->emitOpError("partials hold ")
           << partials.getElementType() << " but the fragment holds "
           << fragment.getElementType();
  if (partials.isDynamicDim(1) || partials.getDimSize(1) != fragment.getNumElements())
    return op->emitOpError("a row of partials holds the fragment's ")
           << fragment.getNumElements() << " elements, got " << partials;
  return success();
}

LogicalResult StorePartialsOp::verify() {
  return verifyPartials(*this, getSrc().getType(), getPartials().getType());
}

LogicalResult AddPartialsOp::verify() {
  return verifyPartials(*this, getDst().getType(), getPartials().getType());
}

LogicalResult ReducePartialsOp::verify() {
  MemRefType partials = getPartials().getType();
  if (getPlace(partials) != Place::Global)
    return emitOpError("partials must be a global tensor, got ") << partials;
  if (partials.isDynamicDim(1) || partials.getDimSize(1) % 4)
    return emitOpError("a row of partials must be a static number of 16-byte vectors "
                       "(a multiple of 4 fp32), got ")
           << partials;
  return success();
}

LogicalResult TmaStoreOp::verify() {
  MemRefType src = getSrc().getType();
  if (getPlace(src) != Place::Shared || src.getRank() != 2)
    return emitOpError("stores a 2-d shared buffer, got ") << src;
  auto alloc = getSrc().getDefiningOp<AllocSharedOp>();
  SharedLayoutAttr layout = alloc ? sharedLayout(alloc) : SharedLayoutAttr();
  if (!alloc || layout.getStages())
    return emitOpError("stores a whole tile.alloc_shared buffer (not a stage or a view)");
  Type elem = src.getElementType();
  if (getAdd() && !(elem.isF32() || elem.isF16() || elem.isBF16() || elem.isInteger(32)))
    return emitOpError("adds f32, f16, bf16 or i32 tiles (TMA's reductions), got ") << elem;
  return verifyTmaTile(*this, src, layout, getMap(), getCoordinates(), "stores", "into");
}

/// The staged allocation a tile.tma_load fills one stage of.
static AllocSharedOp stagedAllocation(TmaLoadOp op) {
  auto stage = op.getDst().getDefiningOp<StageOp>();
  return stage ? stage.getSource().getDefiningOp<AllocSharedOp>() : AllocSharedOp();
}

int64_t TmaLoadOp::getBoxColumns() {
  AllocSharedOp alloc = stagedAllocation(*this);
  return boxColumns(getDst().getType(), alloc ? sharedLayout(alloc) : SharedLayoutAttr());
}

LogicalResult TmaLoadOp::verify() {
  MemRefType dst = getDst().getType();
  if (getPlace(dst) != Place::Shared || dst.getRank() != 2)
    return emitOpError("loads into a 2-d shared buffer, got ") << dst;
  AllocSharedOp alloc = stagedAllocation(*this);
  if (!alloc)
    return emitOpError("loads into one stage (a tile.stage) of a tile.alloc_shared buffer");
  return verifyTmaTile(*this, dst, sharedLayout(alloc), getMap(), getCoordinates(), "loads",
                       "from");
}

LogicalResult PipelineOp::verify() {
  // Each stage holds a tile and two 8-byte mbarriers of a block's shared
  // memory (at most 227 KB): far fewer than this many.
  constexpr int64_t kMaxStages = 4096;
  if (getStages() > kMaxStages)
    return emitOpError("has at most ") << kMaxStages << " stages (each holds shared memory), got "
                                       << getStages();
  if (getConsumers() % 32)
    return emitOpError("consumers must be whole warps (a multiple of 32 threads), got ")
           << getConsumers();
  if (!isa_and_nonnull<KernelOp>((*this)->getParentOp()))
    return emitOpError("must be directly in a tile.kernel (every thread of the block "
                       "initialises it)");
  return success();
}

LogicalResult MakeTensorOp::verify() {
  MemRefType type = getResult().getType();
  if (getPlace(type) != Place::Global || !type.getLayout().isIdentity())
    return emitOpError("makes row-major global tensors, not ") << type;
  if (type.getRank() < 1)
    return emitOpError("makes tensors of rank 1 or more");
  if (static_cast<int64_t>(getSizes().size()) != type.getNumDynamicDims())
    return emitOpError("expected ") << type.getNumDynamicDims()
                                    << " sizes (one per dynamic dimension), got "
                                    << getSizes().size();
  if (type.getElementTypeBitWidth() < 8)
    return emitOpError("element type ") << type.getElementType() << " is narrower than a byte";
  return success();
}

LogicalResult SharedPtrOp::verify() {
  MemRefType type = getBuffer().getType();
  if (getPlace(type) != Place::Shared)
    return emitOpError("addresses shared buffers only, got ") << type;
  if (static_cast<int64_t>(getIndices().size()) != type.getRank())
    return emitOpError("expected ") << type.getRank() << " indices, got "
                                    << getIndices().size();
  auto ptr = cast<LLVM::LLVMPointerType>(getResult().getType());
  if (ptr.getAddressSpace() != 3)
    return emitOpError("yields a shared (address space 3) pointer, got ") << ptr;
  return success();
}

static LogicalResult verifyCopySide(CopyOp op, StringRef side, MemRefType type,
                                    OperandRange offsets,
                                    ArrayRef<int64_t> sizes) {
  Place place = getPlace(type);
  if (place == Place::Unknown)
    return op.emitOpError() << side << " has an unsupported memory space "
                            << type.getMemorySpace();
  if (!isFloatOrInt(type.getElementType()))
    return op.emitOpError() << side << " element type must be an integer or "
                            << "float, got " << type.getElementType();
  int64_t rank = type.getRank();
  if ((int64_t)offsets.size() != rank)
    return op.emitOpError() << "expected " << rank << " " << side
                            << " indices, got " << offsets.size();
  if ((int64_t)sizes.size() != rank)
    return op.emitOpError() << "expected " << rank << " " << side
                            << " sizes, got " << sizes.size();
  for (auto [dim, size] : llvm::enumerate(sizes)) {
    if (size < 1)
      return op.emitOpError() << side << " size " << size << " in dimension "
                              << dim << " must be positive";
    // Only global tensors may be overhung; on-chip buffers are exact.
    if (place == Place::Global || type.isDynamicDim(dim))
      continue;
    int64_t extent = type.getDimSize(dim);
    if (size > extent)
      return op.emitOpError() << side << " region of size " << size
                              << " exceeds dimension " << dim << " of size "
                              << extent;
    APInt start;
    if (matchPattern(offsets[dim], m_ConstantInt(&start)) &&
        start.getSExtValue() + size > extent)
      return op.emitOpError()
             << side << " region [" << start.getSExtValue() << ", "
             << start.getSExtValue() + size << ") exceeds dimension " << dim
             << " of size " << extent;
  }
  if (place == Place::Fragment) {
    // Part of a fragment (acc[0:4, :]): a region whose start is known, each
    // thread moving the registers that fall inside it.
    for (Value offset : offsets)
      if (!matchPattern(offset, m_Constant()))
        return op.emitOpError() << "a fragment " << side
                                << " region must start at constant indices";
  }
  return success();
}

LogicalResult CopyOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  auto whole = [](MemRefType type, OperandRange offsets, ArrayRef<int64_t> sizes) {
    return sizes == type.getShape() &&
           llvm::all_of(offsets, [](Value o) { return matchPattern(o, m_Zero()); });
  };
  if (getPlace(getSrc().getType()) == Place::Fragment &&
      getPlace(getDst().getType()) == Place::Fragment &&
      (!whole(getSrc().getType(), getSrcOffsets(), getSrcSizes()) ||
       !whole(getDst().getType(), getDstOffsets(), getDstSizes())))
    return emitOpError("copies between fragments take them whole");
  if (failed(verifyCopySide(*this, "source", getSrc().getType(),
                            getSrcOffsets(), getSrcSizes())) ||
      failed(verifyCopySide(*this, "destination", getDst().getType(),
                            getDstOffsets(), getDstSizes())))
    return failure();
  if (getAsync()) {
    MemRefType src = getSrc().getType(), dst = getDst().getType();
    if (getPlace(src) != Place::Global || getPlace(dst) != Place::Shared ||
        src.getElementType() != dst.getElementType())
      return emitOpError("async copies go from global to shared memory with "
                         "one element type, got ")
             << describePlace(src) << " " << src.getElementType() << " to "
             << describePlace(dst) << " " << dst.getElementType();
  }
  if (getPred() && !getAsync())
    return emitOpError("only async copies take a predicate");
  SmallVector<int64_t> srcTile = squeeze(getSrcSizes());
  SmallVector<int64_t> dstTile = squeeze(getDstSizes());
  if (srcTile != dstTile)
    return emitOpError("source region ")
           << shapeStr(getSrcSizes()) << " and destination region "
           << shapeStr(getDstSizes())
           << " differ after dropping unit dimensions ("
           << shapeStr(srcTile) << " vs " << shapeStr(dstTile) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// FillOp
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  MemRefType type = getDst().getType();
  Place place = getPlace(type);
  if (place != Place::Shared && place != Place::Fragment && place != Place::Local)
    return emitOpError("can fill shared, fragment or local buffers, got one in ")
           << describePlace(type);
  if (getValue().getType() != type.getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match the element type "
           << type.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// ParallelOp
//===----------------------------------------------------------------------===//

// tile.parallel (%i, %j) in [32, 128] {attrs} { ... }
ParseResult ParallelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> ivs;
  Builder &b = parser.getBuilder();
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in"))
    return failure();
  SmallVector<int64_t> shape;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&]() {
        return parser.parseInteger(shape.emplace_back());
      }))
    return failure();
  result.addAttribute(getShapeAttrName(result.name),
                      b.getDenseI64ArrayAttr(shape));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  for (OpAsmParser::Argument &iv : ivs)
    iv.type = b.getIndexType();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, ivs))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void ParallelOp::print(OpAsmPrinter &p) {
  p << " (";
  llvm::interleaveComma(getBody().getArguments(), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") in [";
  llvm::interleaveComma(getShape(), p);
  p << "]";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {getShapeAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

/// Whether `layout` is a padded cover of `shape`: more slots than elements,
/// each element held by exactly one slot and every other slot past the first
/// extent (the rest of its indices inside). A loop of no fragment may have
/// one (tile-infer-layout gives it where the threads do not divide the
/// loop); its lowering runs no iteration for those slots.
static bool paddedCover(LayoutAttr layout, ArrayRef<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (layout.getRank() != shape.size() || layout.getThreads() * layout.getRegs() <= numel ||
      layout.getThreads() * layout.getRegs() > 2 * numel + layout.getThreads() * 64)
    return false;
  SmallVector<int64_t> counts(numel, 0);
  for (int64_t t = 0; t < layout.getThreads(); ++t)
    for (int64_t r = 0; r < layout.getRegs(); ++r) {
      SmallVector<int64_t> idx = layout.apply(t, r);
      int64_t flat = 0;
      for (auto [k, i, d] : llvm::enumerate(idx, shape)) {
        if (i < 0 || (k > 0 && i >= d))
          return false;
        flat = flat * d + i;
      }
      if (idx.front() >= shape.front())
        continue; // a padding slot
      if (++counts[flat] > 1)
        return false;
    }
  return llvm::all_of(counts, [](int64_t c) { return c == 1; });
}

LogicalResult ParallelOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("needs at least one dimension");
  // Iterations are spread over the block's threads as registers: far beyond
  // any register file (2^24 here) is a mistake, and would not fit the
  // compiler's own tables either.
  constexpr int64_t kMaxIterations = int64_t(1) << 24;
  int64_t iterations = 1;
  for (int64_t d : shape) {
    if (d < 1)
      return emitOpError("extents must be positive, got ") << shapeStr(shape);
    if (d > kMaxIterations || (iterations *= d) > kMaxIterations)
      return emitOpError("has ") << shapeStr(shape) << " iterations, more than "
                                 << kMaxIterations << " (2^24) in one block";
  }
  if (std::optional<LayoutAttr> layout = getLayout()) {
    std::string problem = layout->checkCovers(shape);
    if (!problem.empty() && !paddedCover(*layout, shape))
      return emitOpError("layout does not cover the ")
             << shapeStr(shape) << " loop: " << problem;
  }
  return success();
}

LogicalResult ParallelOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getShape().size())
    return emitOpError("expected ")
           << getShape().size() << " loop indices, got "
           << body.getNumArguments();
  WalkResult nested = getBody().walk([&](Operation *op) {
    if (isa<KernelOp, CopyOp, FillOp, ParallelOp, PipelinedOp, GemmOp, ReduceOp,
            AllocSharedOp, AllocFragmentOp, AllocLocalOp, WarpGroupsOp>(op)) {
      op->emitOpError("cannot be nested in a tile.parallel body");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(nested.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// PipelinedOp
//===----------------------------------------------------------------------===//

// tile.pipelined %k = %lb to %ub step %s num_stages = 3 {attrs} { ... }
ParseResult PipelinedOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  Builder &b = parser.getBuilder();
  Type index = b.getIndexType();
  int64_t stages;
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lb) || parser.parseKeyword("to") ||
      parser.parseOperand(ub) || parser.parseKeyword("step") ||
      parser.parseOperand(step) || parser.parseKeyword("num_stages") ||
      parser.parseEqual() || parser.parseInteger(stages) ||
      parser.resolveOperand(lb, index, result.operands) ||
      parser.resolveOperand(ub, index, result.operands) ||
      parser.resolveOperand(step, index, result.operands))
    return failure();
  result.addAttribute(getNumStagesAttrName(result.name),
                      b.getI64IntegerAttr(stages));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  iv.type = index;
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {iv}))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void PipelinedOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printOperand(getBody().getArgument(0));
  p << " = " << getLowerBound() << " to " << getUpperBound() << " step "
    << getStep() << " num_stages = " << getNumStages();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getNumStagesAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult PipelinedOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  // I64Attr's accessor is unsigned: compare the signed value.
  int64_t stages = getNumStagesAttr().getInt();
  if (stages < 1)
    return emitOpError("num_stages must be at least 1, got ") << stages;
  if (getCopiesLast() && stages < 2)
    return emitOpError("copies_last needs a pipelined loop (num_stages >= 2), got ") << stages;
  APInt step;
  if (matchPattern(getStep(), m_ConstantInt(&step)) && !step.isStrictlyPositive())
    return emitOpError("step must be positive, got ") << step.getSExtValue();
  return success();
}

LogicalResult PipelinedOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 || !body.getArgument(0).getType().isIndex())
    return emitOpError("expects one index induction variable");
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

/// Whether tensor cores multiply `in` x `in` into `acc`.
static bool isSupportedMma(Type in, Type acc) {
  if (in.isF16())
    return acc.isF32() || acc.isF16();
  if (in.isBF16() || in.isF32() || isa<Float8E4M3FNType, Float8E5M2Type>(in))
    return acc.isF32();
  if (in.isInteger(8))
    return acc.isInteger(32);
  return false;
}

/// Checks that `mma` fits the gemm: its warps cover the block, its atoms
/// tile each warp's share of C, and it reads A from where A is.
static LogicalResult verifyMma(GemmOp op, MmaAttr mma, int64_t m, int64_t n) {
  FailureOr<int64_t> threads = getEnclosingThreads(op);
  if (failed(threads))
    return failure();
  if (mma.getWarpsM() * mma.getWarpsN() * 32 != *threads)
    return op.emitOpError("mma partition has ")
           << mma.getWarpsM() << " x " << mma.getWarpsN() << " warps but the kernel has "
           << *threads << " threads";
  // A wgmma warpgroup's four warps hold 16 rows each of its n columns, of
  // one m64 row block or of several.
  bool tiles = mma.getKind() == MmaKind::Wgmma
                   ? mma.getWarpsM() % 4 == 0 && m % (16 * mma.getWarpsM()) == 0 &&
                         n == mma.getN() * mma.getWarpsN()
                   : m % (mma.getWarpsM() * mma.getM()) == 0 &&
                         n % (mma.getWarpsN() * mma.getN()) == 0;
  if (!tiles)
    return op.emitOpError("mma partition ")
           << mma.getWarpsM() << " x " << mma.getWarpsN() << " warps of m" << mma.getM()
           << "n" << mma.getN() << " atoms does not tile C (" << m << "x" << n << ")";
  int64_t bits = op.getA().getType().getElementTypeBitWidth();
  if (mma.getKind() == MmaKind::Wgmma && mma.getK() * bits != 256)
    return op.emitOpError("a wgmma atom reads 32 bytes of K: k = ")
           << 256 / bits << " for " << op.getA().getType().getElementType() << " inputs, got "
           << mma.getK();
  OperandPlace a = getPlace(op.getA().getType()) == Place::Fragment
                       ? OperandPlace::Registers
                       : OperandPlace::Shared;
  if (mma.getA() != a)
    return op.emitOpError("mma reads A from ")
           << stringifyOperandPlace(mma.getA()) << " but A is in "
           << stringifyOperandPlace(a);
  return success();
}

LogicalResult GemmOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  MemRefType a = getA().getType(), b = getB().getType(), c = getC().getType();
  Place pa = getPlace(a), pb = getPlace(b), pc = getPlace(c);
  if (pa != Place::Shared && pa != Place::Fragment)
    return emitOpError("A must be in shared memory or a fragment, got ")
           << describePlace(a);
  if (pb != Place::Shared)
    return emitOpError("B must be in shared memory, got ") << describePlace(b);
  if (pc != Place::Fragment)
    return emitOpError("C must be a fragment, got ") << describePlace(c);
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("A, B and C must be 2-d, got ranks ")
           << a.getRank() << ", " << b.getRank() << ", " << c.getRank();
  if (!a.hasStaticShape() || !b.hasStaticShape() || !c.hasStaticShape())
    return emitOpError("A, B and C must have static shapes, got ")
           << shapeStr(a.getShape()) << ", " << shapeStr(b.getShape()) << ", "
           << shapeStr(c.getShape());
  int64_t m = getTransposeA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t ka = getTransposeA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = getTransposeB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = getTransposeB() ? b.getDimSize(0) : b.getDimSize(1);
  if (ka != kb)
    return emitOpError("A has K = ") << ka << " but B has K = " << kb;
  if (c.getDimSize(0) != m || c.getDimSize(1) != n)
    return emitOpError("C must be ")
           << m << "x" << n << " (M x N), got " << shapeStr(c.getShape());
  Type ea = a.getElementType(), eb = b.getElementType(), ec = c.getElementType();
  if (ea != eb)
    return emitOpError("A and B must have the same element type, got ")
           << ea << " and " << eb;
  if (!isSupportedMma(ea, ec))
    return emitOpError("unsupported element types: ")
           << ea << " x " << eb << " -> " << ec
           << " (supported: f16 -> f32|f16, bf16 -> f32, f32 -> f32, "
              "i8 -> i32, f8E4M3FN|f8E5M2 -> f32)";
  if (std::optional<int64_t> wait = getWgWait(); wait && *wait < -1)
    return emitOpError("wg_wait must be -1 (no wait) or more, got ") << *wait;
  if (failed(verifyPrefetch()))
    return failure();
  if (MmaAttr mma = getMmaAttr())
    return verifyMma(*this, mma, m, n);
  return success();
}

LogicalResult GemmOp::verifyPrefetch() {
  if (getPrefetch().empty()) {
    if (getPrefetchWait())
      return emitOpError("has a prefetch_wait but no prefetch stages");
    return success();
  }
  if (getPrefetch().size() != 4)
    return emitOpError("prefetch takes 4 stages (A's and B's first, A's and B's next), got ")
           << getPrefetch().size();
  if (!getPrefetchWait() || *getPrefetchWait() < 0)
    return emitOpError("prefetch needs a prefetch_wait of 0 or more");
  for (auto [i, stage] : llvm::enumerate(getPrefetch())) {
    Value operand = i % 2 ? getB() : getA();
    if (stage.getType() != operand.getType() || !stage.getDefiningOp<StageOp>() ||
        !operand.getDefiningOp<StageOp>() ||
        stage.getDefiningOp<StageOp>().getSource() != operand.getDefiningOp<StageOp>().getSource())
      return emitOpError("prefetch stage ")
             << i << " must be a tile.stage of the buffer " << (i % 2 ? "B" : "A")
             << " is a stage of";
  }
  if (MmaAttr mma = getMmaAttr(); mma && mma.getKind() != MmaKind::MmaSync)
    return emitOpError("prefetches only on mma.sync");
  auto loop = dyn_cast<scf::ForOp>((*this)->getParentOp());
  if (!loop || (*this)->getNextNode() != loop.getBody()->getTerminator())
    return emitOpError("prefetches only as the last op of an scf.for");
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (failed(getEnclosingThreads(*this)))
    return failure();
  MemRefType src = getSrc().getType(), dst = getDst().getType();
  for (auto [name, type] : {std::pair<StringRef, MemRefType>{"source", src},
                            {"destination", dst}}) {
    Place place = getPlace(type);
    if (place != Place::Fragment && place != Place::Shared)
      return emitOpError() << name << " must be a fragment or in shared memory,"
                           << " got " << describePlace(type);
    if (!type.hasStaticShape())
      return emitOpError() << name << " must have a static shape, got "
                           << shapeStr(type.getShape());
  }
  int64_t dim = getDim();
  if (dim < 0 || dim >= src.getRank())
    return emitOpError("dim ") << dim << " is out of range for a rank-"
                               << src.getRank() << " source";
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + dim);
  if (expected.empty())
    expected.push_back(1);
  if (dst.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("destination must be ")
           << shapeStr(expected) << " (the source " << shapeStr(src.getShape())
           << " without dimension " << dim << "), got "
           << shapeStr(dst.getShape());
  if (src.getElementType() != dst.getElementType())
    return emitOpError("source and destination element types differ: ")
           << src.getElementType() << " vs " << dst.getElementType();
  return success();
}

LogicalResult WaitWgmmaOp::verify() {
  if (auto pending = static_cast<int64_t>(getPending()); pending < 0)
    return emitOpError("pending must be non-negative, got ") << pending;
  for (Value f : getFragments())
    if (getPlace(cast<MemRefType>(f.getType())) != Place::Fragment)
      return emitOpError("waits for gemm accumulators, which are fragments; got ")
             << describePlace(cast<MemRefType>(f.getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shared-buffer queries
//===----------------------------------------------------------------------===//

SwizzleAttr mlir::tile::tmaSwizzle(MLIRContext *ctx) { return SwizzleAttr::get(ctx, 3, 4, 3); }

bool mlir::tile::isTmaSwizzle(SwizzleAttr swizzle) {
  return swizzle && swizzle.getBits() == 3 && swizzle.getBase() == 4 && swizzle.getShift() == 3;
}

SwizzleAttr mlir::tile::tmaSwizzleForRows(MLIRContext *ctx, int64_t rowBytes) {
  switch (rowBytes) {
  case 32:
    return SwizzleAttr::get(ctx, 1, 4, 3);
  case 64:
    return SwizzleAttr::get(ctx, 2, 4, 3);
  case 128:
    return tmaSwizzle(ctx);
  default:
    return SwizzleAttr();
  }
}

int64_t mlir::tile::tmaSwizzleBytes(SwizzleAttr swizzle) {
  if (!swizzle || swizzle.getBase() != 4 || swizzle.getShift() != 3 || swizzle.getBits() < 1 ||
      swizzle.getBits() > 3)
    return 0;
  return int64_t(16) << swizzle.getBits();
}

int64_t mlir::tile::bufferBytes(MemRefType type) {
  return llvm::divideCeil(type.getNumElements() * type.getElementTypeBitWidth(), 8);
}

SharedLayoutAttr mlir::tile::sharedLayout(AllocSharedOp alloc) {
  if (std::optional<SharedLayoutAttr> layout = alloc.getLayout())
    return *layout;
  return SharedLayoutAttr::get(alloc.getContext(), 0, 0, SwizzleAttr());
}

AllocSharedOp mlir::tile::sharedAllocation(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  if (auto stage = buffer.getDefiningOp<StageOp>())
    buffer = stage.getSource();
  return buffer.getDefiningOp<AllocSharedOp>();
}

std::string mlir::tile::bufferName(Value v) {
  if (Operation *def = v.getDefiningOp()) {
    Location loc = def->getLoc();
    if (auto fused = dyn_cast<FusedLoc>(loc))
      for (Location inner : fused.getLocations())
        if (isa<NameLoc>(inner))
          loc = inner;
    if (auto name = dyn_cast<NameLoc>(loc))
      return ("'" + name.getName().strref() + "'").str();
  }
  return "a buffer";
}

bool mlir::tile::isViewed(AllocSharedOp alloc) {
  return llvm::any_of(alloc->getUsers(), [](Operation *user) { return isa<ViewOp>(user); });
}
