//===- thunder-compile.cpp - Compile a torch.export archive ---------------===//
//
// thunder-compile model.pt2 --target=cpu -o out/       (libmodel.so, model.h)
// thunder-compile model.pt2 --target=cuda [--arch=sm_80,sm_90a] -o out/
// thunder-compile model.pt2 --target=tpu -o out/         (StableHLO, run through PJRT)
// thunder-compile model.pt2 --target=tpu --compile-to=stablehlo [-o model.mlir]
// thunder-compile model.pt2 --compile-to=<phase> [-o <file or dir>]
// thunder-compile model.pt2 --report=fusion,memory -o out/
// thunder-compile model.pt2 --examine
// thunder-compile --list-ops
// thunder-compile model.pt2 --custom-ops ops.yaml -o out/   (user kernels of custom ops)
// thunder-compile module.mlir --target=cuda --compile-to=source -o src/   (thunder IR in;
//   it enters at the phase its thunder.phase marker records, or --start-from's)
// thunder-compile module.mlir --compile-to=source   (the sources on standard output, as
//   thunder-translate prints them)
//
// A thunder::Compiler runs the target's pipeline (what thunder-opt's
// --thunder-<target>-pipeline and the Python binding run) and its code generator. Errors
// (a malformed archive, unsupported ops: all of them at once) are printed
// with the user's source lines, the exit status is non-zero, and no output
// file is written.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "thunder/Driver/Compiler.h"
#include "thunder/Import/CustomKernelsFile.h"
#include "thunder/Import/Importer.h"
#include "thunder/Import/Pt2Archive.h"
#include "thunder/Dialect/Thunder/Transforms/Reports.h"
#include "thunder/Pipelines/Pipelines.h"
#include "thunder/Target/TPU/TPUBackend.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

using namespace llvm;

static cl::OptionCategory category("thunder-compile options");

static cl::opt<std::string> inputPath(cl::Positional,
                                      cl::desc("<model.pt2 | module.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> outputPath(
    "o",
    cl::desc("Output: a directory for --compile-to=library (libNAME.so and "
             "NAME.h) or source; a file for the IR phases (default: standard "
             "output)"),
    cl::value_desc("path"), cl::init(""), cl::cat(category));
static cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after this phase: import (the program as imported), graph "
             "(after the graph pipeline), fusion (ops grouped into kernels), "
             "plan (kernels scheduled, memory planned), source (the generated "
             "sources) or library (the default: the linked shared library); for "
             "--target=tpu also stablehlo (the program XLA compiles, as text)"),
    cl::value_desc("phase"), cl::init("library"), cl::cat(category));
static cl::opt<std::string> startFrom(
    "start-from",
    cl::desc("The phase a .mlir input is at (import, graph, fusion, plan); by "
             "default its thunder.phase attribute says (none: import)"),
    cl::value_desc("phase"), cl::init(""), cl::cat(category));
static cl::opt<std::string> target("target",
                                   cl::desc("The target to compile for (--list-targets)"),
                                   cl::init("cpu"), cl::cat(category));
static cl::opt<bool> listTargets("list-targets",
                                 cl::desc("List the targets Thunder compiles for"),
                                 cl::init(false), cl::cat(category));
static cl::opt<std::string> arch(
    "arch",
    cl::desc("The device architectures to build code for, comma-separated, in the "
             "target's spelling (cuda: sm_80,sm_90a, the default; hip: gfx90a,gfx942,gfx950, "
             "the default; the library holds code for each); empty: the target's default"),
    cl::value_desc("list"), cl::init(""), cl::cat(category));
static cl::alias cudaArch("cuda-arch", cl::desc("Alias for --arch"), cl::aliasopt(arch),
                          cl::cat(category));
static cl::alias hipArch("hip-arch", cl::desc("Alias for --arch"), cl::aliasopt(arch),
                         cl::cat(category));
static cl::opt<std::string> cpu(
    "cpu", cl::desc("CPU target: the -march of the generated code (native, "
                    "x86-64-v3, ...), or several (x86-64-v3,x86-64-v4): the "
                    "library then holds code for each and picks at load"),
    cl::init("native"), cl::cat(category));
