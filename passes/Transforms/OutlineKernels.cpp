//===- OutlineKernels.cpp - tile programs -> gpu.func + metadata ----------===//

#include "passes/Passes.h"
#include "passes/Transforms/Rasterize.h"
#include "passes/Transforms/StreamK.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEOUTLINEKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-outline-kernels"

namespace {

/// On a scratch argument: it is a view (`T.Tensor(shape, dtype, X.data)`) of
/// the tensor parameter this names, which the launcher passes in its place.
constexpr llvm::StringLiteral kArgViewOfAttr = "tile.view_of";

/// The name of parameter `i` of `func`.
std::string paramName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttr))
    return name.str();
  return llvm::formatv("arg{0}", i).str();
}

/// The name of dynamic dimension `dim` of tensor parameter `i`.
std::string dimName(func::FuncOp func, unsigned i, unsigned dim) {
  if (auto dims = func.getArgAttrOfType<ArrayAttr>(i, TileDialect::kArgDimsAttr))
    if (dim < dims.size())
      if (auto name = dyn_cast<StringAttr>(dims[dim]))
        return name.str();
  return llvm::formatv("{0}_{1}", paramName(func, i), dim).str();
}

/// The runtime's dtype name of an element or scalar type.
FailureOr<std::string> dtypeName(Type type) {
  if (type.isF16())
    return std::string("float16");
  if (type.isBF16())
    return std::string("bfloat16");
  if (type.isF32())
    return std::string("float32");
  if (type.isF64())
    return std::string("float64");
  // fp8 as torch spells it (a torch tensor's dtype is checked by name).
  if (isa<Float8E4M3FNType>(type))
    return std::string("float8_e4m3fn");
  if (isa<Float8E5M2Type>(type))
    return std::string("float8_e5m2");
  if (type.isIndex())
    return std::string("int64");
  if (type.isInteger(1))
    return std::string("bool");
  if (auto i = dyn_cast<IntegerType>(type))
    if (llvm::is_contained({8u, 16u, 32u, 64u}, i.getWidth()))
      return llvm::formatv("int{0}", i.getWidth()).str();
  return failure();
}

/// Writes a grid size as an expression over constants and size names, or
/// fails at the op that cannot be expressed.
FailureOr<std::string> gridExpr(Value value, func::FuncOp func) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner()->getParentOp() == func.getOperation() &&
        arg.getType().isIntOrIndex())
      return paramName(func, arg.getArgNumber());
    emitError(value.getLoc()) << "grid size comes from a value the launch "
                                 "metadata cannot express";
    return failure();
  }
  Operation *op = value.getDefiningOp();
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return std::to_string(constant.getSExtValue());
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (arg && index && arg.getOwner()->getParentOp() == func.getOperation()) {
      auto type = cast<MemRefType>(arg.getType());
      if (*index < 0 || *index >= type.getRank()) {
        dim.emitOpError("asks for dimension ") << *index << " of a rank-" << type.getRank()
                                               << " tensor";
        return failure();
      }
      if (!type.isDynamicDim(*index))
        return std::to_string(type.getDimSize(*index));
      return dimName(func, arg.getArgNumber(), *index);
    }
  }
  auto binary = [&](const char *fmt) -> FailureOr<std::string> {
    FailureOr<std::string> lhs = gridExpr(op->getOperand(0), func);
    if (failed(lhs))
      return failure();
    FailureOr<std::string> rhs = gridExpr(op->getOperand(1), func);
    if (failed(rhs))
      return failure();
    return llvm::formatv(fmt, *lhs, *rhs).str();
  };
  if (isa<arith::AddIOp>(op))
    return binary("({0} + {1})");
  if (isa<arith::SubIOp>(op))
    return binary("({0} - {1})");
  if (isa<arith::MulIOp>(op))
    return binary("({0} * {1})");
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(op))
    return binary("({0} // {1})");
  if (isa<arith::CeilDivUIOp, arith::CeilDivSIOp>(op))
    return binary("ceildiv({0}, {1})");
  if (isa<arith::RemUIOp, arith::RemSIOp>(op))
    return binary("({0} % {1})");
  if (isa<arith::MinUIOp, arith::MinSIOp>(op))
    return binary("min({0}, {1})");
  if (isa<arith::MaxUIOp, arith::MaxSIOp>(op))
    return binary("max({0}, {1})");
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(op))
    return gridExpr(op->getOperand(0), func);
  op->emitOpError("computes a grid size, which must come from constants, "
                  "tensor sizes, integer parameters and integer arithmetic "
                  "to be part of the launch metadata");
  return failure();
}

