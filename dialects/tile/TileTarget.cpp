//===- TileTarget.cpp - #tile.target and #tile.mma ------------------------===//
//
// The one table of the GPU architectures tlc compiles for, and the
// attributes that carry the target and each gemm's instruction choice.
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/TileDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct KnownTarget {
  StringLiteral arch;
  TargetFeature features;
  int64_t sharedBytes; ///< dynamic shared memory a block may opt into
};

constexpr TargetFeature kAmpere = TargetFeature::CpAsync | TargetFeature::MmaSync;
constexpr TargetFeature kAda = kAmpere | TargetFeature::Fp8Convert;
constexpr TargetFeature kHopper =
    kAda | TargetFeature::Tma | TargetFeature::Cluster | TargetFeature::VectorReduce;

// Shared memory per block (opt-in maximum) from the CUDA programming guide's
// compute-capability table: 227 KB on sm_90, 163 KB on sm_80, 99 KB on sm_86/89.
// The 'a' features (wgmma, setmaxnreg) run on sm_90a code only.
constexpr KnownTarget kTargets[] = {
    {"sm_80", kAmpere, 166912},
    {"sm_86", kAmpere, 101376},
    {"sm_89", kAda, 101376},
    {"sm_90", kHopper, 232448},
    {"sm_90a", kHopper | TargetFeature::Wgmma | TargetFeature::SetMaxNReg, 232448},
};

constexpr int64_t kRegistersPerThread = 255;
constexpr int64_t kRegistersPerBlock = 65536;

const KnownTarget *findTarget(StringRef arch) {
  for (const KnownTarget &t : kTargets)
    if (t.arch == arch)
      return &t;
  return nullptr;
}

} // namespace

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

TargetAttr TargetAttr::getKnown(MLIRContext *ctx, StringRef arch) {
  const KnownTarget *t = findTarget(arch);
  if (!t)
    return {};
  return TargetAttr::get(ctx, arch, t->features, t->sharedBytes,
                         kRegistersPerThread, kRegistersPerBlock);
}

std::string TargetAttr::knownArchitectures() {
  std::string names;
  for (const KnownTarget &t : kTargets)
    names += (names.empty() ? "" : ", ") + t.arch.str();
  return names;
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef arch, TargetFeature features,
                                 int64_t sharedBytes, int64_t registersPerThread,
                                 int64_t registersPerBlock) {
  const KnownTarget *t = findTarget(arch);
  if (!t)
    return emitError() << "unknown target architecture '" << arch
                       << "' (known: " << knownArchitectures() << ")";
  if (!bitEnumContainsAll(t->features, features))
    return emitError() << arch << " lacks the features ["
                       << stringifyTargetFeature(features & ~t->features) << "]";
  if (sharedBytes < 0 || sharedBytes > t->sharedBytes)
    return emitError() << "shared memory limit must be within 0.." << t->sharedBytes
                       << " bytes on " << arch << ", got " << sharedBytes;
  if (registersPerThread < 1 || registersPerThread > kRegistersPerThread)
    return emitError() << "registers per thread must be within 1.."
                       << kRegistersPerThread << ", got " << registersPerThread;
  if (registersPerBlock < 1 || registersPerBlock > kRegistersPerBlock)
    return emitError() << "registers per block must be within 1.."
                       << kRegistersPerBlock << ", got " << registersPerBlock;
  return success();
}

