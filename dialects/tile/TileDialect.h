//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//

#ifndef TLC_DIALECTS_TILE_TILEDIALECT_H
#define TLC_DIALECTS_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tile/TileDialect.h.inc"
#include "dialects/tile/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.h.inc"

namespace mlir::tile {

/// On a tile.kernel (and its outlined gpu.func): the threads of the producer
/// warpgroup tile-pipeline-loops added beside the kernel's own `threads`,
/// which keep meaning the threads that run the program (the consumers).
constexpr llvm::StringLiteral kProducerThreadsAttr = "tile.producer_threads";

/// On a tile.copy: T.copy(..., disable_tma=True); tile-pipeline-loops and
/// tile-select-tma-stores leave that copy off TMA.
constexpr llvm::StringLiteral kDisableTmaAttr = "tile.disable_tma";
/// On a tile.copy of a shared tile to a global tensor: T.atomic_add(...,
/// use_tma=True), which tile-select-tma-stores makes a `tile.tma_store ...
/// add` (or reports why it cannot); no other pass lowers it.
constexpr llvm::StringLiteral kTmaReduceAddAttr = "tile.tma_reduce_add";

/// TMA's 128-byte swizzle, the one wgmma's shared operands use too: 16-byte
/// chunks XOR-ed with the row within 8 rows of 128 bytes
/// (#tile.swizzle<bits = 3, base = 4, shift = 3>), a box's rows at most
/// kTmaSwizzleBytes wide.
constexpr int64_t kTmaSwizzleBytes = 128;
SwizzleAttr tmaSwizzle(MLIRContext *ctx);
bool isTmaSwizzle(SwizzleAttr swizzle);
/// The narrower swizzles TMA and wgmma share, for rows of `rowBytes` = 32, 64
/// or 128 bytes: 16-byte chunks XOR-ed with the row within 8 rows
/// (#tile.swizzle<bits = log2(rowBytes / 16), base = 4, shift = 3>); null
/// for other widths. tmaSwizzleBytes is the inverse (0: none of them).
SwizzleAttr tmaSwizzleForRows(MLIRContext *ctx, int64_t rowBytes);
int64_t tmaSwizzleBytes(SwizzleAttr swizzle);

/// The bytes a buffer of `type` takes (its elements, rounded up to a byte).
int64_t bufferBytes(MemRefType type);

/// Where a buffer lives in the memory hierarchy.
enum class Place { Global, Shared, Fragment, Local, Unknown };

/// The place of a memref type, read from its memory space.
Place getPlace(MemRefType type);

/// A short name of a place for messages ("global", "shared", ...).
llvm::StringRef stringifyPlace(Place place);

/// The memory space attribute of fragment or local buffers.
Attribute getPlaceAttr(MLIRContext *ctx, Place place);

/// Why TMA cannot map a tensor of `type` (rank, element size, strides not
/// known or not multiples of 16 bytes), or empty when it can.
std::string tmaProblem(MemRefType type);

/// The widest vector (elements, at most `limit`) that an access along the
/// last dimension of a tensor of `type` may move at once as far as its
/// strides go: `limit` for row-major tensors; for tensors stored with
/// explicit strides (T.StridedTensor) 1 unless the last stride is 1, and then
/// a power of two dividing every other stride (1 where one is known only at
/// run time), so that a vector's elements are adjacent and it stays aligned.
int64_t stridedVectorLimit(MemRefType type, int64_t limit);

/// The #tile.shared layout of a shared allocation (the plain one when it has
/// none).
SharedLayoutAttr sharedLayout(AllocSharedOp alloc);

/// The shared allocation `buffer` is, or is one stage of (tile.stage), or a
/// tile.view of; null for anything else (a fragment, a global tensor).
AllocSharedOp sharedAllocation(Value buffer);

/// The program's name for a buffer (the NameLoc the frontend gives its
/// allocation: "'A_shared'"), else "a buffer".
std::string bufferName(Value v);

/// Whether the program views `alloc` with another shape or element type
/// (tile.view: T.reshape / T.view), which pins its plain row-major layout.
bool isViewed(AllocSharedOp alloc);

/// The threads of the block that run some code: `count` threads from
/// `first`, a tile.ws body's (`part`), or the whole block's.
struct ThreadGroup {
  int64_t first = 0, count = 0;
  bool part = false;
  bool whole() const { return !part; }
  bool operator==(const ThreadGroup &o) const {
    return first == o.first && count == o.count && part == o.part;
  }
  /// "warpgroups 0, 1" or "warps 1, 2" (a tile.ws body's threads).
  std::string describe() const {
    bool groups = first % 128 == 0 && count % 128 == 0;
    int64_t size = groups ? 128 : 32;
    std::string s = groups ? "warpgroup" : "warp";
    if (count > size)
      s += "s";
    for (int64_t u = first / size; u < (first + count) / size; ++u)
      s += (u == first / size ? " " : ", ") + std::to_string(u);
    return s;
  }
};

/// The threads that run `op`: its innermost tile.ws's, else its kernel's
/// (a tile.kernel, or the gpu.func tile-outline-kernels made of one, less a
/// producer warpgroup the compiler added). An error at `op` outside a
/// kernel.
FailureOr<ThreadGroup> threadGroupOf(Operation *op);

/// The threads that hold the buffer `alloc` allocates (a fragment): those of
/// the tile.ws its uses are in, else the kernel's; an error at the
/// allocation naming two uses when they run on different threads.
FailureOr<ThreadGroup> bufferThreadGroup(Operation *alloc);

} // namespace mlir::tile

#endif // TLC_DIALECTS_TILE_TILEDIALECT_H