/// How the kernel uses a global tensor: "read", "write" or "readwrite" (the
/// uses inside `within` only, when given; "" when there are none there).
StringRef accessOf(Value tensor, Operation *within = nullptr) {
  bool reads = false, writes = false, used = false;
  for (Operation *user : tensor.getUsers()) {
    if (within && !within->isAncestor(user))
      continue;
    used = true;
    if (auto copy = dyn_cast<CopyOp>(user)) {
      reads |= copy.getSrc() == tensor;
      writes |= copy.getDst() == tensor;
    } else if (auto map = dyn_cast<TensorMapOp>(user)) { // TMA loads, stores, or adds
      bool stores = false, adds = false;
      for (Operation *u : map->getUsers())
        if (auto store = dyn_cast<TmaStoreOp>(u)) {
          stores = true;
          adds |= store.getAdd();
        }
      writes |= stores;
      reads |= !stores || adds;
    } else if (isa<memref::LoadOp, vector::LoadOp>(user)) {
      reads = true;
    } else if (isa<memref::StoreOp, vector::StoreOp>(user)) {
      writes = true;
    } else if (!isa<memref::DimOp, memref::ExtractStridedMetadataOp>(user)) {
      reads = writes = true;
    }
  }
  if (within && !used)
    return "";
  if (reads && writes)
    return "readwrite";
  return writes ? "write" : "read";
}

/// Whether argument `i` of `func` is a T.alloc_global scratch tensor.
bool isScratch(func::FuncOp func, unsigned i) {
  return func.getArgAttr(i, kArgScratchAttr) != nullptr;
}

/// The number of arguments of `func` the caller passes (the scratch tensors
/// follow them).
unsigned numParams(func::FuncOp func) {
  unsigned n = 0;
  while (n < func.getNumArguments() && !isScratch(func, n))
    ++n;
  return n;
}

/// The dtype name of argument `i` of `func`, or an error at it.
FailureOr<std::string> argDtype(func::FuncOp func, unsigned i) {
  BlockArgument arg = func.getArgument(i);
  auto memref = dyn_cast<MemRefType>(arg.getType());
  Type elem = memref ? memref.getElementType() : arg.getType();
  if (auto named = func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgDtypeAttr))
    return named.str();
  FailureOr<std::string> dtype = dtypeName(elem);
  if (failed(dtype))
    return emitError(arg.getLoc())
           << "parameter '" << paramName(func, i) << "' has type " << elem
           << ", which kernels cannot take";
  return dtype;
}

/// The shape of tensor argument `i`: static sizes and the names of dynamic ones.
ArrayAttr shapeOf(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  SmallVector<Attribute> shape;
  auto memref = cast<MemRefType>(func.getArgument(i).getType());
  for (auto [dim, size] : llvm::enumerate(memref.getShape()))
    shape.push_back(ShapedType::isDynamic(size)
                        ? Attribute(b.getStringAttr(dimName(func, i, dim)))
                        : Attribute(b.getI64IntegerAttr(size)));
  return b.getArrayAttr(shape);
}

/// The `strides` metadata of tensor parameter `i` stored with explicit
/// strides (T.StridedTensor): per dimension the int stride, or the name of
/// the symbol the launcher binds to the argument's stride (tile.strides).
ArrayAttr stridesOf(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  auto memref = cast<MemRefType>(func.getArgument(i).getType());
  auto names = func.getArgAttrOfType<ArrayAttr>(i, "tile.strides");
  auto [strides, offset] = memref.getStridesAndOffset();
  SmallVector<Attribute> result;
  for (auto [dim, stride] : llvm::enumerate(strides)) {
    StringAttr name = names && dim < names.size() ? dyn_cast<StringAttr>(names[dim]) : nullptr;
    if (ShapedType::isDynamic(stride))
      result.push_back(b.getStringAttr(
          name && !name.getValue().empty()
              ? name.str()
              : llvm::formatv("{0}_stride{1}", paramName(func, i), dim).str()));
    else
      result.push_back(b.getI64IntegerAttr(stride));
  }
  return b.getArrayAttr(result);
}

