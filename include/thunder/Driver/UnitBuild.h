//===- UnitBuild.h - Parallel, cached compiles of a backend's units -*- C++ -*-===//
//
// Runs a backend's UnitCompile steps (TargetBackend::compileUnits) in
// parallel, each once the steps it comes after have finished, each object
// taken from the kernel cache by content when it is there and put there when
// it was compiled.
//
//===----------------------------------------------------------------------===//
#ifndef THUNDER_DRIVER_UNITBUILD_H
#define THUNDER_DRIVER_UNITBUILD_H

#include "thunder/Target/TargetBackend.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace thunder {

/// What runUnitCompiles did.
struct UnitBuildResult {
  bool ok = true;
  /// On failure: the command line and the tail of its output.
  std::string error;
  unsigned compiled = 0;
  unsigned cached = 0;
};

/// Runs `steps` (objects in the build directory `buildDir`) with at most
/// `jobs` compilers at once (0: the machine's cores). With a `cacheDir`,
/// an object whose key is in the cache is linked (or copied) from there, and
/// a compiled one is published there under its key: by link(2) or by a
/// rename of a complete copy, so that a compile killed at any point leaves
/// only whole objects in the cache. `prebuiltDirs` are caches of the same
/// layout that are only read, after `cacheDir`: the objects built with
/// Thunder itself (defaultPrebuiltKernelDirs).
UnitBuildResult runUnitCompiles(const std::vector<UnitCompile> &steps,
                                llvm::StringRef buildDir, llvm::StringRef cacheDir,
                                unsigned jobs,
                                const std::vector<std::string> &prebuiltDirs = {});

/// The kernel caches built with Thunder that exist on this machine: the
/// build tree's and the installed share/thunder/kernels (CMake fills them
/// with the CPU backend's drivers for the build machine's -march=native, so
/// that a first compile does not spend seconds on them). $THUNDER_PREBUILT_KERNELS,
/// when set, replaces the list (empty: none).
std::vector<std::string> defaultPrebuiltKernelDirs();

} // namespace thunder

#endif // THUNDER_DRIVER_UNITBUILD_H
