//===- thunder-translate.cpp - Emit a lowered module's sources ------------===//
//
// mlir-translate for Thunder: each target's emitter is a translation
// (`--thunder-to-cpp`, `--thunder-to-cuda`, ...) from a module at the phase
// the target emits from to its sources, printed as one text. With thunder-opt
// it reproduces any compile:
//
//   thunder-opt --thunder-cpu-pipeline x.mlir | thunder-translate --thunder-to-cpp
//
// prints what `thunder-compile x.mlir --compile-to=source` prints.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "thunder/Pipelines/Pipelines.h"
#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"

#include <deque>

using namespace llvm;

static cl::OptionCategory category("thunder-translate options");

static cl::opt<std::string> modelName(
    "name", cl::desc("The model's name: the artifact is lib<name>.so"),
    cl::init("model"), cl::cat(category));
static cl::opt<std::string> cpu(
    "cpu", cl::desc("CPU target: the -march of the generated code"),
    cl::init("native"), cl::cat(category));
static cl::opt<std::string> arch(
    "arch", cl::desc("The device architectures, comma-separated (default: the target's)"),
    cl::value_desc("list"), cl::init(""), cl::cat(category));
static cl::alias cudaArch("cuda-arch", cl::desc("Alias for --arch"), cl::aliasopt(arch),
                          cl::cat(category));
static cl::alias hipArch("hip-arch", cl::desc("Alias for --arch"), cl::aliasopt(arch),
                         cl::cat(category));
static cl::opt<bool> externalWeights(
    "external-weights",
    cl::desc("Write the weights to <name>.safetensors instead of embedding them"),
    cl::init(false), cl::cat(category));

static cl::opt<std::string> onlyFile(
    "file",
    cl::desc("Print only this generated file's contents (model.cpp, model.cu, "
             "...), without the file headers"),
    cl::value_desc("path"), cl::init(""), cl::cat(category));

/// Prints `sources`, or with --file that one file's text alone.
static mlir::LogicalResult print(mlir::ModuleOp module,
                                 const thunder::EmittedSources &sources, raw_ostream &os) {
  if (onlyFile.empty()) {
    thunder::printSources(sources, os);
    return mlir::success();
  }
  std::vector<std::string> names;
  for (const thunder::SourceFile &file : sources.files) {
    if (file.path != onlyFile) {
      names.push_back(file.path);
      continue;
    }
    file.write(os);
    return mlir::success();
  }
  return module.emitError("--file: no generated file is named '")
         << onlyFile << "'; the files are: " << join(names, ", ");
}

int main(int argc, char **argv) {
  thunder::registerAllTargetBackends();
  // The registrations keep StringRefs to their name and description: the strings
  // live as long as main (ASan: --help read a description freed at the end of
  // its statement).
  std::deque<std::string> strings;
  for (const std::string &name : thunder::targetBackendNames()) {
    std::unique_ptr<thunder::TargetBackend> backend = thunder::createTargetBackend(name);
    const std::string &translation = strings.emplace_back(backend->translationName());
    const std::string &description = strings.emplace_back(
        "Emit the " + name + " target's sources (" +
        thunder::targetBackendDescription(name) + ")");
    mlir::TranslateFromMLIRRegistration(
        translation, description,
        [name](mlir::Operation *op, raw_ostream &os) -> mlir::LogicalResult {
          auto module = dyn_cast<mlir::ModuleOp>(op);
          if (!module)
            return op->emitError("expects a builtin.module");
          if (!thunder::isValidModelName(modelName))
            return module.emitError("--name: '")
                   << modelName << "' is not a C identifier";
          thunder::TargetOptions options;
          options.modelName = modelName;
          options.cpu = cpu;
          options.arch = arch;
          options.externalWeights = externalWeights;
          std::unique_ptr<thunder::TargetBackend> backend =
              thunder::createTargetBackend(name);
          thunder::applyTargetDefaults(*backend, options);
          if (Error invalid = backend->validateOptions(options))
            return module.emitError(toString(std::move(invalid)));
          mlir::FailureOr<thunder::EmittedSources> sources =
              thunder::emitSources(*backend, module, options);
          if (mlir::failed(sources))
            return mlir::failure();
          return print(module, *sources, os);
        },
        [](mlir::DialectRegistry &registry) {
          thunder::registerThunderDialects(registry);
        });
  }
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "Thunder translation driver\n"))
             ? 1
             : 0;
}
