//===- TargetBackend.h - The interface every target implements --*- C++ -*-===//
//
// DESIGN.md decision 7: a target backend owns its lowering. It builds its own
// pass pipeline between named phases, emits the sources of a lowered module
// (kernels and the host program implementing thunder-c/artifact.h), and names
// its toolchain. Backends are found by name in a registry: a new target
// registers itself (lib/Target/RegisterTargets.cpp) and the driver, the CLI,
// the Python binding, thunder-opt's `--thunder-<name>-pipeline` and
// thunder-translate's `--thunder-to-<lang>` all pick it up from there.
// docs/architecture.md says how to add one.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_TARGET_TARGETBACKEND_H
#define THUNDER_TARGET_TARGETBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "thunder/Support/Phase.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace thunder {

/// Options every backend understands.
struct TargetOptions {
  std::string modelName = "model";
  /// CPU: the -march value ("native", "x86-64-v3", ...).
  std::string cpu = "native";
  /// The device architectures to build code for, comma-separated, in the
  /// target's spelling (cuda: "sm_80,sm_90a", one cubin each); empty: the
  /// target's default (TargetBackend::defaultArch), which the Compiler and
  /// thunder-translate fill in (applyTargetDefaults).
  std::string arch;
  /// Optimization level passed to the toolchain.
  int optLevel = 2;
  /// Write the weights to NAME.safetensors beside the library (memory-mapped
  /// at load) instead of embedding them in it.
  bool externalWeights = false;
  /// CPU: store fp32 weights that only feed GEMMs (or embedding lookups too:
  /// a tied token table) in the GEMM's packed panel layout (the fastest to
  /// read, but for an [n, k] weight that only meets up to 3 rows: that one
  /// stays as it is). Off: they stay as the model has them, so a
  /// library loaded with the caller's tensors (thunder_model_load_with_weights)
  /// reads them in place instead of holding a second, packed copy.
  bool packWeights = true;
  /// CPU, with embedded weights: the weights the application gives at load
  /// (thunder_model_load_with_weights), by name, with their thunder_dtype and
  /// shape. A constant that is one of them as it is (its name, dtype and
  /// shape) is not embedded: the library keeps no copy of it
  /// (THUNDER_WEIGHT_NOT_EMBEDDED) and loads only with it provided.
  /// thunder.compile passes the module's tensors, which it always provides;
  /// empty (every weight embedded) for artifacts that stand alone.
  std::map<std::string, std::pair<int, std::vector<int64_t>>> providedWeights;
  /// One partition of a library that holds several (Compiler::compilePartitions):
  /// "_pN", appended to the model's exported entry symbols and to the other global
  /// names its host program defines, so that the partitions link into one library.
  /// "" for an ordinary, one-model library.
  std::string partitionSuffix;
};

/// True when `name` is a C identifier: a model name becomes file names and C
/// symbols (TargetOptions::modelName).
bool isValidModelName(llvm::StringRef name);

/// Options of the pipelines every backend builds (the graph and kernel
/// phases); a backend maps them onto its own passes.
struct PipelineOptions {
  /// Decompose every composite (softmax, norms, attention) in the graph phase.
  bool decomposeComposites = false;
  /// Fuse ops into kernels; off: one kernel per op (the unfused baseline).
  bool fuse = true;
  /// Plan with or without tensors borrowing output buffers, whatever the
  /// backend needs: for reports that compare plans (thunder.memory_plan),
  /// not for code that a backend emits.
  std::optional<bool> borrowOutputs;
};

/// Bytes a backend writes after a file's text without holding them whole
/// (the weights: views of the module's resource blobs, streamed to disk).
class ByteStream {
public:
  virtual ~ByteStream();
  /// How many bytes write() writes.
  virtual uint64_t size() const = 0;
  /// Writes the bytes to `os`.
  virtual void write(llvm::raw_ostream &os) const = 0;
};

/// A file the backend produced, relative to the build directory: `contents`
/// followed by `stream`'s bytes when there is one.
struct SourceFile {
  std::string path;
  std::string contents;
  std::shared_ptr<const ByteStream> stream;
  /// True for files a reader does not read as text (weights).
  bool binary = false;

  /// The file's bytes: `contents`, then the stream's.
  void write(llvm::raw_ostream &os) const;
  /// How many bytes write() writes.
  uint64_t size() const { return contents.size() + (stream ? stream->size() : 0); }
};

/// What the backend emitted for a module.
struct EmittedSources {
  std::vector<SourceFile> files;
  /// Files among `files` to compile and link (the rest are headers/data).
  std::vector<std::string> compileUnits;
  /// Files among `files` that ship beside the library (external weights).
  std::vector<std::string> artifacts;
};

/// What a kernel pipeline's memory plan must provide for a backend's code
/// (thunder-plan-memory's options).
struct PlanNeeds {
  /// The backend places tensors in output buffers (thunder.borrowed).
  bool readsBorrowed = false;
  /// Bytes of workspace each gemm/conv kernel's library call gets in the
  /// arena (thunder.workspace); 0: the backend needs none.
  int64_t libraryWorkspace = 0;
};

/// A command line to run in the build directory.
struct ToolchainCommand {
  std::vector<std::string> argv;
};