/// The `params` metadata of the first `count` arguments of `func`; the
/// users of `uses[i]` say how the kernel accesses tensor argument i.
FailureOr<ArrayAttr> paramsMetadata(func::FuncOp func, ValueRange uses,
                                    unsigned count) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  SmallVector<Attribute> params;
  for (unsigned i = 0; i < count; ++i) {
    BlockArgument arg = func.getArgument(i);
    NamedAttrList param;
    param.set("name", b.getStringAttr(paramName(func, i)));
    FailureOr<std::string> dtype = argDtype(func, i);
    if (failed(dtype))
      return failure();
    param.set("dtype", b.getStringAttr(*dtype));
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!memref) {
      param.set("kind", b.getStringAttr("scalar"));
      params.push_back(param.getDictionary(ctx));
      continue;
    }
    bool strided = !memref.getLayout().isIdentity();
    if (getPlace(memref) != Place::Global ||
        (strided && (!memref.isStrided() ||
                     memref.getStridesAndOffset().second != 0)))
      return emitError(arg.getLoc())
             << "parameter '" << paramName(func, i)
             << "' must be a global tensor, row-major or with strides at offset 0, got "
             << memref;
    param.set("kind", b.getStringAttr("tensor"));
    param.set("shape", shapeOf(func, i));
    if (strided)
      param.set("strides", stridesOf(func, i));
    param.set("access", b.getStringAttr(accessOf(uses[i])));
    params.push_back(param.getDictionary(ctx));
  }
  return b.getArrayAttr(params);
}

/// The tensor parameter scratch argument `i` is a view of (tile.view_of),
/// if it names one.
std::optional<unsigned> viewBase(func::FuncOp func, unsigned i) {
  auto base = func.getArgAttrOfType<StringAttr>(i, kArgViewOfAttr);
  if (!base)
    return std::nullopt;
  for (unsigned p = 0, n = numParams(func); p < n; ++p) {
    // Of any element type: a view may reinterpret the bytes (T.view).
    if (isa<MemRefType>(func.getArgument(p).getType()) && paramName(func, p) == base.getValue())
      return p;
  }
  return std::nullopt;
}

/// The `scratch` metadata of `func` (name, dtype and shape of each
/// T.alloc_global tensor); every dynamic size must be one a parameter has,
/// since the launcher sizes the scratch from the arguments.
FailureOr<ArrayAttr> scratchMetadata(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  unsigned params = numParams(func);
  llvm::StringSet<> symbols;
  for (unsigned i = 0; i < params; ++i)
    if (auto memref = dyn_cast<MemRefType>(func.getArgument(i).getType()))
      for (int64_t dim = 0; dim < memref.getRank(); ++dim)
        if (memref.isDynamicDim(dim))
          symbols.insert(dimName(func, i, dim));
  SmallVector<Attribute> scratch;
  for (unsigned i = params; i < func.getNumArguments(); ++i) {
    BlockArgument arg = func.getArgument(i);
    if (!isScratch(func, i))
      return emitError(arg.getLoc())
             << "parameter '" << paramName(func, i)
             << "' follows a scratch tensor; scratch tensors (tile.scratch) "
                "must be the last arguments";
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!memref || getPlace(memref) != Place::Global ||
        !memref.getLayout().isIdentity())
      return emitError(arg.getLoc())
             << "scratch tensor '" << paramName(func, i)
             << "' must be a row-major global tensor, got " << arg.getType();
    for (int64_t dim = 0; dim < memref.getRank(); ++dim)
      if (memref.isDynamicDim(dim) && !symbols.contains(dimName(func, i, dim)) &&
          dimName(func, i, dim) != kSmCountSymbol)
        return emitError(arg.getLoc())
               << "scratch tensor '" << paramName(func, i) << "' dim " << dim
               << " is the size '" << dimName(func, i, dim)
               << "', which no tensor parameter has";
    FailureOr<std::string> dtype = argDtype(func, i);
    if (failed(dtype))
      return failure();
    NamedAttrList entry;
    entry.set("name", b.getStringAttr(paramName(func, i)));
    entry.set("dtype", b.getStringAttr(*dtype));
    entry.set("shape", shapeOf(func, i));
    if (auto base = func.getArgAttrOfType<StringAttr>(i, kArgViewOfAttr)) {
      std::optional<unsigned> of = viewBase(func, i);
      if (!of)
        return emitError(arg.getLoc())
               << "view '" << paramName(func, i) << "' is of '" << base.getValue()
               << "', which is no tensor parameter";
      entry.set("view_of", base);
    }
    if (func.getArgAttr(i, kArgZeroFillAttr))
      entry.set("zero_fill", b.getBoolAttr(true));
    scratch.push_back(entry.getDictionary(ctx));
  }
  return b.getArrayAttr(scratch);
}

