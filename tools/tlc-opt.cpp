//===- tlc-opt.cpp - The tlc optimizer driver -----------------------------===//
//
// MlirOptMain with the tile dialect, every tlc pass, and the upstream
// dialects and passes that tlc's pipeline emits and runs. `--tile-target=ARCH`
// puts #tile.target<"ARCH"> on the module before the pass pipeline runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::opt<std::string>
    tileTarget("tile-target",
               llvm::cl::desc("Set the module's #tile.target to this architecture "
                              "(sm_80, sm_86, sm_89, sm_90, sm_90a) first"),
               llvm::cl::value_desc("arch"), llvm::cl::init(""));

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tile::registerTileDialects(registry);
  mlir::tile::registerTilePipelinePasses();
  auto [inputFile, outputFile] =
      mlir::registerAndParseCLIOptions(argc, argv, "tlc optimizer driver\n", registry);
  mlir::MlirOptMainConfig cli = mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::MlirOptMainConfig config = cli;
  if (!tileTarget.empty())
    config.setPassPipelineSetupFn([cli](mlir::PassManager &pm) {
      pm.addPass(mlir::tile::createTileSetTarget({tileTarget.getValue()}));
      return cli.setupPassPipeline(pm);
    });
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