// #tile.target<"sm_90a"> or #tile.target<"sm_90a", features = [...],
// shared = N, registers = N, block_registers = N>.
Attribute TargetAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  std::string arch;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseString(&arch))
    return {};
  const KnownTarget *known = findTarget(arch);
  if (!known) {
    parser.emitError(loc) << "unknown target architecture '" << arch
                          << "' (known: " << knownArchitectures() << ")";
    return {};
  }
  TargetFeature features = known->features;
  int64_t shared = known->sharedBytes, regs = kRegistersPerThread,
          blockRegs = kRegistersPerBlock;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "features") {
      features = TargetFeature::None;
      auto one = [&]() -> ParseResult {
        StringRef name;
        SMLoc at = parser.getCurrentLocation();
        if (parser.parseKeyword(&name))
          return failure();
        std::optional<TargetFeature> f = symbolizeTargetFeature(name);
        if (!f)
          return parser.emitError(at) << "unknown target feature '" << name << "'";
        features = features | *f;
        return success();
      };
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, one))
        return {};
    } else if (key == "shared") {
      if (parser.parseInteger(shared))
        return {};
    } else if (key == "registers") {
      if (parser.parseInteger(regs))
        return {};
    } else if (key == "block_registers") {
      if (parser.parseInteger(blockRegs))
        return {};
    } else {
      parser.emitError(keyLoc) << "unknown #tile.target field '" << key
                               << "' (expected features, shared, registers or "
                                  "block_registers)";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return TargetAttr::getChecked([&] { return parser.emitError(loc); }, ctx,
                                StringRef(arch), features, shared, regs, blockRegs);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<\"" << getArch() << "\"";
  const KnownTarget *known = findTarget(getArch());
  if (!known || getFeatures() != known->features) {
    printer << ", features = [";
    llvm::interleaveComma(
        llvm::make_filter_range(
            llvm::ArrayRef<TargetFeature>{TargetFeature::CpAsync, TargetFeature::MmaSync,
                                          TargetFeature::Tma, TargetFeature::Wgmma,
                                          TargetFeature::SetMaxNReg, TargetFeature::Cluster,
                                          TargetFeature::VectorReduce,
                                          TargetFeature::Fp8Convert},
            [&](TargetFeature f) { return has(f); }),
        printer, [&](TargetFeature f) { printer << stringifyTargetFeature(f); });
    printer << "]";
  }
  if (!known || getSharedBytes() != known->sharedBytes)
    printer << ", shared = " << getSharedBytes();
  if (getRegistersPerThread() != kRegistersPerThread)
    printer << ", registers = " << getRegistersPerThread();
  if (getRegistersPerBlock() != kRegistersPerBlock)
    printer << ", block_registers = " << getRegistersPerBlock();
  printer << ">";
}

TargetAttr TargetAttr::lookup(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp())
    if (auto module = dyn_cast<ModuleOp>(at))
      if (auto target = module->getAttrOfType<TargetAttr>(kAttrName))
        return target;
  return {};
}

FailureOr<TargetAttr> TargetAttr::require(Operation *op, StringRef pass) {
  if (TargetAttr target = lookup(op))
    return target;
  op->emitError() << pass << " needs the target: put tile.target = "
                  << "#tile.target<\"ARCH\"> on the module (tlc does; with "
                     "tlc-opt, pass --tile-target=ARCH)";
  return failure();
}

//===----------------------------------------------------------------------===//
// MmaAttr
//===----------------------------------------------------------------------===//

LogicalResult MmaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              MmaKind kind, int64_t m, int64_t n, int64_t k,
                              int64_t warpsM, int64_t warpsN, OperandPlace a,
                              int64_t depth) {
  if (m <= 0 || n <= 0 || k <= 0)
    return emitError() << "mma shape must be positive, got m = " << m << ", n = " << n
                       << ", k = " << k;
  if (warpsM <= 0 || warpsN <= 0)
    return emitError() << "mma warps must be positive, got warps_m = " << warpsM
                       << ", warps_n = " << warpsN;
  if (depth < -1)
    return emitError() << "mma depth must be -1 (no wait: a tile.wait_wgmma completes "
                          "the gemm) or more, got "
                       << depth;
  if (kind == MmaKind::MmaSync) {
    if (m != 16 || n != 8)
      return emitError() << "mma_sync atoms are m16n8, got m" << m << "n" << n;
    if (depth != 0)
      return emitError() << "mma_sync is synchronous: depth must be 0, got " << depth;
    return success();
  }
  if (m != 64 || (k != 16 && k != 32) || n % 8 != 0 || n > 256)
    return emitError() << "wgmma atoms are m64nNk16 (16-bit inputs) or m64nNk32 (8-bit) "
                          "with N a multiple of 8 up to 256, got m"
                       << m << "n" << n << "k" << k;
  if (warpsM % 4 != 0)
    return emitError() << "wgmma stacks the four warps of a warpgroup along M: warps_m "
                          "must be a multiple of 4, got warps_m = "
                       << warpsM << ", warps_n = " << warpsN;
  if (a == OperandPlace::Registers && k != 16)
    return emitError() << "wgmma reads A from registers for 16-bit inputs only (k = 16), "
                          "got k = " << k;
  return success();
}