/// The launch shape of `kernel`: grid, threads and dynamic shared memory.
FailureOr<NamedAttrList> launchMetadata(func::FuncOp func, KernelOp kernel) {
  Builder b(func.getContext());
  SmallVector<Attribute> grid;
  SmallVector<std::string> sizes;
  for (Value size : kernel.getGrid()) {
    FailureOr<std::string> expr = gridExpr(size, func);
    if (failed(expr))
      return failure();
    sizes.push_back(*expr);
    grid.push_back(b.getStringAttr(*expr));
  }
  if (kernel->hasAttr(kStreamKAttr)) // one block per SM: all share the last wave
    grid = {b.getStringAttr(kSmCountSymbol)};
  else if (kernel->hasAttr(kPersistentAttr)) // one block per SM at most
    grid = {b.getStringAttr("min(" + llvm::join(sizes, " * ") + ", " + kSmCountSymbol + ")")};
  while (grid.size() < 3)
    grid.push_back(b.getStringAttr("1"));

  NamedAttrList meta;
  meta.set("grid", b.getArrayAttr(grid));
  int64_t threads = kernel.getThreads();
  if (auto producers = kernel->getAttrOfType<IntegerAttr>(kProducerThreadsAttr))
    threads += producers.getInt();
  meta.set("threads", b.getI64ArrayAttr({threads, 1, 1}));
  int64_t shared = 0;
  if (auto bytes = kernel->getAttrOfType<IntegerAttr>("tile.shared_bytes"))
    shared = bytes.getInt();
  meta.set("shared_bytes", b.getI64IntegerAttr(shared));
  // T.sync_grid: every block must be resident at once, which a cooperative
  // launch guarantees (or refuses).
  if (kernel->hasAttr("tile.cooperative")) {
    if (kernel->hasAttr(kClusterDimsAttr))
      return kernel.emitOpError("synchronises its whole grid (T.sync_grid), a cooperative "
                                "launch, and is launched in thread-block clusters "
                                "(cluster_dims): tlc launches one or the other");
    meta.set("cooperative", b.getBoolAttr(true));
  }
  return meta;
}

/// Makes each tile.tensor_map of the outlined kernel a 128-byte kernel
/// parameter after the ordinary ones (one per distinct tensor, box and
/// swizzle); returns their description (the metadata's `tensor_maps`, null
/// when there are none). The kernel carries their count as
/// `tile.tensor_maps` for tile-grid-constant-params, which makes them
/// __grid_constant__.
FailureOr<ArrayAttr> tensorMapParams(gpu::GPUFuncOp gpuFunc, func::FuncOp func) {
  SmallVector<TensorMapOp> maps;
  gpuFunc.walk([&](TensorMapOp op) { maps.push_back(op); });
  if (maps.empty())
    return ArrayAttr();
  MLIRContext *ctx = gpuFunc.getContext();
  Builder b(ctx);
  SmallVector<Attribute> described;
  // The maps made so far: (tensor, box, swizzle) and their parameter (the
  // ops themselves are erased as they are replaced).
  struct Made {
    Value src;
    SmallVector<int64_t> box;
    int64_t swizzle;
    BlockArgument param;
  };
  SmallVector<Made> params;
  Block &entry = gpuFunc.getBody().front();
  for (TensorMapOp op : maps) {
    auto arg = dyn_cast<BlockArgument>(op.getSrc());
    if (!arg || arg.getOwner() != &entry)
      return op.emitOpError("maps a tensor that is not an argument of the kernel");
    BlockArgument param;
    for (const Made &seen : params)
      if (seen.src == op.getSrc() && ArrayRef<int64_t>(seen.box) == op.getBox() &&
          seen.swizzle == op.getSwizzle())
        param = seen.param;
    if (!param) {
      unsigned index = gpuFunc.getNumArguments();
      if (failed(gpuFunc.insertArguments({index}, {op.getType()}, {DictionaryAttr()},
                                         {op.getLoc()})))
        return failure();
      param = gpuFunc.getArgument(index);
      params.push_back({op.getSrc(), llvm::to_vector(op.getBox()), op.getSwizzle(), param});
      NamedAttrList d;
      d.set("param", b.getStringAttr(paramName(func, arg.getArgNumber())));
      d.set("box", b.getI64ArrayAttr(op.getBox()));
      d.set("swizzle", b.getI64IntegerAttr(op.getSwizzle()));
      d.set("fill", b.getStringAttr("zero"));
      described.push_back(d.getDictionary(ctx));
    }
    op.getResult().replaceAllUsesWith(param);
    op.erase();
  }
  gpuFunc->setAttr(kTensorMapsAttr, b.getI64IntegerAttr(params.size()));
  return b.getArrayAttr(described);
}

