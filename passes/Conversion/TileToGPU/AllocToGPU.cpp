//===- AllocToGPU.cpp - Buffers: the type converter and allocations -------===//
//
// What each tile-level buffer becomes in a thread: the type converter and
// the patterns of the ops that make buffers (tile.alloc_fragment/local/
// shared, tile.stage) or address them element by element (tile.shared_ptr,
// memref.load/store of local and laid-out shared buffers).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tile;

/// The converted type of a shared buffer (see TileTypeConverter).
static Type sharedType(Value v) {
  auto type = cast<MemRefType>(v.getType());
  AllocSharedOp alloc = sharedAllocation(v);
  if (!alloc || sharedLayout(alloc).isPlain())
    return type;
  Attribute space = type.getMemorySpace();
  Type elem = type.getElementType();
  if (v.getDefiningOp<StageOp>()) {
    auto strided = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, {1});
    return MemRefType::get({type.getNumElements()}, elem, strided, space);
  }
  return MemRefType::get({type.getNumElements()}, elem, MemRefLayoutAttrInterface(), space);
}

TileTypeConverter::TileTypeConverter() {
  // Added first, so tried last (after the type-only conversion below gave
  // up): buffers whose form depends on their allocation.
  addConversion([](Value v) -> std::optional<Type> {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type)
      return std::nullopt;
    if (getPlace(type) == Place::Shared)
      return sharedType(v);
    if (getPlace(type) != Place::Fragment)
      return std::nullopt;
    AllocFragmentOp alloc = fragmentRoot(v); // the allocation's registers, or a view's
    if (!alloc || !alloc.getLayout())
      return std::nullopt; // no form: the conversion fails on its users
    return MemRefType::get({alloc.getLayout()->getRegs()}, type.getElementType());
  });
  addConversion([](Type t) -> std::optional<Type> {
    auto type = dyn_cast<MemRefType>(t);
    if (!type)
      return t;
    switch (getPlace(type)) {
    case Place::Local:
      return MemRefType::get(type.getShape(), type.getElementType());
    case Place::Fragment:
    case Place::Shared:
      return std::nullopt; // by value, above
    default:
      return t;
    }
  });
}

FailureOr<Fragment> mlir::tile::convertedFragment(Operation *op, Value original, Value regs,
                                                  StringRef what) {
  if (std::optional<Fragment> f = fragmentOf(original, regs))
    return *f;
  return op->emitOpError() << what << " must be a fragment of this kernel";
}

namespace {

/// tile.alloc_fragment: each thread's registers, a memref.alloca that LLVM
/// promotes, in the kernel's entry block.
struct AllocFragmentLowering : TileOpLowering<AllocFragmentOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(AllocFragmentOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<LayoutAttr> layout = op.getLayout();
    if (!layout)
      return op.emitOpError("has no layout; run tile-infer-layout first");
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(info.entry);
    auto type = MemRefType::get({layout->getRegs()}, op.getType().getElementType());
    // 16-byte aligned: the copies move runs of registers as 16-byte vectors,
    // which must be aligned where the array stays in memory (indexed at run
    // time) rather than in registers.
    rewriter.replaceOp(op, memref::AllocaOp::create(rewriter, op.getLoc(), type,
                                                    rewriter.getI64IntegerAttr(16)));
    return success();
  }
};

/// tile.alloc_local: a per-thread array in the kernel's entry block.
struct AllocLocalLowering : TileOpLowering<AllocLocalOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(AllocLocalOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(info.entry);
    MemRefType type = op.getType();
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    rewriter.replaceOp(op, memref::AllocaOp::create(rewriter, op.getLoc(), plain,
                                                    rewriter.getI64IntegerAttr(16)));
    return success();
  }
};

/// tile.alloc_shared: a view of the block's dynamic shared memory at the
/// buffer's offset; flat (1-d) when its #tile.shared layout is not plain.
struct AllocSharedLowering : TileOpLowering<AllocSharedOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(AllocSharedOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError("has no offset; run tile-allocate-shared-memory first");
    if (sharedLayout(op).getStages() > 0)
      for (Operation *user : op->getUsers())
        if (!isa<StageOp>(user))
          return user->emitOpError("uses a multi-buffered shared allocation "
                                   "other than through tile.stage");
    Location loc = op.getLoc();
    Value byteOffset = arith::ConstantIndexOp::create(rewriter, loc, *offset);
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getResult()));
    rewriter.replaceOp(op, memref::ViewOp::create(rewriter, loc, type, info.smem, byteOffset,
                                                  ValueRange{}));
    return success();
  }
};

