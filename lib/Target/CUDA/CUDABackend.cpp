//===- CUDABackend.cpp - The CUDA target: NVIDIA GPUs through nvcc --------===//
//
// CUDA is one instance of the GPU code generator (lib/Target/GPU): its
// GpuDialect table (the CUDA runtime's names, cuBLASLt and cuDNN, the
// support headers), the nvcc command that builds one library with code for
// every architecture in --cuda-arch, and the backend's registration.
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/CUDA/CUDABackend.h"
#include "thunder/Target/GPU/GpuDialect.h"

#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace {
#include "CUDASupportSources.inc"
} // namespace

namespace thunder {

/// The CUDA spellings of the GPU code generator.
static const gpu::GpuDialect &cudaDialect() {
  static const gpu::GpuDialect d{
      "cuda",
      "THUNDER_DEVICE_CUDA",
      "thunder_cuda.cuh",
      "thunder_cuda_libs.cuh",
      "thunder_cuda",
      "model.cu",
      "cudaStream_t",
      "cudaMemcpyAsync",
      "cudaMemcpyDeviceToDevice",
      "cudaEventRecord",
      "cudaStreamWaitEvent",
      // NVIDIA's advice for cuBLASLt on Hopper.
      /*libWorkspace=*/32 << 20,
      &TargetOptions::cudaArch,
      {{"thunder_cuda.cuh", kThunderCudaHeader},
       {"thunder_cuda_libs.cuh", kThunderCudaLibsHeader},
       {"thunder-c/artifact.h", kArtifactHeader}}};
  return d;
}

llvm::StringRef CUDABackend::name() const { return "cuda"; }

PlanNeeds CUDABackend::planNeeds() const {
  PlanNeeds needs;
  needs.libraryWorkspace = cudaDialect().libWorkspace;
  return needs;
}

FailureOr<EmittedSources> CUDABackend::emit(ModuleOp module, const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ") << funcs.size();
  if (failed(parseCudaArchs(options.cudaArch)))
    return module.emitError("--cuda-arch: expected a comma-separated list of sm_XY "
                            "architectures (e.g. sm_80,sm_90a), got '")
           << options.cudaArch << "'";
  return gpu::emitSources(funcs.front(), options, cudaDialect());
}

FailureOr<std::vector<std::string>> parseCudaArchs(llvm::StringRef list) {
  std::vector<std::string> archs;
  SmallVector<llvm::StringRef> parts;
  list.split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    llvm::StringRef digits = part;
    if (!digits.consume_front("sm_") || digits.empty())
      return failure();
    llvm::StringRef number = digits.take_while([](char c) { return isdigit(c); });
    llvm::StringRef suffix = digits.drop_front(number.size());
    if (number.size() < 2 || !(suffix.empty() || suffix == "a" || suffix == "f"))
      return failure();
    archs.push_back(part.str());
  }
  if (archs.empty())
    return failure();
  return archs;
}

/// The CUDA toolkit's nvcc: $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, or
/// nvcc on PATH.
static std::string findNvcc() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = getenv(var)) {
      std::string candidate = std::string(home) + "/bin/nvcc";
      if (llvm::sys::fs::exists(candidate))
        return candidate;
    }
  if (llvm::sys::fs::exists("/usr/local/cuda/bin/nvcc"))
    return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

ToolchainCommand CUDABackend::link(const EmittedSources &sources, llvm::StringRef buildDir,
                                   llvm::StringRef output, const TargetOptions &options) const {
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  cmd.argv = {findNvcc(), "-std=c++17", "-O" + std::to_string(options.optLevel),
              "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC", "-shared",
              "-Xcompiler", "-fvisibility=hidden", "-I" + dir,
              // weights.cpp's .incbin reads the blob from the build directory.
              "-DTHUNDER_WEIGHTS_BIN=\"" + dir + "/weights.bin\"",
              // The toolkit's own deprecation notes are noise in the toolchain log.
              "-Wno-deprecated-gpu-targets"};
  // One cubin per architecture (sm_90a: Hopper's arch-specific instructions).
  FailureOr<std::vector<std::string>> archs = parseCudaArchs(options.cudaArch);
  for (const std::string &arch : succeeded(archs) ? *archs : std::vector<std::string>{}) {
    std::string number = arch.substr(3);
    cmd.argv.push_back("-gencode");
    cmd.argv.push_back("arch=compute_" + number + ",code=" + arch);
  }
  for (const std::string &unit : sources.compileUnits)
    cmd.argv.push_back(dir + "/" + unit);
  // The CUDA runtime is linked statically: the library needs only the
  // driver (libcuda.so.1) at run time, and cuBLASLt is opened at create().
  cmd.argv.insert(cmd.argv.end(), {"-o", output.str(), "-cudart", "static", "-ldl",
                                   "-Xlinker", "--no-undefined"});
  return cmd;
}

} // namespace thunder