/// Outlines `kernel` of `func` into the gpu.func `name` (in the gpu.module
/// `name`_kernel), with the function's ops before the kernel (sizes,
/// constants) cloned in front of its body; returns its launch metadata.
FailureOr<DictionaryAttr> outlineKernel(func::FuncOp func, KernelOp kernel,
                                        StringRef name) {
  FailureOr<NamedAttrList> meta = launchMetadata(func, kernel);
  if (failed(meta))
    return failure();
  OpBuilder b(func);
  auto gpuModule =
      gpu::GPUModuleOp::create(b, func.getLoc(), (name + "_kernel").str());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto gpuFunc =
      gpu::GPUFuncOp::create(b, func.getLoc(), name, func.getFunctionType());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // A warp-specialized kernel runs its producer warps beside the threads
  // the program asked for (tile-pipeline-loops adds them).
  int32_t threads = kernel.getThreads();
  if (auto producers = kernel->getAttrOfType<IntegerAttr>(kProducerThreadsAttr)) {
    threads += producers.getInt();
    gpuFunc->setAttr(kProducerThreadsAttr, producers);
  }
  gpuFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  // T.Kernel(..., cluster_dims=...): PTX's .reqnctapercluster, and the
  // launcher's check that the grid is whole clusters.
  if (auto dims = kernel->getAttrOfType<DenseI32ArrayAttr>(kClusterDimsAttr)) {
    TargetAttr target = TargetAttr::lookup(kernel);
    if (target && !target.has(TargetFeature::Cluster))
      return kernel.emitOpError("is launched in thread-block clusters (cluster_dims), which "
                                "need sm_90a; the target is ")
             << target.getArch();
    gpuFunc->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(), dims);
    // ptxas gives a cluster kernel with no register bound fewer registers than
    // the launch leaves it (80 at 256 threads, spilling where 111 fit): bound
    // it by the launch's share, as a kernel without clusters gets.
    if (!kernel->hasAttr("tile.min_blocks_per_sm"))
      gpuFunc->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                       b.getI32IntegerAttr(std::min<int32_t>(255, 65536 / threads / 8 * 8)));
    meta->set("cluster_dims", b.getI64ArrayAttr(SmallVector<int64_t>(dims.asArrayRef())));
  }
  if (auto bytes = kernel->getAttr("tile.shared_bytes"))
    gpuFunc->setAttr("tile.shared_bytes", bytes);
  // T.annotate_min_blocks_per_sm: PTX's .minnctapersm (ptxas then keeps the
  // registers low enough for that many blocks an SM).
  if (auto blocks = kernel->getAttrOfType<IntegerAttr>("tile.min_blocks_per_sm"))
    gpuFunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                     b.getI32IntegerAttr(blocks.getInt()));

  // Move the function body in; the block indices become gpu.block_id.
  Block &entry = gpuFunc.getBody().front();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(func.getArguments(), entry.getArguments()))
    mapping.map(from, to);
  b.setInsertionPointToEnd(&entry);
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (isa<KernelOp>(op) && &op != kernel.getOperation())
      continue; // another launch of the same program
    if (&op != kernel.getOperation()) {
      b.clone(op, mapping);
      continue;
    }
    static constexpr gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                              gpu::Dimension::z};
    SmallVector<Value> ids;
    for (size_t i = 0; i < kernel.getBlockIndices().size(); ++i)
      ids.push_back(gpu::BlockIdOp::create(b, kernel.getLoc(), dims[i]));
    if (auto raster = kernel->getAttrOfType<DictionaryAttr>(kRasterizationAttr))
      if (ids.size() == 2 && !kernel->hasAttr(kPersistentAttr))
        rasterize(b, kernel.getLoc(), raster, gpu::GridDimOp::create(b, kernel.getLoc(), gpu::Dimension::x),
                  gpu::GridDimOp::create(b, kernel.getLoc(), gpu::Dimension::y), ids);
    for (auto [index, id] : llvm::zip(kernel.getBlockIndices(), ids))
      mapping.map(index, id);
    for (Operation &inner : kernel.getBody().front())
      b.clone(inner, mapping);
    break; // the ops after this kernel belong to later launches
  }
  gpu::ReturnOp::create(b, func.getLoc());
  // How this kernel uses each tensor (before its tensor maps, which read,
  // become parameters).
  FailureOr<ArrayAttr> params =
      paramsMetadata(func, entry.getArguments(), func.getNumArguments());
  if (failed(params))
    return failure();
  meta->set("params", *params);
  FailureOr<ArrayAttr> maps = tensorMapParams(gpuFunc, func);
  if (failed(maps))
    return failure();
  if (*maps)
    meta->set("tensor_maps", *maps);
  return meta->getDictionary(func.getContext());
}