/// tile.stage: a subview of the allocation's flat view from the stage's
/// first element (sharedBufferOf reads the two back).
struct StageLowering : TileOpLowering<StageOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(StageOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t perStage = op.getType().getNumElements();
    Value base = arith::MulIOp::create(rewriter, loc, adaptor.getIndex(),
                                       arith::ConstantIndexOp::create(rewriter, loc, perStage));
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getResult()));
    rewriter.replaceOpWithNewOp<memref::SubViewOp>(
        op, type, adaptor.getSource(), ValueRange{base}, ValueRange{}, ValueRange{},
        rewriter.getDenseI64ArrayAttr({ShapedType::kDynamic}),
        rewriter.getDenseI64ArrayAttr({perStage}), rewriter.getDenseI64ArrayAttr({1}));
    return success();
  }
};

/// tile.view: of a fragment, the allocation's registers themselves (accesses
/// through the view find them by the view's layout, fragmentOf); of a shared
/// buffer, the block's dynamic shared memory at the allocation's offset with
/// the view's type, or, where the allocation is laid out otherwise than row
/// by row (a gemm operand's swizzle), a flat array of the view's elements,
/// each addressed where the layout puts its bytes (sharedAddress).
struct ViewLowering : TileOpLowering<ViewOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(ViewOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (getPlace(op.getType()) == Place::Fragment) {
      rewriter.replaceOp(op, adaptor.getSource());
      return success();
    }
    AllocSharedOp alloc = sharedAllocation(op.getSource());
    if (!alloc || !alloc.getOffset() || !info.smem)
      return op.emitOpError("views a shared allocation with no offset; run "
                            "tile-allocate-shared-memory first");
    SharedLayoutAttr layout = sharedLayout(alloc);
    if (!layout.isPlain()) {
      // A view element must lie in bytes the layout keeps together: a
      // swizzle moves 16-byte pieces, column blocks keep runs of a block's
      // row, and no piece spans two of the allocation's rows.
      MemRefType allocType = alloc.getType();
      int64_t viewBytes = std::max<int64_t>(1, op.getType().getElementTypeBitWidth() / 8);
      int64_t allocBytes = std::max<int64_t>(1, allocType.getElementTypeBitWidth() / 8);
      int64_t together = allocType.getDimSize(allocType.getRank() - 1) * allocBytes;
      if (SwizzleAttr swizzle = layout.getSwizzle(); swizzle && swizzle.getBits())
        together = std::gcd(together, int64_t(1) << swizzle.getBase());
      if (int64_t block = layout.getColumnBlock())
        together = std::gcd(together, block * allocBytes);
      if (layout.getStages() > 0 || (viewBytes > allocBytes && together % viewBytes != 0))
        return op.emitOpError("views ")
               << bufferName(alloc.getResult()) << " with elements of " << viewBytes
               << " bytes, which its layout (" << layout
               << ") does not keep together; view it with elements of at most " << together
               << " bytes";
    }
    Value byteOffset =
        arith::ConstantIndexOp::create(rewriter, op.getLoc(), *alloc.getOffset());
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getResult()));
    rewriter.replaceOpWithNewOp<memref::ViewOp>(op, type, info.smem, byteOffset, ValueRange{});
    return success();
  }
};

/// tile.shared_ptr: the byte address of the element in the shared window,
/// through the buffer's flat view where it is swizzled or staged.
struct SharedPtrLowering : TileOpLowering<SharedPtrOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(SharedPtrOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> ptr = sharedElementPointer(rewriter, op, op.getBuffer(), adaptor.getBuffer(),
                                                adaptor.getIndices());
    if (failed(ptr))
      return failure();
    rewriter.replaceOp(op, *ptr);
    return success();
  }
};

