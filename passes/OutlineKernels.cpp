//===- OutlineKernels.cpp - tile programs -> gpu.func + metadata ----------===//

#include "passes/Passes.h"
#include "passes/TileAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"
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

/// How the kernel uses a global tensor: "read", "write" or "readwrite".
StringRef accessOf(Value tensor) {
  bool reads = false, writes = false;
  for (Operation *user : tensor.getUsers()) {
    if (auto copy = dyn_cast<CopyOp>(user)) {
      reads |= copy.getSrc() == tensor;
      writes |= copy.getDst() == tensor;
    } else if (isa<memref::LoadOp, TensorMapOp>(user)) { // TMA only loads
      reads = true;
    } else if (isa<memref::StoreOp>(user)) {
      writes = true;
    } else if (!isa<memref::DimOp>(user)) {
      reads = writes = true;
    }
  }
  if (reads && writes)
    return "readwrite";
  return writes ? "write" : "read";
}

FailureOr<DictionaryAttr> kernelMetadata(func::FuncOp func, KernelOp kernel) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  SmallVector<Attribute> grid;
  SmallVector<std::string> sizes;
  for (Value size : kernel.getGrid()) {
    FailureOr<std::string> expr = gridExpr(size, func);
    if (failed(expr))
      return failure();
    sizes.push_back(*expr);
    grid.push_back(b.getStringAttr(*expr));
  }
  if (kernel->hasAttr(kPersistentAttr)) // one block per SM at most
    grid = {b.getStringAttr("min(" + llvm::join(sizes, " * ") + ", __sm_count__)")};
  while (grid.size() < 3)
    grid.push_back(b.getStringAttr("1"));

  SmallVector<Attribute> params;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    NamedAttrList param;
    param.set("name", b.getStringAttr(paramName(func, i)));
    auto memref = dyn_cast<MemRefType>(arg.getType());
    Type elem = memref ? memref.getElementType() : arg.getType();
    FailureOr<std::string> dtype = dtypeName(elem);
    if (auto named = func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgDtypeAttr))
      dtype = named.str();
    if (failed(dtype))
      return emitError(arg.getLoc())
             << "parameter '" << paramName(func, i) << "' has type " << elem
             << ", which kernels cannot take";
    param.set("dtype", b.getStringAttr(*dtype));
    if (!memref) {
      param.set("kind", b.getStringAttr("scalar"));
      params.push_back(param.getDictionary(ctx));
      continue;
    }
    if (getPlace(memref) != Place::Global || !memref.getLayout().isIdentity())
      return emitError(arg.getLoc())
             << "parameter '" << paramName(func, i)
             << "' must be a row-major global tensor, got " << memref;
    param.set("kind", b.getStringAttr("tensor"));
    SmallVector<Attribute> shape;
    for (auto [dim, size] : llvm::enumerate(memref.getShape()))
      shape.push_back(ShapedType::isDynamic(size)
                          ? Attribute(b.getStringAttr(dimName(func, i, dim)))
                          : Attribute(b.getI64IntegerAttr(size)));
    param.set("shape", b.getArrayAttr(shape));
    param.set("access", b.getStringAttr(accessOf(arg)));
    params.push_back(param.getDictionary(ctx));
  }

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
  meta.set("params", b.getArrayAttr(params));
  return meta.getDictionary(ctx);
}

