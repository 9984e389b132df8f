//===- HIPBackend.cpp - The HIP target: AMD GPUs through clang ------------===//
//
// HIP is one instance of the GPU code generator (lib/Target/GPU): its
// GpuDialect table (wave64, the HIP runtime's names, hipBLASLt, the support
// headers), the clang command that builds one library with a code object
// for every architecture in --arch, and the backend's registration.
//
// The kernels and the host program are one HIP source, compiled by clang
// with -nogpulib -nogpuinc: no ROCm headers, device libraries or runtime
// at build time. The support header brings its own kernel-language
// prelude and device math; the host side launches through a shim of ours
// over libamdhip64's module API, dlopen'ed when the model loads
// (thunder_hip_runtime.h).
//
//===----------------------------------------------------------------------===//
#include "thunder/Target/HIP/HIPBackend.h"
#include "thunder/Target/GPU/GpuDialect.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdint>

using namespace mlir;

namespace {
#include "HIPSupportSources.inc"
} // namespace

namespace thunder {

/// The element types the GEMM libraries take: hipBLASLt's f32, f16 and
/// bf16, and f64 through rocBLAS.
static bool isBlasType(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

/// Whether a convolution goes through MIOpen: the same padding on both
/// sides of every spatial dim (what its convolution descriptor holds) and a
/// type MIOpen fully supports (f32, f16; bf16). Else im2col + GEMM or the
/// direct kernel (thunder_gpu_libs.h).
static bool usesMiopen(mlir::thunder::ConvolutionOp c) {
  ArrayRef<int64_t> pad = c.getPadding();
  for (size_t s = 0; s + 1 < pad.size(); s += 2)
    if (pad[s] != pad[s + 1])
      return false;
  Type t = cast<RankedTensorType>(c.getType()).getElementType();
  return t.isF32() || t.isF16() || t.isBF16();
}

/// HIP as an instance of the GPU code generator.
static const gpu::GpuDialect &hipDialect() {
  static const gpu::GpuDialect d{
      /*target=*/"hip",
      /*displayName=*/"HIP",
      /*deviceEnum=*/"THUNDER_DEVICE_HIP",
      /*supportHeader=*/"thunder_hip.h",
      /*libsHeader=*/"thunder_hip_libs.h",
      /*ns=*/"thunder_hip",
      /*source=*/"model.hip",
      gpu::GpuRuntime{
          /*stream_t=*/"hipStream_t",
          /*error_t=*/"hipError_t",
          /*success=*/"hipSuccess",
          /*malloc=*/"hipMalloc",
          /*memcpy=*/"hipMemcpy",
          /*memcpyAsync=*/"hipMemcpyAsync",
          /*hostToDevice=*/"hipMemcpyHostToDevice",
          /*deviceToDevice=*/"hipMemcpyDeviceToDevice",
          /*streamCreate=*/"hipStreamCreate",
          /*streamCreateWithFlags=*/"hipStreamCreateWithFlags",
          /*streamNonBlocking=*/"hipStreamNonBlocking",
          /*streamSynchronize=*/"hipStreamSynchronize",
          /*streamDestroy=*/"hipStreamDestroy",
          /*deviceSynchronize=*/"hipDeviceSynchronize",
          /*getLastError=*/"hipGetLastError",
          /*eventRecord=*/"hipEventRecord",
          /*streamWaitEvent=*/"hipStreamWaitEvent",
          /*graph=*/"HIP graph",
      },
      gpu::GpuKernelSyntax{
          /*kernel=*/"__global__",
          /*launchBounds=*/"__launch_bounds__",
          /*shared=*/"__shared__",
          /*launchOpen=*/"<<<",
          /*launchClose=*/">>>",
          // CDNA's wavefront.
          /*warpSize=*/64,
          /*maxBlockThreads=*/1024,
      },
      gpu::GpuLibraries{
          /*gemm=*/"hipBLASLt",
          /*conv=*/"MIOpen",
          /*gemmTakes=*/isBlasType,
          /*convTakes=*/usesMiopen,
          /*workspace=*/32 << 20,
          // The attention kernel sizes its tile of keys and values from the
          // LDS (THUNDER_ATTENTION_MIN_TILE in thunder_hip.h): at e = 256 a
          // tile of 16 keys takes 37 KiB in f32, one of 8 keys 41 KiB in f64.
          /*attentionMaxHeadDim=*/256,
      },
      /*archs=*/&TargetOptions::arch,
      /*supportFiles=*/
      {{"thunder_hip.h", kThunderHipHeader},
       {"thunder_hip_math.h", kThunderHipMathHeader},
       {"thunder_hip_runtime.h", kThunderHipRuntimeHeader},
       {"thunder_hip_libs.h", kThunderHipLibsHeader}}};
  return d;
}

llvm::StringRef HIPBackend::name() const { return "hip"; }

static llvm::Error archError(const std::string &list) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--arch: expected a comma-separated list of AMD GPU "
                                 "architectures among gfx90a, gfx942 and gfx950, got '" +
                                     list + "'");
}