/// tile.make_tensor: the memref descriptor of a row-major tensor at the
/// address (generic address space, offset 0, row-major strides), handed to
/// the memref users through a cast that the LLVM lowering folds away, and
/// marked 16-byte aligned as tensor parameters are.
struct MakeTensorLowering : TileOpLowering<MakeTensorOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(MakeTensorOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    MemRefType type = op.getType();
    int64_t rank = type.getRank();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i64 = rewriter.getI64Type();
    auto array = LLVM::LLVMArrayType::get(i64, rank);
    auto descType = LLVM::LLVMStructType::getLiteral(ctx, {ptrType, ptrType, i64, array, array});
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, i64, rewriter.getI64IntegerAttr(v));
    };
    Value ptr = LLVM::IntToPtrOp::create(rewriter, loc, ptrType, adaptor.getAddress());
    Value desc = LLVM::PoisonOp::create(rewriter, loc, descType);
    desc = LLVM::InsertValueOp::create(rewriter, loc, desc, ptr, ArrayRef<int64_t>{0});
    desc = LLVM::InsertValueOp::create(rewriter, loc, desc, ptr, ArrayRef<int64_t>{1});
    desc = LLVM::InsertValueOp::create(rewriter, loc, desc, constant(0), ArrayRef<int64_t>{2});
    SmallVector<Value> sizes;
    auto dynamic = adaptor.getSizes().begin();
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(type.isDynamicDim(d)
                          ? (Value)arith::IndexCastOp::create(rewriter, loc, i64, *dynamic++)
                          : constant(type.getDimSize(d)));
    Value stride = constant(1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      desc = LLVM::InsertValueOp::create(rewriter, loc, desc, sizes[d], ArrayRef<int64_t>{3, d});
      desc = LLVM::InsertValueOp::create(rewriter, loc, desc, stride, ArrayRef<int64_t>{4, d});
      stride = LLVM::MulOp::create(rewriter, loc, stride, sizes[d]);
    }
    Value tensor = UnrealizedConversionCastOp::create(rewriter, loc, type, desc).getResult(0);
    rewriter.replaceOpWithNewOp<memref::AssumeAlignmentOp>(op, tensor, kParamAlignment);
    return success();
  }
};

} // namespace

FailureOr<Value> mlir::tile::sharedElementPointer(OpBuilder &b, Operation *op, Value original,
                                                  Value converted, ValueRange indices) {
  Location loc = op->getLoc();
  std::optional<SharedBuffer> shared = sharedBufferOf(original, converted);
  auto [memref, at] = sharedAddress(b, loc, shared ? &*shared : nullptr, converted, indices);
  auto type = cast<MemRefType>(memref.getType());
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (ShapedType::isDynamic(type.getDimSize(d)) && d > 0)
      return op->emitOpError("addresses a buffer of dynamic shape");
    Value term =
        arith::MulIOp::create(b, loc, at[d], arith::ConstantIndexOp::create(b, loc, stride));
    linear = arith::AddIOp::create(b, loc, linear, term);
    stride *= d > 0 ? type.getDimSize(d) : 1;
  }
  int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, linear, arith::ConstantIndexOp::create(b, loc, bytes)));
  Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i64)
      .getResult();
}

