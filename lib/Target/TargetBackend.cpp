//===- TargetBackend.cpp - The target interface and registry --------------===//
#include "thunder/Target/TargetBackend.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "thunder/Dialect/Thunder/Transforms/Passes.h"
#include "thunder/Dialect/Thunder/Transforms/PhaseMarker.h"
#include "thunder/Pipelines/Pipelines.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <mutex>

using namespace mlir;

namespace thunder {

ByteStream::~ByteStream() = default;

bool isValidModelName(llvm::StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}
TargetBackend::~TargetBackend() = default;

void SourceFile::write(llvm::raw_ostream &os) const {
  os << contents;
  if (stream)
    stream->write(os);
}

void addSetPhase(OpPassManager &pm, Phase phase) {
  mlir::thunder::ThunderSetPhaseOptions options;
  options.phase = phaseName(phase).str();
  pm.addPass(mlir::thunder::createThunderSetPhase(options));
}

void TargetBackend::buildPipeline(OpPassManager &pm, Phase from, Phase to,
                                  const PipelineOptions &options) const {
  PlanNeeds needs = planNeeds();
  KernelPipelineOptions kernel;
  kernel.fuse = options.fuse;
  kernel.borrowOutputs = options.borrowOutputs.value_or(needs.readsBorrowed);
  kernel.libraryWorkspace = needs.libraryWorkspace;
  if (from < Phase::Graph && to >= Phase::Graph) {
    GraphPipelineOptions graph;
    graph.decomposeComposites = options.decomposeComposites;
    buildThunderGraphPipeline(pm, graph);
    addSetPhase(pm, Phase::Graph);
  }
  if (from < Phase::Fusion && to >= Phase::Fusion) {
    buildThunderFusionPipeline(pm, kernel);
    addSetPhase(pm, Phase::Fusion);
  }
  if (from < Phase::Plan && to >= Phase::Plan) {
    buildThunderPlanPipeline(pm, kernel);
    addSetPhase(pm, Phase::Plan);
  }
}

void applyTargetDefaults(const TargetBackend &backend, TargetOptions &options) {
  if (options.arch.empty())
    options.arch = backend.defaultArch().str();
}

FailureOr<EmittedSources> emitSources(TargetBackend &backend, ModuleOp module,
                                      const TargetOptions &options) {
  FailureOr<Phase> phase = mlir::thunder::readPhase(module);
  if (failed(phase))
    return failure();
  if (*phase != backend.emitsFrom())
    return module.emitError()
           << "the " << backend.name() << " target emits code for a module at "
           << "phase '" << phaseName(backend.emitsFrom()) << "', this one is at '"
           << phaseName(*phase) << "' (run thunder-opt --thunder-" << backend.name()
           << "-pipeline first, or thunder-compile, which runs it)";
  return backend.emit(module, options);
}

namespace {
/// A stream that hashes what is written to it.
class HashingStream final : public llvm::raw_ostream {
public:
  HashingStream() { SetUnbuffered(); }
  std::string hexDigest() {
    flush();
    return llvm::toHex(sha.final(), /*LowerCase=*/true);
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    sha.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(ptr), size));
    written += size;
  }
  uint64_t current_pos() const override { return written; }

  llvm::SHA256 sha;
  uint64_t written = 0;
};
} // namespace

void printSources(const EmittedSources &sources, llvm::raw_ostream &os) {
  for (const SourceFile &file : sources.files) {
    os << "// ===== " << file.path;
    if (!file.binary) {
      os << " =====\n";
      file.write(os);
      if (!file.contents.empty() && file.contents.back() != '\n')
        os << "\n";
      continue;
    }
    // Binary files (the weights) print as their size and a hash of their
    // bytes, hashed as they stream by (a model's weights are never whole in
    // memory here).
    HashingStream hash;
    file.write(hash);
    os << " (" << file.size() << " bytes, sha256 " << hash.hexDigest().substr(0, 16)
       << ") =====\n";
  }
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

namespace {
struct Registered {
  std::string name, description;
  TargetBackendFactory factory;
};
struct Registry {
  std::mutex mutex;
  std::vector<Registered> targets;
};
} // namespace

static Registry &registry() {
  static Registry instance;
  return instance;
}

void registerTargetBackend(llvm::StringRef name, llvm::StringRef description,
                           TargetBackendFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Registered &t : r.targets)
    if (t.name == name)
      return;
  r.targets.push_back({name.str(), description.str(), std::move(factory)});
}

std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Registered &t : r.targets)
    if (t.name == name)
      return t.factory();
  return nullptr;
}

std::vector<std::string> targetBackendNames() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const Registered &t : r.targets)
    names.push_back(t.name);
  return names;
}

std::string targetBackendDescription(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Registered &t : r.targets)
    if (t.name == name)
      return t.description;
  return "";
}

//===----------------------------------------------------------------------===//
// thunder-opt's target pipelines
//===----------------------------------------------------------------------===//

namespace {
/// The options of `--thunder-<target>-pipeline`.
struct TargetPipelineOptions : public PassPipelineOptions<TargetPipelineOptions> {
  Option<std::string> from{*this, "from",
                           llvm::cl::desc("The phase the input is at (import, "
                                          "graph, fusion)"),
                           llvm::cl::init("import")};
  Option<std::string> to{*this, "to",
                         llvm::cl::desc("The phase to stop at (graph, fusion, "
                                        "plan; default: the one the target "
                                        "emits from)"),
                         llvm::cl::init("")};
  Option<bool> decomposeComposites{
      *this, "decompose-composites",
      llvm::cl::desc("Decompose every composite in the graph phase"),
      llvm::cl::init(false)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse ops into kernels (off: one kernel per op)"),
                    llvm::cl::init(true)};
};
} // namespace

void registerTargetPipelines() {
  for (const std::string &name : targetBackendNames()) {
    // A multi-vendor target's name lists its parts ("cuda,hip"); a pipeline
    // name cannot hold the comma that separates a textual pipeline's passes.
    std::string pipelineName = "thunder-" + name + "-pipeline";
    std::replace(pipelineName.begin(), pipelineName.end(), ',', '-');
    std::string description =
        "The " + name + " target's pipeline (" + targetBackendDescription(name) +
        "): from the input's phase to the one its code is emitted from, "
        "exactly what thunder-compile --target=" + name + " runs";
    registerPassPipeline(
        pipelineName, description,
        [name, pipelineName](OpPassManager &pm, llvm::StringRef text,
               llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler) {
          TargetPipelineOptions options;
          if (failed(options.parseFromString(text)))
            return failure();
          std::unique_ptr<TargetBackend> backend = createTargetBackend(name);
          std::optional<Phase> from = parsePhase(options.from);
          std::optional<Phase> to =
              options.to.empty() ? backend->emitsFrom() : parsePhase(options.to);
          if (!from || !isIRPhase(*from) || !to || !isIRPhase(*to))
            return errorHandler(pipelineName + ": from='" + options.from + "' to='" +
                                options.to + "' must name phases of the IR (" +
                                "import, graph, fusion, plan)");
          if (*from >= *to)
            return errorHandler(pipelineName + ": from='" + options.from +
                                "' is not before to='" + phaseName(*to) + "'");
          PipelineOptions pipeline;
          pipeline.decomposeComposites = options.decomposeComposites;
          pipeline.fuse = options.fuse;
          backend->buildPipeline(pm, *from, *to, pipeline);
          return success();
        },
        [](llvm::function_ref<void(const detail::PassOptions &)> optHandler) {
          optHandler(TargetPipelineOptions());
        });
  }
}

} // namespace thunder