/// Checks that `func`'s kernels can be launched one after another: each is
/// directly in the function, the last one ends it, and the ops between them
/// only compute values (they are cloned into every later kernel).
/// A kernel that writes a tensor parameter's memory under one name (the
/// parameter, or a view of it) touches it under no other: the passes see two
/// names as two tensors (a TMA store, a table read ahead of its iteration,
/// the order of accesses), so the aliasing would go unseen.
LogicalResult checkViewAliasing(func::FuncOp func, KernelOp kernel) {
  unsigned params = numParams(func);
  for (unsigned p = 0; p < params; ++p) {
    SmallVector<unsigned> names{p};
    for (unsigned i = params; i < func.getNumArguments(); ++i)
      if (viewBase(func, i) == p)
        names.push_back(i);
    if (names.size() < 2)
      continue;
    SmallVector<unsigned> used;
    std::optional<unsigned> writer;
    for (unsigned i : names) {
      StringRef access = accessOf(func.getArgument(i), kernel);
      if (access.empty())
        continue;
      used.push_back(i);
      if (access != "read")
        writer = i;
    }
    if (writer && used.size() > 1) {
      unsigned other = used.front() == *writer ? used[1] : used.front();
      return kernel.emitOpError("writes the memory of '")
             << paramName(func, p) << "' as '" << paramName(func, *writer)
             << "' and also uses it as '" << paramName(func, other)
             << "'; a kernel that writes a tensor must use one name for it (the parameter "
                "or one view)";
    }
  }
  return success();
}

LogicalResult checkSequence(func::FuncOp func, ArrayRef<KernelOp> kernels) {
  for (KernelOp kernel : kernels)
    if (failed(checkViewAliasing(func, kernel)))
      return failure();
  if (func.getNumResults() != 0)
    return func.emitOpError("a tile program returns nothing; it writes its "
                            "outputs into tensor arguments");
  for (KernelOp kernel : kernels)
    if (kernel->getParentOp() != func.getOperation())
      return kernel.emitOpError("must be directly in its function, outside any "
                                "loop or condition");
  Operation *last = func.getBody().front().getTerminator()->getPrevNode();
  if (!isa<KernelOp>(last))
    return last->emitOpError("follows the last tile.kernel of its function, "
                             "where nothing runs it");
  for (Operation &op : func.getBody().front().without_terminator())
    if (!isa<KernelOp>(op) &&
        (op.getNumRegions() != 0 || hasEffect<MemoryEffects::Write>(&op) ||
         (!isMemoryEffectFree(&op) && !hasEffect<MemoryEffects::Read>(&op))))
      return op.emitOpError("is outside every tile.kernel but writes memory or "
                            "has regions; only values the kernels read may be "
                            "computed between them");
  return success();
}

