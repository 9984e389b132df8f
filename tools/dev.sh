#!/usr/bin/env bash
# Thunder's developer script: set up a fresh machine, build, test, demo, benchmark.
#
#   tools/dev.sh setup   apt packages, .venv with the Python packages (idempotent)
#   tools/dev.sh build   setup, then configure (once) and build with CMake + Ninja
#   tools/dev.sh test    build, then run every test suite (lit, GoogleTest, pytest)
#   tools/dev.sh test --sanitize [pytest args]  ctest and the op-level suites on an
#                        ASan + UBSan build (build-sanitize/: compiler, runtime, model
#                        libraries; docs/developing.md)
#   tools/dev.sh demo    build, then show what Thunder does today
#   tools/dev.sh gpu-check  build, then write .gpucheck/: CUDA models and the GPU side
#                        of the check (run there: bash .gpucheck/run.sh; docs/cuda.md)
#   tools/dev.sh bench   build, then benchmark the zoo against eager, torch.compile,
#                        AOTInductor and ONNX Runtime (--quick for CI, --help)
#
# Environment: THUNDER_BUILD_DIR (default: build), THUNDER_JOBS (default: nproc),
# THUNDER_BUILD_TYPE (default: Release); for --sanitize: THUNDER_SANITIZE_BUILD_DIR
# (default: build-sanitize), THUNDER_SANITIZE (default: address,undefined),
# THUNDER_SANITIZE_TARGETS (default: every target), THUNDER_SANITIZE_CTEST (more ctest
# arguments, e.g. -E CpuMath).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${THUNDER_BUILD_DIR:-$ROOT/build}"
VENV="$ROOT/.venv"
JOBS="${THUNDER_JOBS:-$(nproc)}"
BUILD_TYPE="${THUNDER_BUILD_TYPE:-Release}"
REQUIREMENTS="$ROOT/python/requirements-dev.txt"

# Debian packages the build and tests need. LLVM/MLIR 19 provide libMLIR.so,
# mlir-tblgen and FileCheck.
APT_PACKAGES=(
  build-essential ninja-build cmake git
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libfmt-dev libgtest-dev zlib1g-dev libzstd-dev
  python3-venv python3-dev
  clang-19 libclang-rt-19-dev
  libopenblas-dev libdnnl-dev
  ccache
  # test/memcheck: thunder-compile under memcheck.
  valgrind
  # The hip target: HIP device code for gfx90a/gfx942/gfx950 (clang-19 lacks
  # gfx950), the device linker, clang-offload-bundler, llvm-readelf/objdump.
  clang-22 lld-22 clang-tools-22 llvm-22
)

log() { printf '\033[1m[dev.sh]\033[0m %s\n' "$*" >&2; }
elapsed() { echo "$((SECONDS / 60)) min $((SECONDS % 60)) s"; }
die() { printf '\033[1;31m[dev.sh] error:\033[0m %s\n' "$*" >&2; exit 1; }

missing_apt_packages() {
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || printf '%s\n' "$pkg"
  done
}