/// Makes each tile.tensor_map of the outlined kernel a 128-byte kernel
/// parameter after the ordinary ones (one per distinct tensor, box and
/// swizzle), described in the kernel's metadata as `tensor_maps`; the
/// kernel carries their count as `tile.tensor_maps` for
/// tile-grid-constant-params, which makes them __grid_constant__.
LogicalResult tensorMapParams(gpu::GPUFuncOp gpuFunc, func::FuncOp func,
                              NamedAttrList &allMeta) {
  SmallVector<TensorMapOp> maps;
  gpuFunc.walk([&](TensorMapOp op) { maps.push_back(op); });
  if (maps.empty())
    return success();
  MLIRContext *ctx = gpuFunc.getContext();
  Builder b(ctx);
  SmallVector<Attribute> described;
  SmallVector<std::pair<TensorMapOp, BlockArgument>> params;
  Block &entry = gpuFunc.getBody().front();
  for (TensorMapOp op : maps) {
    auto arg = dyn_cast<BlockArgument>(op.getSrc());
    if (!arg || arg.getOwner() != &entry)
      return op.emitOpError("maps a tensor that is not an argument of the kernel");
    BlockArgument param;
    for (auto &[seen, p] : params)
      if (seen.getSrc() == op.getSrc() && seen.getBox() == op.getBox() &&
          seen.getSwizzle() == op.getSwizzle())
        param = p;
    if (!param) {
      unsigned index = gpuFunc.getNumArguments();
      if (failed(gpuFunc.insertArguments({index}, {op.getType()}, {DictionaryAttr()},
                                         {op.getLoc()})))
        return failure();
      param = gpuFunc.getArgument(index);
      params.push_back({op, param});
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
  auto meta = cast<DictionaryAttr>(allMeta.get(func.getSymName()));
  NamedAttrList updated(meta.getValue());
  updated.set("tensor_maps", b.getArrayAttr(described));
  allMeta.set(func.getSymName(), updated.getDictionary(ctx));
  return success();
}

LogicalResult outlineFunc(func::FuncOp func, KernelOp kernel,
                          NamedAttrList &allMeta) {
  if (func.getNumResults() != 0)
    return func.emitOpError("a tile program returns nothing; it writes its "
                            "outputs into tensor arguments");
  if (kernel->getParentOp() != func.getOperation() ||
      !isa<func::ReturnOp>(kernel->getNextNode()))
    return kernel.emitOpError("must be the last operation of its function, "
                              "outside any loop or condition");
  FailureOr<DictionaryAttr> meta = kernelMetadata(func, kernel);
  if (failed(meta))
    return failure();
  allMeta.set(func.getSymName(), *meta);

  OpBuilder b(func);
  auto gpuModule = gpu::GPUModuleOp::create(
      b, func.getLoc(), (func.getSymName() + "_kernel").str());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto gpuFunc = gpu::GPUFuncOp::create(b, func.getLoc(), func.getSymName(),
                                        func.getFunctionType());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // A warp-specialized kernel runs its producer warps beside the threads
  // the program asked for (tile-pipeline-loops adds them).
  int32_t threads = kernel.getThreads();
  if (auto producers = kernel->getAttrOfType<IntegerAttr>(kProducerThreadsAttr)) {
    threads += producers.getInt();
    gpuFunc->setAttr(kProducerThreadsAttr, producers);
  }
  gpuFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  if (auto bytes = kernel->getAttr("tile.shared_bytes"))
    gpuFunc->setAttr("tile.shared_bytes", bytes);

  // Move the function body in; the block indices become gpu.block_id.
  Block &entry = gpuFunc.getBody().front();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(func.getArguments(), entry.getArguments()))
    mapping.map(from, to);
  b.setInsertionPointToEnd(&entry);
  for (Operation &op : func.getBody().front().without_terminator()) {
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
  }
  gpu::ReturnOp::create(b, func.getLoc());
  if (failed(tensorMapParams(gpuFunc, func, allMeta)))
    return failure();
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
  SmallVector<std::pair<func::FuncOp, KernelOp>> programs;
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<KernelOp> kernels;
    func.walk([&](KernelOp k) { kernels.push_back(k); });
    if (kernels.empty())
      continue;
    if (kernels.size() > 1)
      return kernels[1].emitOpError("is the second tile.kernel in '")
             << func.getSymName() << "'; a tile program launches one kernel";
    programs.push_back({func, kernels.front()});
  }
  if (programs.empty())
    return success();
  for (auto [func, kernel] : programs)
    if (failed(outlineFunc(func, kernel, allMeta)))
      return failure();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  module->setAttr("tile.kernels", allMeta.getDictionary(module.getContext()));
  return success();
}