/// The name of launch `i` of `n` of `func`: the function's own name when it
/// launches one kernel, else `<func>_k<i>`, which no other symbol may have.
FailureOr<std::string> launchName(func::FuncOp func, KernelOp kernel, size_t i,
                                  size_t n) {
  if (n == 1)
    return func.getSymName().str();
  std::string name = llvm::formatv("{0}_k{1}", func.getSymName(), i).str();
  auto module = func->getParentOfType<ModuleOp>();
  for (const std::string &symbol : {name, name + "_kernel"})
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return kernel.emitOpError("is launch ")
             << i << " of '" << func.getSymName() << "', named '" << name
             << "', but the module already has a symbol '" << symbol << "'";
  return name;
}

LogicalResult outlineFunc(func::FuncOp func, ArrayRef<KernelOp> kernels,
                          NamedAttrList &allMeta) {
  if (failed(checkSequence(func, kernels)))
    return failure();
  MLIRContext *ctx = func.getContext();
  unsigned params = numParams(func);
  FailureOr<ArrayAttr> scratch = scratchMetadata(func);
  if (failed(scratch))
    return failure();
  if (kernels.size() == 1 && scratch->empty()) { // the common case, as it always was
    FailureOr<DictionaryAttr> meta =
        outlineKernel(func, kernels.front(), func.getSymName());
    if (failed(meta))
      return failure();
    allMeta.set(func.getSymName(), *meta);
    func.erase();
    return success();
  }
  // A sequence: its launches in order, the parameters with their access
  // over all of them, and the scratch tensors the launcher allocates.
  Builder b(ctx);
  FailureOr<ArrayAttr> programParams =
      paramsMetadata(func, func.getArguments(), params);
  if (failed(programParams))
    return failure();
  // A tensor written or read through a view is written or read.
  SmallVector<Attribute> merged(programParams->getValue());
  for (unsigned i = params; i < func.getNumArguments(); ++i) {
    std::optional<unsigned> of = viewBase(func, i);
    if (!of)
      continue;
    NamedAttrList param(cast<DictionaryAttr>(merged[*of]).getValue());
    StringRef mine = cast<StringAttr>(param.get("access")).getValue();
    StringRef through = accessOf(func.getArgument(i));
    bool reads = mine != "write" || through != "write";
    bool writes = mine != "read" || through != "read";
    // An unused parameter reads as "read"; its view decides then.
    if (func.getArgument(*of).use_empty()) {
      reads = through != "write";
      writes = through != "read";
    }
    param.set("access", b.getStringAttr(reads && writes ? "readwrite" : writes ? "write" : "read"));
    merged[*of] = param.getDictionary(ctx);
  }
  programParams = b.getArrayAttr(merged);
  SmallVector<Attribute> launches;
  for (auto [i, kernel] : llvm::enumerate(kernels)) {
    FailureOr<std::string> name = launchName(func, kernel, i, kernels.size());
    if (failed(name))
      return failure();
    FailureOr<DictionaryAttr> meta = outlineKernel(func, kernel, *name);
    if (failed(meta))
      return failure();
    NamedAttrList launch(meta->getValue());
    launch.set("name", b.getStringAttr(*name));
    launches.push_back(launch.getDictionary(ctx));
  }
  NamedAttrList program;
  program.set("launches", b.getArrayAttr(launches));
  program.set("params", *programParams);
  program.set("scratch", *scratch);
  allMeta.set(func.getSymName(), program.getDictionary(ctx));
  func.erase();
  return success();
}

struct TileOutlineKernels : mlir::tile::impl::TileOutlineKernelsBase<TileOutlineKernels> {
  void runOnOperation() final {
    if (failed(outlineKernels(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::outlineKernels(ModuleOp module) {
  NamedAttrList allMeta;
  if (auto existing = module->getAttrOfType<DictionaryAttr>("tile.kernels"))
    allMeta.append(existing.getValue());
  SmallVector<std::pair<func::FuncOp, SmallVector<KernelOp>>> programs;
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<KernelOp> kernels;
    func.walk([&](KernelOp k) { kernels.push_back(k); });
    if (!kernels.empty())
      programs.push_back({func, std::move(kernels)});
  }
  if (programs.empty())
    return success();
  for (auto &[func, kernels] : programs)
    if (failed(outlineFunc(func, kernels, allMeta)))
      return failure();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  module->setAttr("tile.kernels", allMeta.getDictionary(module.getContext()));
  return success();
}
