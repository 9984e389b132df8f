# lit configuration for Thunder's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Thunder"
# The internal shell: the same behaviour on every host and lit version.
config.test_format = lit.formats.ShTest(execute_external=False)
# .mlir: thunder-opt tests; .test: importer tests that export a graph with
# PyTorch first (test/Import).
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.thunder_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit",
                   "python", "Inputs", "fuzz", "cmake", "memcheck"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["thunder-opt", "thunder-compile", "thunder-translate", "thunder-run"],
    [config.thunder_tools_dir])
config.substitutions.append(("%python", config.python_executable))
# An absolute path, for tests that change PATH.
config.substitutions.append(
    ("%thunder_compile_abs", os.path.join(config.thunder_tools_dir, "thunder-compile")))
llvm_config.add_tool_substitutions(["FileCheck", "not", "split-file"],
                                   [config.llvm_tools_dir])

# The host's x86 features, for the CPU backend's instruction-set tests
# (test/Target/CPU/isa_*.test).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = set(next((l.split(":", 1)[1].split() for l in cpuinfo
                              if l.startswith("flags")), []))
except OSError:
    cpu_flags = set()
if {"avx2", "fma", "bmi2"} <= cpu_flags:
    config.available_features.add("x86-64-v3")
if "amx_tile" not in cpu_flags:
    config.available_features.add("cpu-lacks-amx")

# nvcc with cuBLASLt's and cuDNN's headers: the check of the CUDA support
# library's declarations of their APIs (test/Target/CUDA/library_abi.test).
if config.nvcc and config.cublaslt_include and config.cudnn_include:
    config.available_features.add("nvidia-headers")
    config.substitutions.append(("%nvcc", config.nvcc))
    config.substitutions.append(
        ("%nvidia_includes", "-I%s -I%s" % (config.cublaslt_include, config.cudnn_include)))

# A sanitizer build (THUNDER_SANITIZE, tools/dev.sh test --sanitize): its model kernels
# carry the sanitizers' checks, so tests of the vector code they compile to do not apply.
if getattr(config, "thunder_sanitize", ""):
    config.available_features.add("sanitize")