/// One compile of a unit into an object file, run before link(). The driver
/// runs the steps in parallel, in their order, each once the steps it comes
/// `after` have finished, and, when it has a kernel cache, takes the object
/// from the cache by `key` instead of compiling it (and puts what it compiles
/// there, atomically).
struct UnitCompile {
  /// The command; it writes `object`.
  std::vector<std::string> argv;
  /// Absolute path of the object (or precompiled header) in the build dir.
  std::string object;
  /// A digest of everything the object depends on except the compiler
  /// binary, which the driver adds ("": never cached).
  std::string key;
  /// The objects of the steps this one needs first (a precompiled header
  /// before its users); the others run beside it.
  std::vector<std::string> after;
  /// Whether the step may fail without failing the build (an optional
  /// precompiled header: its users then parse the header).
  bool optional = false;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// "cpu", "cuda", ...: what --target names.
  virtual llvm::StringRef name() const = 0;
  /// The translation that emits this target's sources, without "--"
  /// ("thunder-to-cpp"): thunder-translate registers it.
  virtual llvm::StringRef translationName() const = 0;

  /// Adds to `pm` (on a module) the passes that take a module at phase
  /// `from` to phase `to`, both IR phases with from < to. Each phase ends
  /// with thunder-set-phase. The default builds Thunder's graph, fusion and
  /// planning pipelines, planning for planNeeds(); a target that needs no
  /// kernels or arena builds something else.
  virtual void buildPipeline(mlir::OpPassManager &pm, Phase from, Phase to,
                             const PipelineOptions &options) const;

  /// What the memory plan must provide for this backend's code (used by the
  /// default buildPipeline).
  virtual PlanNeeds planNeeds() const { return {}; }

  /// The architectures TargetOptions::arch means when it is empty ("" for a
  /// target that has no choice of architecture).
  virtual llvm::StringRef defaultArch() const { return ""; }

  /// Checks the options this target reads (its architectures, ...) before any
  /// IR is touched; the message names the option.
  virtual llvm::Error validateOptions(const TargetOptions &options) const {
    return llvm::Error::success();
  }

  /// The IR phase emit() takes (Phase::Plan for the kernel backends).
  virtual Phase emitsFrom() const { return Phase::Plan; }

  /// Emits kernels and the host program for `module`, which is at phase
  /// emitsFrom(). Reports errors as diagnostics on the offending ops.
  virtual mlir::FailureOr<EmittedSources>
  emit(mlir::ModuleOp module, const TargetOptions &options) = 0;

  /// The command that compiles and links `sources`, written to `buildDir`,
  /// into `output` (a shared library). Paths in it are absolute.
  /// The objects to compile before link(), which then links them (none:
  /// link() compiles and links in one command).
  virtual std::vector<UnitCompile> compileUnits(const EmittedSources &sources,
                                                llvm::StringRef buildDir,
                                                const TargetOptions &options) const {
    return {};
  }

  virtual ToolchainCommand link(const EmittedSources &sources,
                                llvm::StringRef buildDir, llvm::StringRef output,
                                const TargetOptions &options) const = 0;

  /// One partition of a several-partition library: its sources, the directory
  /// they were written to and compiled in (compileUnits with its options, whose
  /// partitionSuffix is set).
  struct PartitionSources {
    const EmittedSources *sources;
    std::string buildDir;
    TargetOptions options;
  };

  /// The command that links several partitions' objects and `indexUnit` (a C++
  /// unit that exports the partition index, thunder-c/artifact.h) into one
  /// `output`; std::nullopt when this target cannot (each partition is then
  /// its own library), or for these options (`why` says why).
  virtual std::optional<ToolchainCommand>
  linkPartitions(llvm::ArrayRef<PartitionSources> partitions, llvm::StringRef indexUnit,
                 llvm::StringRef output, std::string &why) const {
    why = "target '" + name().str() + "' does not build several partitions into one library";
    return std::nullopt;
  }
};

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

using TargetBackendFactory = std::function<std::unique_ptr<TargetBackend>()>;

/// Registers the backend `name` (what --target names), made by `factory`.
/// Registering a name twice keeps the first.
void registerTargetBackend(llvm::StringRef name, llvm::StringRef description,
                           TargetBackendFactory factory);

/// Registers every backend Thunder has (lib/Target/RegisterTargets.cpp);
/// idempotent. Tools and the Python binding call it once at start.
void registerAllTargetBackends();

/// A new backend `name`, or null when none is registered under it.
std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef name);

/// The registered backends' names, in registration order.
std::vector<std::string> targetBackendNames();

/// The one-line description `name` was registered with ("" when unknown).
std::string targetBackendDescription(llvm::StringRef name);

/// Registers `--thunder-<name>-pipeline` with thunder-opt for every
/// registered backend: its buildPipeline from the option `from` (default
/// import) to `to` (default: the phase it emits from).
void registerTargetPipelines();

/// Adds thunder-set-phase recording `phase`: the last pass of each phase a
/// backend's buildPipeline runs.
void addSetPhase(mlir::OpPassManager &pm, Phase phase);

/// Fills what `options` leaves to `backend` (the architectures).
void applyTargetDefaults(const TargetBackend &backend, TargetOptions &options);

//===----------------------------------------------------------------------===//
// Emitting
//===----------------------------------------------------------------------===//

/// `backend`'s sources for `module`, which must be at the phase the backend
/// emits from (its thunder.phase marker says; an error names the pipeline
/// to run otherwise). thunder-translate and the Compiler both emit this way.
mlir::FailureOr<EmittedSources> emitSources(TargetBackend &backend,
                                            mlir::ModuleOp module,
                                            const TargetOptions &options);

/// Prints `sources` as one text: each file behind a `// ===== <path> =====`
/// line, binary files (the weights) as their size and a hash of their bytes.
/// thunder-translate and `thunder-compile --compile-to=source` without -o
/// print this.
void printSources(const EmittedSources &sources, llvm::raw_ostream &os);

} // namespace thunder

#endif // THUNDER_TARGET_TARGETBACKEND_H