namespace {

/// Why a run of `width` elements from an element of `shared` that its
/// vector access promises to be `alignment`-byte aligned (in the buffer's
/// own row-major order) might not be contiguous once laid out, or "" when
/// it is: a run of R = width x element bytes, R a power of two at most the
/// alignment, in rows (and column blocks, and stages) whose bytes R
/// divides, and a swizzle that leaves the low log2(R) address bits alone.
std::string vectorRunProblem(const SharedBuffer &shared, int64_t width,
                             std::optional<uint64_t> alignment) {
  int64_t elemBytes = std::max<int64_t>(1, shared.type.getElementTypeBitWidth() / 8);
  int64_t run = width * elemBytes;
  std::string why;
  llvm::raw_string_ostream os(why);
  if (!llvm::isPowerOf2_64(run) || !alignment || int64_t(*alignment) < run) {
    os << "a vector of " << run << " bytes needs an alignment of at least " << run
       << " bytes (a power of two) to stay contiguous in a laid-out shared buffer";
    return why;
  }
  if (shared.type.getShape().back() * elemBytes % run) {
    os << "rows of " << shared.type.getShape().back() * elemBytes << " bytes are not whole "
       << run << "-byte vectors";
    return why;
  }
  if (int64_t block = shared.layout.getColumnBlock(); block && block * elemBytes % run) {
    os << "column blocks of " << block * elemBytes << " bytes are not whole " << run
       << "-byte vectors";
    return why;
  }
  if (SwizzleAttr swizzle = shared.layout.getSwizzle();
      swizzle && swizzle.getBits() && (int64_t(1) << swizzle.getBase()) < run) {
    os << "the swizzle moves " << (int64_t(1) << swizzle.getBase()) << "-byte chunks, smaller "
       << "than the " << run << "-byte vector";
    return why;
  }
  return why;
}

/// memref.load/store of an element of a local buffer (its plain array) or of
/// a shared buffer with a non-plain layout (its flat view, at the position
/// the layout gives); vector.load/store of a run of elements of one
/// (T.c2d_im2col's 16-byte channel runs, T.Parallel's runs): one vector
/// access of the flat view at the run's first element, when the layout keeps
/// the run contiguous (else an error saying why). Other memrefs: the same op
/// on the converted one.
template <typename AccessOp>
struct ElementAccessLowering : TileOpLowering<AccessOp> {
  using TileOpLowering<AccessOp>::TileOpLowering;
  using OpAdaptor = typename AccessOp::Adaptor;
  static constexpr bool kVector =
      std::is_same_v<AccessOp, vector::LoadOp> || std::is_same_v<AccessOp, vector::StoreOp>;
  LogicalResult matchAndRewrite(AccessOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value original, converted;
    if constexpr (kVector) {
      original = op.getBase();
      converted = adaptor.getBase();
    } else {
      original = op.getMemref();
      converted = adaptor.getMemref();
    }
    if (getPlace(op.getMemRefType()) == Place::Fragment) {
      if constexpr (kVector)
        return op.emitOpError("vector accesses of fragments are not supported");
      if (op->template getParentOfType<ParallelOp>())
        return failure(); // tile.parallel's pattern rewrites its body's accesses
      // Outside loops: elements of a fragment every thread holds whole (a
      // finalized reducer, a fragment used as a scalar), in the thread's own
      // registers.
      std::optional<Fragment> fragment = fragmentOf(original, converted);
      MemRefType type = op.getMemRefType();
      if constexpr (!kVector) {
        if (fragment && holdsWholeTile(fragment->layout, type.getShape())) {
          Value r = ownRegister(rewriter, op.getLoc(), original, adaptor.getIndices());
          if constexpr (std::is_same_v<AccessOp, memref::LoadOp>)
            rewriter.replaceOpWithNewOp<memref::LoadOp>(op, converted, ValueRange{r});
          else
            rewriter.replaceOpWithNewOp<memref::StoreOp>(op, adaptor.getValue(), converted,
                                                         ValueRange{r});
          return success();
        }
      }
      return op.emitOpError("reads or writes a fragment element outside a parallel loop; "
                            "only fragments every thread holds whole are accessed there");
    }
    std::optional<SharedBuffer> shared = sharedBufferOf(original, converted);
    if constexpr (kVector) {
      VectorType vecType = op.getVectorType();
      if (shared && vecType.getRank() != 1)
        return op.emitOpError("accesses a laid-out shared buffer with a ")
               << vecType.getRank() << "-d vector; only 1-d runs are supported";
      std::string why =
          shared ? vectorRunProblem(*shared, vecType.getNumElements(), op.getAlignment()) : "";
      if (!why.empty())
        return op.emitOpError("accesses ") << vecType.getNumElements()
                                           << " elements of a laid-out shared buffer at once: "
                                           << why;
    }
    auto [memref, indices] = sharedAddress(rewriter, op.getLoc(), shared ? &*shared : nullptr,
                                           converted, adaptor.getIndices());
    if constexpr (std::is_same_v<AccessOp, memref::LoadOp>)
      rewriter.replaceOpWithNewOp<memref::LoadOp>(op, memref, indices);
    else if constexpr (std::is_same_v<AccessOp, memref::StoreOp>)
      rewriter.replaceOpWithNewOp<memref::StoreOp>(op, adaptor.getValue(), memref, indices);
    else if constexpr (std::is_same_v<AccessOp, vector::LoadOp>)
      rewriter.replaceOpWithNewOp<vector::LoadOp>(op, op.getVectorType(), memref, indices,
                                                  op.getNontemporal(), op.getAlignmentAttr());
    else
      rewriter.replaceOpWithNewOp<vector::StoreOp>(op, adaptor.getValueToStore(), memref,
                                                   indices, op.getNontemporal(),
                                                   op.getAlignmentAttr());
    return success();
  }
};

} // namespace

void mlir::tile::populateAllocToGPUPatterns(const TypeConverter &converter,
                                            const KernelInfo &info,
                                            RewritePatternSet &patterns) {
  patterns.add<AllocFragmentLowering,                 // tile.alloc_fragment
               AllocLocalLowering,                    // tile.alloc_local
               AllocSharedLowering,                   // tile.alloc_shared
               StageLowering,                         // tile.stage
               ViewLowering,                          // tile.view
               SharedPtrLowering,                     // tile.shared_ptr
               MakeTensorLowering,                    // tile.make_tensor
               ElementAccessLowering<memref::LoadOp>, // memref.load
               ElementAccessLowering<memref::StoreOp>, // memref.store
               ElementAccessLowering<vector::LoadOp>,  // vector.load
               ElementAccessLowering<vector::StoreOp>  // vector.store
               >(converter, info);
}
