//===- TileDialect.td - The tile dialect -------------------*- tablegen -*-===//
//
// The `tile` dialect: TileLang-style tile programs. Users place buffers in
// the memory hierarchy (global, shared, fragment, local) and act on whole
// tiles; the compiler infers thread mappings, layouts and synchronization.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TD
#define TILE_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Tile programs for NVIDIA GPUs: kernels, placed buffers, tile ops";
  let description = [{
    A `tile` program is a `func.func` whose arguments are global tensors
    (memrefs without a memory space) and scalars, and whose body launches one
    `tile.kernel`. Inside the kernel, buffers live in one of four places:

    | place    | memref memory space             | who holds an element         |
    | -------- | ------------------------------- | ---------------------------- |
    | global   | none                            | device memory                |
    | shared   | `#gpu.address_space<workgroup>` | the thread block             |
    | fragment | `#tile.space<fragment>`         | registers, spread by layout  |
    | local    | `#tile.space<local>`            | every thread has its own copy|

    Tile ops (`tile.copy`, `tile.fill`, `tile.gemm`, `tile.reduce`) act on
    whole tiles; `tile.parallel` is an elementwise loop over a tile that the
    compiler spreads over the block's threads by the layout of the fragments
    it touches; `tile.pipelined` is a loop whose copies the compiler may
    overlap with compute.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
  let extraClassDeclaration = [{
    /// Name of the function-argument attribute holding a parameter's name.
    static constexpr ::llvm::StringLiteral kArgNameAttr = "tile.name";
    /// Name of the function-argument attribute naming dynamic dimensions.
    static constexpr ::llvm::StringLiteral kArgDimsAttr = "tile.dims";
    /// Name of the function-argument attribute overriding the dtype name.
    static constexpr ::llvm::StringLiteral kArgDtypeAttr = "tile.dtype";

    /// LayoutAttr::checkCovers's answers per (layout, shape), kept with the
    /// context: verification asks the same question of every op using a
    /// layout, after every stage, and each answer enumerates threads x regs.
    std::map<std::pair<const void *, std::vector<int64_t>>, std::string> coverage;
    std::mutex coverageMutex;

    /// Answers of the passes' layout questions, kept with the context (an
    /// attribute's address names it only while its context lives):
    /// equivalentLayouts per (layout, layout), and sliceLayout per (layout,
    /// shape, dimension) as a type-erased result the passes own.
    std::map<std::pair<const void *, const void *>, bool> equivalentLayouts;
    std::map<std::tuple<const void *, std::vector<int64_t>, int64_t>,
             std::shared_ptr<const void>> slicedLayouts;
    std::mutex layoutAnswersMutex;
  }];
}

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILE_DIALECT_TD