setup_apt() {
  local missing
  missing="$(missing_apt_packages)"
  [[ -z "$missing" ]] && return 0
  log "installing Debian packages: $(echo $missing | tr '\n' ' ')"
  local sudo=""
  [[ "$(id -u)" -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

python_for_venv() {
  # Prefer the interpreter torch 2.13.0's wheel was built for (CPython 3.11).
  local py
  for py in python3.11 python3; do
    command -v "$py" >/dev/null 2>&1 && { command -v "$py"; return; }
  done
  die "no python3 found"
}

setup_venv() {
  local stamp="$VENV/.thunder-requirements.sha256"
  local want
  want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
  if [[ -x "$VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV"
    "$(python_for_venv)" -m venv "$VENV"
  fi
  log "installing Python packages from python/requirements-dev.txt (torch takes a minute)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$want" > "$stamp"
}

# cuBLASLt's and cuDNN's headers, for the test that checks Thunder's own declarations of
# their C APIs (test/Target/CUDA/library_abi.test; generated CUDA code opens both libraries
# with dlopen and includes neither header). The CUDA toolkit here ships neither header, so
# they come from NVIDIA's wheels: ~1 GB downloaded once, only the headers kept.
NVIDIA_HEADER_WHEELS=(nvidia-cublas==13.10.0.20 nvidia-cudnn-cu13==9.28.1.4)

setup_nvidia_headers() {
  local dest="$VENV/nvidia-include" tmp whl
  if [[ -f "$dest/.wheels" && "$(cat "$dest/.wheels")" == "${NVIDIA_HEADER_WHEELS[*]}" ]]; then
    return 0
  fi
  log "fetching the headers of ${NVIDIA_HEADER_WHEELS[*]} into $dest"
  tmp="$(mktemp -d)"
  if ! "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: -d "$tmp" "${NVIDIA_HEADER_WHEELS[@]}"; then
    rm -rf "$tmp"
    die "could not download ${NVIDIA_HEADER_WHEELS[*]} (needed for their headers)"
  fi
  rm -rf "$dest.partial"
  mkdir -p "$dest.partial"
  for whl in "$tmp"/*.whl; do
    "$VENV/bin/python" - "$whl" "$dest.partial" <<'PY'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if "/include/" in name and name.endswith(".h"):
            (dest / pathlib.PurePosixPath(name).name).write_bytes(z.read(name))
PY
  done
  rm -rf "$tmp"
  echo "${NVIDIA_HEADER_WHEELS[*]}" > "$dest.partial/.wheels"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
}

# Makes `import thunder` work in .venv: a thunder.pth in its site-packages names
# $BUILD_DIR/python, where the build lays out the package (python/CMakeLists.txt).
install_python_package() {
  local site pth package
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  pth="$site/thunder.pth"
  package="$(realpath -m "$BUILD_DIR/python")"
  if [[ ! -f "$pth" || "$(cat "$pth")" != "$package" ]]; then
    log "pointing $pth at $package"
    echo "$package" > "$pth"
  fi
}

cmd_setup() {
  setup_apt
  setup_venv
  setup_nvidia_headers
  install_python_package
}

cmd_build() {
  cmd_setup
  if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
    local launcher=()
    command -v ccache >/dev/null 2>&1 \
      && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    log "configuring $BUILD_DIR ($BUILD_TYPE)"
    cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
      -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
      -DPython3_EXECUTABLE="$VENV/bin/python" \
      -DTHUNDER_LIT="$VENV/bin/lit" \
      ${launcher[@]+"${launcher[@]}"}
  fi
  log "building with $JOBS jobs"
  # ccache (when configured with it) rewrites paths under the checkout to relative ones,
  # so a second checkout (a git worktree, a fresh clone) reuses this one's objects.
  CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 cmake --build "$BUILD_DIR" -j "$JOBS"
  log "built ($(elapsed) since dev.sh started)"
}

cmd_test() {
  cmd_build
  log "running ctest (lit + GoogleTest)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  log "ctest passed ($(elapsed) since dev.sh started)"
  # The suite always has tests: an empty collection (pytest's exit status 5)
  # fails like any other failure, as does a missing suite.
  compgen -G "$ROOT/test/python/test_*.py" >/dev/null \
    || die "no Python tests in test/python"
  log "running pytest"
  # One worker per core (pytest-xdist), each taking whole files (--dist loadfile), so a
  # file's module fixtures (a shared compile cache, the bench run) are built once; much of
  # a test is single-threaded Python (export, import), so two workers finish in well under
  # the serial time. --durations: the slowest tests, so a CI log shows where time went.
  THUNDER_BUILD_DIR="$BUILD_DIR" "$VENV/bin/python" -m pytest -q -n "$JOBS" \
    --dist loadfile --durations=15 "$ROOT/test/python"
  log "tests passed in $(elapsed) (setup and build included)"
}

# --- tools/dev.sh test --sanitize ---------------------------------------------------
# gcc's AddressSanitizer and UndefinedBehaviorSanitizer over everything Thunder builds:
# the compiler, the runtime, the tools, the unit tests, the Python extension, and (the
# driver passes the same flags, lib/Target/CPU/CPUBackend.cpp) every model library it
# compiles, so the generated kernels and the runtime calls they make are checked too.
# A build of its own ($SANITIZE_DIR; instrumented code at -O1), never the CI's default
# path. THUNDER_SANITIZE_TARGETS (a ;-list of CMake targets) instruments only those: the
# whole compiler instrumented takes hours on two cores, e.g. the runtime side only:
#   THUNDER_SANITIZE_TARGETS="ThunderRuntime;ThunderSupport;ThunderDriver;ThunderTarget;\
#   ThunderTargetCPU;ThunderPipelines;ThunderPythonModule;thunder-run;ThunderRunNpz;\
#   thunder-compile"
SANITIZE_DIR="${THUNDER_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
SANITIZERS="${THUNDER_SANITIZE:-address,undefined}"
SANITIZE_TARGETS="${THUNDER_SANITIZE_TARGETS:-}"
# The op-level suites, each of random inputs over every dtype of each op family, whose
# models the sanitized driver compiles and the sanitized runtime runs.
SANITIZE_SUITES=(test_ops_numerics.py test_ops_random_shapes.py test_reference_oracle.py)

sanitize_build() {
  setup_apt
  setup_venv
  # Not install_python_package: the venv's thunder.pth keeps naming the normal build (a
  # sanitized thunder._C imports only into a process that preloads the ASan runtime).
  local launcher=()
  command -v ccache >/dev/null 2>&1 \
    && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  log "configuring $SANITIZE_DIR (-fsanitize=$SANITIZERS on ${SANITIZE_TARGETS:-every target})"
  # Configured every time, so THUNDER_SANITIZE(_TARGETS) take effect. Release flags, as
  # the normal build: what is not instrumented comes from ccache. IPO off: pybind11
  # would build the extension with -flto, slow under the sanitizers.
  cmake -G Ninja -S "$ROOT" -B "$SANITIZE_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
    -DTHUNDER_SANITIZE="$SANITIZERS" \
    -DTHUNDER_SANITIZE_TARGETS="$SANITIZE_TARGETS" \
    -DPython3_EXECUTABLE="$VENV/bin/python" \
    -DTHUNDER_LIT="$VENV/bin/lit" \
    ${launcher[@]+"${launcher[@]}"} >/dev/null
  log "building $SANITIZE_DIR with $JOBS jobs"
  CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 cmake --build "$SANITIZE_DIR" -j "$JOBS"
}

# The sanitizers' run-time options, for every process of the run.
sanitize_env() {
  # detect_leaks=0: Python, torch and MLIR's global registries are never freed at exit,
  #   by design; LeakSanitizer would report all of them (leaks are not what this checks).
  # abort_on_error=1: a finding ends the process with SIGABRT rather than exit(1), so
  #   pytest's faulthandler prints the Python stack, naming the test that hit it.
  # log_path: each report also goes to a file (<log>.<pid>): pytest captures a test's
  #   stderr, and a process that aborts takes what it captured with it.
  local logs="$SANITIZE_DIR/sanitizer-logs"
  rm -rf "$logs"
  mkdir -p "$logs"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$logs/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  # -fno-sanitize-recover=undefined already stops at the first finding; these make it
  # print the stack and abort (as above) rather than exit(1).
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$logs/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  local symbolizer=/usr/lib/llvm-19/bin/llvm-symbolizer
  [[ -x "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$symbolizer" UBSAN_SYMBOLIZER_PATH="$symbolizer"
  # Model libraries go to a cache of this build's own: they need the sanitizer runtimes.
  export THUNDER_CACHE_DIR="$SANITIZE_DIR/thunder-cache"
}

# Prints the sanitizer reports of the run, if any, and fails when there are some.
sanitize_reports() {
  local logs="$SANITIZE_DIR/sanitizer-logs" report found=0
  for report in "$logs"/*; do
    [[ -f "$report" ]] || continue
    found=1
    log "sanitizer report $report:"
    cat "$report" >&2
  done
  return "$found"
}

# The libraries the Python process must load first: python and torch are not
# instrumented, so the ASan runtime that the sanitized thunder._C needs would come too
# late (ASan refuses to start once malloc has been called by anything else); and
# libstdc++ beside it, so that ASan's __cxa_throw interceptor finds the real one when it
# starts (python itself does not link libstdc++; without it, the first C++ exception
# that torch throws and catches inside eager fails ASan's CHECK and aborts).
sanitize_preload() {
  local asan stdcxx
  asan="$(gcc -print-file-name=libasan.so)"
  stdcxx="$(gcc -print-file-name=libstdc++.so)"
  [[ -f "$asan" ]] || die "gcc's libasan.so not found (gcc -print-file-name=libasan.so: $asan)"
  [[ -f "$stdcxx" ]] || die "gcc's libstdc++.so not found ($stdcxx)"
  echo "$(realpath "$asan"):$(realpath "$stdcxx")"
}

# Proves that a finding in an instrumented library that an uninstrumented Python loads
# still ends the run: a heap overflow and a signed overflow, each in a tiny library built
# with the same flags as a model library, must abort Python with their reports.
sanitize_canary() {
  local dir preload kind
  dir="$SANITIZE_DIR/sanitize-canary"
  preload="$(sanitize_preload)"
  mkdir -p "$dir"
  cat > "$dir/canary.c" <<'C'
#include <stdlib.h>
int heap_overflow(int n) { int *p = malloc(n * sizeof(int)); int v = p[n]; free(p); return v; }
int signed_overflow(int n) { return n + 2147483647; }
C
  gcc -shared -fPIC -O1 -fsanitize="$SANITIZERS" -fno-omit-frame-pointer \
    -fno-sanitize-recover=undefined "$dir/canary.c" -o "$dir/libcanary.so"
  local kinds=(heap_overflow:heap-buffer-overflow)
  [[ "$SANITIZERS" == *undefined* ]] && kinds+=(signed_overflow:"signed integer overflow")
  for kind in "${kinds[@]}"; do
    if ASAN_OPTIONS="$ASAN_OPTIONS:log_path=stderr" UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=stderr" \
        LD_PRELOAD="$preload" "$VENV/bin/python" -c \
        "import ctypes, sys; ctypes.CDLL(sys.argv[1]).${kind%%:*}(4)" "$dir/libcanary.so" \
        > "$dir/${kind%%:*}.log" 2>&1; then
      die "sanitizer canary ${kind%%:*} did not abort Python: findings would go unnoticed"
    fi
    grep -q "${kind#*:}" "$dir/${kind%%:*}.log" \
      || die "sanitizer canary ${kind%%:*} aborted without its report ($dir/${kind%%:*}.log)"
  done
  log "sanitizer canaries: a heap overflow and a signed overflow each abort Python"
}

cmd_test_sanitize() {
  [[ "$SANITIZERS" == *address* ]] \
    || die "THUNDER_SANITIZE=$SANITIZERS: the --sanitize run needs address (and preloads its runtime)"
  sanitize_build
  sanitize_env
  log "running ctest on $SANITIZE_DIR (lit + GoogleTest, sanitized)"
  # THUNDER_SANITIZE_CTEST: more ctest arguments, e.g. -E CpuMath to leave out the
  # whole-float-range math sweeps (minutes each when instrumented).
  # shellcheck disable=SC2086
  ctest --test-dir "$SANITIZE_DIR" --output-on-failure -j "$JOBS" ${THUNDER_SANITIZE_CTEST:-} \
    || { sanitize_reports || true; die "ctest failed under the sanitizers"; }
  sanitize_reports || die "sanitizer findings in ctest (above)"
  sanitize_canary
  local suites=() suite
  for suite in "${SANITIZE_SUITES[@]}"; do
    [[ -f "$ROOT/test/python/$suite" ]] || die "op suite test/python/$suite is missing"
    suites+=("$ROOT/test/python/$suite")
  done
  log "running the op suites under the sanitizers: ${SANITIZE_SUITES[*]}"
  LD_PRELOAD="$(sanitize_preload)" THUNDER_BUILD_DIR="$SANITIZE_DIR" \
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider -n "$JOBS" --dist loadfile \
    --durations=10 "${suites[@]}" "$@" \
    || { sanitize_reports || true; die "the op suites failed under the sanitizers"; }
  sanitize_reports || die "sanitizer findings in the op suites (above)"
}

cmd_demo() {
  cmd_build
  PYTHONPATH="$BUILD_DIR/python" "$VENV/bin/python" "$ROOT/examples/demo.py" "$@"
}

cmd_gpu_check() {
  cmd_build
  log "compiling the GPU check's bundle into $ROOT/.gpucheck"
  "$VENV/bin/python" "$ROOT/tools/gpucheck/bundle.py" --build-dir "$BUILD_DIR" \
    --out "$ROOT/.gpucheck" "$@"
  log "done: run 'bash .gpucheck/run.sh' on a machine with a GPU (device tool: carry .gpucheck)"
}

# Contenders that only the benchmark needs (not the tests), installed on demand into
# a directory of their own, without their dependencies (torch, numpy: the
# environment's), so the project's environment stays as setup made it.
BENCH_PACKAGES=(openvino openvino-telemetry iree-base-compiler iree-base-runtime iree-turbine
                decorator)

cmd_bench() {
  cmd_build
  local packages="$BUILD_DIR/bench-packages"
  if [ ! -f "$packages/.installed" ]; then
    log "installing the benchmark's contenders into $packages: ${BENCH_PACKAGES[*]}"
    if "$VENV/bin/pip" install -q --no-deps --target "$packages" "${BENCH_PACKAGES[@]}"; then
      touch "$packages/.installed"
    else
      log "could not install them: OpenVINO and IREE will report why they did not run"
    fi
  fi
  PYTHONPATH="$BUILD_DIR/python" THUNDER_BUILD_DIR="$BUILD_DIR" \
    THUNDER_BENCH_PACKAGES="$packages" \
    "$VENV/bin/python" "$ROOT/tools/bench/run.py" "$@"
}

usage() {
  sed -n '2,/^set -euo/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "${1:-}" in
  setup) cmd_setup ;;
  build) cmd_build ;;
  test)
    case "${2:-}" in
      "") cmd_test ;;
      --sanitize) shift 2; cmd_test_sanitize "$@" ;;
      *) usage; die "unknown option for test: '$2'" ;;
    esac ;;
  demo) shift; cmd_demo "$@" ;;
  gpu-check) shift; cmd_gpu_check "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  -h|--help|help) usage ;;
  "") usage; exit 2 ;;
  *) usage; die "unknown command '$1'" ;;
esac