llvm::Error HIPBackend::validateOptions(const TargetOptions &options) const {
  if (succeeded(parseHipArchs(options.arch)))
    return llvm::Error::success();
  return archError(options.arch);
}

void registerHIPTargetBackend() {
  registerTargetBackend("hip",
                        "HIP C++ kernels for AMD GPUs (wave64), hipBLASLt/rocBLAS and MIOpen, "
                        "built by clang++-22 for --arch (default gfx90a,gfx942,gfx950)",
                        [] { return std::make_unique<HIPBackend>(); });
}

PlanNeeds HIPBackend::planNeeds() const {
  PlanNeeds needs;
  needs.libraryWorkspace = hipDialect().libraries.workspace;
  return needs;
}

FailureOr<EmittedSources> HIPBackend::emit(ModuleOp module, const TargetOptions &options) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expects one function to compile, found ") << funcs.size();
  if (failed(parseHipArchs(options.arch)))
    return module.emitError("--arch: expected a comma-separated list of AMD GPU "
                            "architectures among gfx90a, gfx942 and gfx950, got '")
           << options.arch << "'";
  return gpu::emitSources(funcs.front(), options, hipDialect());
}

int64_t hipLdsBytes(llvm::StringRef arch) {
  return llvm::StringSwitch<int64_t>(arch)
      .Case("gfx90a", 64 * 1024)
      .Case("gfx942", 64 * 1024)
      .Case("gfx950", 160 * 1024)
      .Default(0);
}

std::string hipLdsDefine(llvm::StringRef archList) {
  int64_t lds = 64 * 1024;
  if (FailureOr<std::vector<std::string>> archs = parseHipArchs(archList); succeeded(archs)) {
    lds = INT64_MAX;
    for (const std::string &arch : *archs)
      lds = std::min(lds, hipLdsBytes(arch));
  }
  return "-DTHUNDER_HIP_LDS_BYTES=" + std::to_string(lds);
}

FailureOr<std::vector<std::string>> parseHipArchs(llvm::StringRef list) {
  std::vector<std::string> archs;
  SmallVector<llvm::StringRef> parts;
  list.split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    if (hipLdsBytes(part) == 0)
      return failure();
    archs.push_back(part.str());
  }
  if (archs.empty())
    return failure();
  return archs;
}

std::string findHipClang() {
  if (const char *env = getenv("THUNDER_HIP_CLANG"))
    if (*env)
      return env;
  llvm::StringRef configured = THUNDER_HIP_CLANG;
  if (!configured.empty() && llvm::sys::fs::exists(configured))
    return configured.str();
  return "clang++-22";
}

ToolchainCommand HIPBackend::link(const EmittedSources &sources, llvm::StringRef buildDir,
                                  llvm::StringRef output, const TargetOptions &options) const {
  ToolchainCommand cmd;
  std::string dir = buildDir.str();
  // One command: clang compiles the device code once per architecture,
  // bundles the code objects (.hip_fatbin in the library), compiles the host
  // side with the bundle registered, and links. No ROCm at build time.
  cmd.argv = {findHipClang(), "-std=c++17", "-O" + std::to_string(options.optLevel),
              "-fPIC", "-shared", "-fvisibility=hidden", "-nogpulib", "-nogpuinc",
              // clang would link -lamdhip64: the library opens it at run time.
              "-no-hip-rt",
              "-I" + dir,
              // weights.cpp's .incbin reads the blob from the build directory.
              "-DTHUNDER_WEIGHTS_BIN=\"" + dir + "/weights.bin\""};
  cmd.argv.push_back(hipLdsDefine(options.arch));
  FailureOr<std::vector<std::string>> archs = parseHipArchs(options.arch);
  for (const std::string &arch : succeeded(archs) ? *archs : std::vector<std::string>{})
    cmd.argv.push_back("--offload-arch=" + arch);
  // model.hip is HIP; weights.cpp (and anything else) plain C++.
  for (const std::string &unit : sources.compileUnits) {
    cmd.argv.push_back(llvm::StringRef(unit).ends_with(".hip") ? "-xhip" : "-xc++");
    cmd.argv.push_back(dir + "/" + unit);
  }
  // The library needs only libc (and libstdc++) to load: libamdhip64 is
  // opened when the model is created.
  cmd.argv.insert(cmd.argv.end(), {"-o", output.str(), "-ldl", "-Wl,--no-undefined"});
  return cmd;
}

} // namespace thunder