static cl::opt<std::string> modelName(
    "name", cl::desc("The model's name (default: the input file's stem): the "
                     "artifact is lib<name>.so"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> externalWeights(
    "external-weights",
    cl::desc("Write the weights to <name>.safetensors beside the library "
             "(memory-mapped at load) instead of embedding them"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> packWeights(
    "pack-weights",
    cl::desc("CPU: store fp32 weights that only feed matrix products (and a "
             "token table tied to the LM head) in the GEMM's packed layout "
             "(default; the fastest; an [n, k] weight that only ever meets up "
             "to 3 rows stays as it is, read faster as dot products). "
             "--pack-weights=false "
             "keeps them as the model has them, so an application that loads "
             "the library with its own tensors (thunder_model_load_with_weights) "
             "shares them instead of holding a packed copy"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> keepBuild(
    "keep-build-dir",
    cl::desc("Keep the build directory (sources and toolchain log)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("A directory where compiled kernel objects are kept by content "
             "and reused by later compiles (default: none)"),
    cl::init(""), cl::cat(category));
static cl::opt<unsigned> jobs(
    "jobs", cl::desc("Compiler processes at once (default: the cores)"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> decompose(
    "decompose-composites",
    cl::desc("Decompose softmax, normalizations and attention into primitives "
             "in the graph phase"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> fusion(
    "fusion",
    cl::desc("Fuse ops into kernels (default); --fusion=false compiles one "
             "kernel per op, the unfused baseline"),
    cl::init(true), cl::cat(category));
static cl::list<std::string> reports(
    "report",
    cl::desc("Print a report on standard output: fusion (every kernel, its "
             "ops and why it was not merged with its neighbours) or memory "
             "(the arena, its lower bound and every tensor's lifetime)"),
    cl::value_desc("fusion,memory"), cl::CommaSeparated, cl::cat(category));
static cl::opt<bool> examine(
    "examine",
    cl::desc("Report which ops are supported, with counts and source lines, "
             "without compiling; exit status 1 when some are not"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> customOps(
    "custom-ops",
    cl::desc("A YAML or JSON file of custom kernels (op, symbol, cpu, cpu_library, "
             "cuda): their ops import as thunder.custom_call and the sources are built "
             "into the library (docs/user-guide.md, Custom operators)"),
    cl::value_desc("ops.yaml"), cl::init(""), cl::cat(category));

static cl::opt<bool> listOps("list-ops",
                             cl::desc("List the ATen ops Thunder imports"),
                             cl::init(false), cl::cat(category));
static cl::opt<bool> listUnsupported(
    "list-unsupported",
    cl::desc("List the ATen ops Thunder does not support by design, with the reason "
             "(tab-separated)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print weight bytes in the IR (by default blobs larger than 64 "
             "bytes are elided, so large models print small)"),
    cl::init(false), cl::cat(category));

static cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("Print each op's location (the user's source line)"),
    cl::init(false), cl::cat(category));

/// A C identifier from a file stem ("my-model.v2" -> "my_model_v2").
static std::string sanitizeName(StringRef stem) {
  std::string name;
  for (char c : stem)
    name += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (name.empty() || isdigit(static_cast<unsigned char>(name[0])))
    name = "model_" + name;
  return name;
}

static int fail(const Twine &message) {
  WithColor::error(errs(), "thunder-compile") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Thunder: compile a torch.export archive (.pt2) ahead of time\n");

  thunder::registerAllTargetBackends();
  if (listOps) {
    for (const std::string &op : thunder::import::supportedOps())
      outs() << op << "\n";
    return 0;
  }
  if (listUnsupported) {
    for (const auto &[op, reason] : thunder::import::unsupportedOpReasons())
      outs() << op << "\t" << reason << "\n";
    return 0;
  }
  if (listTargets) {
    for (const std::string &name : thunder::targetBackendNames())
      outs() << name << "\t" << thunder::targetBackendDescription(name) << "\n";
    return 0;
  }
  if (inputPath.empty())
    return fail("no input: give a .pt2 file written by torch.export.save");
  // --compile-to=stablehlo: the tpu target's program alone, one file of its sources.
  bool programOnly = compileTo == "stablehlo";
  if (programOnly && target != "tpu")
    return fail("--compile-to=stablehlo writes the tpu target's program; give "
                "--target=tpu (the " + target + " target has no StableHLO)");
  std::optional<thunder::Phase> phase =
      programOnly ? std::optional(thunder::Phase::Source) : thunder::parsePhase(compileTo);
  if (!phase)
    return fail("unknown phase '" + compileTo + "' for --compile-to; the phases are: " +
                thunder::phaseNames());
  for (const std::string &report : reports)
    if (report != "fusion" && report != "memory")
      return fail("unknown report '" + report +
                  "' for --report; the reports are: fusion, memory");
  if (!reports.empty() && *phase < thunder::Phase::Plan)
    return fail("--report needs the plan phase; use it with --compile-to=plan, "
                "source or library");

  // A .mlir file holds a module of thunder IR (written by --compile-to, by
  // thunder-opt or by hand): it enters at the phase its marker records.
  bool mlirInput = StringRef(inputPath).ends_with(".mlir");
  if (mlirInput && examine)
    return fail("--examine reads a .pt2 archive, not MLIR");
  if (!startFrom.empty() && !mlirInput)
    return fail("--start-from is for .mlir input; a .pt2 archive starts at import");

  thunder::CompilerOptions options;
  options.target = target;
  options.compileTo = *phase;
  if (!startFrom.empty()) {
    options.startFrom = thunder::parsePhase(startFrom);
    if (!options.startFrom)
      return fail("unknown phase '" + startFrom + "' for --start-from; the phases are: " +
                  thunder::phaseNames());
  }
  options.pipeline.decomposeComposites = decompose;
  options.pipeline.fuse = fusion;
  options.targetOptions.cpu = cpu;
  options.targetOptions.arch = arch;
  options.targetOptions.externalWeights = externalWeights;
  options.targetOptions.packWeights = packWeights;
  options.targetOptions.modelName =
      modelName.empty() ? sanitizeName(sys::path::stem(inputPath)) : modelName;
  options.keepBuildDir = keepBuild;
  options.kernelCacheDir = kernelCache;
  options.jobs = jobs;
  Expected<thunder::Compiler> compiler = thunder::Compiler::create(options);
  if (!compiler)
    return fail(toString(compiler.takeError()));

  auto archive = mlirInput ? Expected<std::unique_ptr<thunder::Pt2Archive>>(nullptr)
                           : thunder::Pt2Archive::open(inputPath);
  if (!archive)
    return fail(toString(archive.takeError()));

  if (examine) {
    auto json = (*archive)->modelJson();
    if (!json)
      return fail(toString(json.takeError()));
    auto report =
        thunder::import::examineExportedProgram(*json, (*archive)->displayName());
    if (!report)
      return fail(toString(report.takeError()));
    outs() << thunder::import::formatExamineReport(*report);
    return report->numUnsupported() ? 1 : 0;
  }

  mlir::DialectRegistry registry;
  thunder::registerThunderDialects(registry);
  mlir::MLIRContext context(registry);
  // A diagnostic names its op's source line; the op itself (a whole model for
  // a module-level error) is not printed after it.
  context.printOpOnDiagnostic(false);
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (mlirInput) {
    module = mlir::parseSourceFile<mlir::ModuleOp>(inputPath.getValue(), sourceMgr, &context);
    if (!module)
      return fail(inputPath + ": cannot parse the module (errors above)");
  } else {
    thunder::import::ImportOptions importOptions;
    importOptions.sourceName = (*archive)->displayName().str();
    if (!customOps.empty()) {
      auto kernels = thunder::import::readCustomKernelsFile(customOps);
      if (!kernels)
        return fail(toString(kernels.takeError()));
      importOptions.customKernels = std::move(*kernels);
    }
    module = thunder::import::importPt2Archive(context, **archive, importOptions);
    if (!module)
      return fail(inputPath + ": import failed (errors above)");
  }

  if (mlir::failed(compiler->lower(*module)))
    return fail(inputPath + ": the " + target + " pipeline failed (errors above)");
  for (const std::string &report : reports)
    outs() << (report == "fusion" ? thunder::formatFusionReport(*module)
                                  : thunder::formatMemoryReport(*module));

  if (programOnly) {
    auto sources = compiler->emit(*module);
    if (mlir::failed(sources))
      return fail(inputPath + ": code generation failed (errors above)");
    std::string file = thunder::stablehloProgramFile(options.targetOptions.modelName);
    auto program = llvm::find_if(sources->files, [&](const thunder::SourceFile &f) {
      return f.path == file;
    });
    if (program == sources->files.end())
      return fail("the tpu target emitted no " + file);
    std::string errorMessage;
    auto output = mlir::openOutputFile(
        outputPath.empty() ? std::string("-") : outputPath.getValue(), &errorMessage);
    if (!output)
      return fail(errorMessage);
    program->write(output->os());
    if (output->os().has_error())
      return fail("could not write " + outputPath);
    output->keep();
    return 0;
  }

  // The sources without -o: printed as thunder-translate prints them.
  if (*phase == thunder::Phase::Source && (outputPath.empty() || outputPath == "-")) {
    auto sources = compiler->emit(*module);
    if (mlir::failed(sources))
      return fail(inputPath + ": code generation failed (errors above)");
    thunder::printSources(*sources, outs());
    return 0;
  }
  if (*phase == thunder::Phase::Source || *phase == thunder::Phase::Library) {
    if (outputPath.empty())
      return fail("give -o <directory> for --compile-to=" + compileTo);
    auto result = compiler->compile(*module, outputPath);
    if (mlir::failed(result))
      return fail(inputPath + ": compilation failed (errors above)");
    if (!result->library.empty())
      outs() << "wrote " << result->library << " and " << result->header << "\n";
    else
      outs() << "wrote the sources to " << outputPath << "\n";
    return 0;
  }

  // Written to a temporary file and renamed into place on success: a failed
  // run leaves no half-written output.
  std::string errorMessage;
  auto output = mlir::openOutputFile(
      outputPath.empty() ? std::string("-") : outputPath.getValue(), &errorMessage);
  if (!output)
    return fail(errorMessage);
  mlir::OpPrintingFlags flags;
  if (!printWeights)
    flags.elideLargeResourceString(64);
  if (printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/true);
  module->print(output->os(), flags);
  output->os() << "\n";
  if (output->os().has_error())
    return fail("could not write " + outputPath);
  output->keep();
  return 0;
}
