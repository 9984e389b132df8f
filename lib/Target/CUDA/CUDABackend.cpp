//===- CUDABackend.cpp - The CUDA target: NVIDIA GPUs through nvcc --------===//
//
// CUDA is one instance of the GPU code generator (lib/Target/GPU): its
// GpuDialect table (the CUDA runtime's names, cuBLASLt and cuDNN, the
// support headers), the nvcc command that builds one library with code for
// every architecture in --arch, and the backend's registration.
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

/// The element types cuBLASLt takes.
static bool isLtType(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

/// Whether a convolution goes through cuDNN: a type cuDNN has (cuBLASLt's
/// four) and the same padding on both sides of every spatial dim (what its
/// convolution descriptor holds).
static bool usesDnn(mlir::thunder::ConvolutionOp c) {
  ArrayRef<int64_t> pad = c.getPadding();
  for (size_t s = 0; s + 1 < pad.size(); s += 2)
    if (pad[s] != pad[s + 1])
      return false;
  return isLtType(cast<RankedTensorType>(c.getType()).getElementType());
}

/// CUDA as an instance of the GPU code generator.
static const gpu::GpuDialect &cudaDialect() {
  static const gpu::GpuDialect d{
      /*target=*/"cuda",
      /*displayName=*/"CUDA",
      /*deviceEnum=*/"THUNDER_DEVICE_CUDA",
      /*supportHeader=*/"thunder_cuda.cuh",
      /*libsHeader=*/"thunder_cuda_libs.cuh",
      /*ns=*/"thunder_cuda",
      /*source=*/"model.cu",
      gpu::GpuRuntime{
          /*stream_t=*/"cudaStream_t",
          /*error_t=*/"cudaError_t",
          /*success=*/"cudaSuccess",
          /*malloc=*/"cudaMalloc",
          /*memcpy=*/"cudaMemcpy",
          /*memcpyAsync=*/"cudaMemcpyAsync",
          /*hostToDevice=*/"cudaMemcpyHostToDevice",
          /*deviceToDevice=*/"cudaMemcpyDeviceToDevice",
          /*streamCreate=*/"cudaStreamCreate",
          /*streamCreateWithFlags=*/"cudaStreamCreateWithFlags",
          /*streamNonBlocking=*/"cudaStreamNonBlocking",
          /*streamSynchronize=*/"cudaStreamSynchronize",
          /*streamDestroy=*/"cudaStreamDestroy",
          /*deviceSynchronize=*/"cudaDeviceSynchronize",
          /*getLastError=*/"cudaGetLastError",
          /*eventRecord=*/"cudaEventRecord",
          /*streamWaitEvent=*/"cudaStreamWaitEvent",
          /*graph=*/"CUDA graph",
      },
      gpu::GpuKernelSyntax{
          /*kernel=*/"__global__",
          /*launchBounds=*/"__launch_bounds__",
          /*shared=*/"__shared__",
          /*launchOpen=*/"<<<",
          /*launchClose=*/">>>",
          /*warpSize=*/32,
          /*maxBlockThreads=*/1024,
      },
      gpu::GpuLibraries{
          /*gemm=*/"cuBLASLt",
          /*conv=*/"cuDNN",
          /*gemmTakes=*/isLtType,
          /*convTakes=*/usesDnn,
          // NVIDIA's advice for cuBLASLt on Hopper.
          /*workspace=*/32 << 20,
          /*attentionMaxHeadDim=*/256,
      },
      /*archs=*/&TargetOptions::arch,
      /*supportFiles=*/
      {{"thunder_cuda.cuh", kThunderCudaHeader},
       {"thunder_cuda_libs.cuh", kThunderCudaLibsHeader},
       {"thunder_cuda_dnn.cuh", kThunderCudaDnnHeader},
       {"thunder_cuda_runtime.cuh", kThunderCudaRuntimeHeader}}};
  return d;
}

llvm::StringRef CUDABackend::name() const { return "cuda"; }

llvm::Error CUDABackend::validateOptions(const TargetOptions &options) const {
  if (succeeded(parseCudaArchs(options.arch)))
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--arch: expected a comma-separated list of sm_XY "
                                 "architectures (e.g. sm_80,sm_90a), got '" +
                                     options.arch + "'");
}

void registerCUDATargetBackend() {
  registerTargetBackend("cuda", "CUDA C++ kernels, cuBLASLt and cuDNN, built by nvcc for --arch (default sm_80,sm_90a)",
                        [] { return std::make_unique<CUDABackend>(); });
}

PlanNeeds CUDABackend::planNeeds() const {
  PlanNeeds needs;
  needs.libraryWorkspace = cudaDialect().libraries.workspace;
  return needs;
}

FailureOr<EmittedSources> CUDABackend::emit(ModuleOp module, const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ") << funcs.size();
  if (failed(parseCudaArchs(options.arch)))
    return module.emitError("--arch: expected a comma-separated list of sm_XY "
                            "architectures (e.g. sm_80,sm_90a), got '")
           << options.arch << "'";
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

std::string findNvcc() {
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
  FailureOr<std::vector<std::string>> archs = parseCudaArchs(options.arch);
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
