#!/usr/bin/env bash
# Thunder's developer script: set up a fresh machine, build, test, demo, benchmark.
#
#   tools/dev.sh setup   apt packages, .venv with the Python packages (idempotent)
#   tools/dev.sh build   setup, then configure (once) and build with CMake + Ninja
#   tools/dev.sh test    build, then run every test suite (lit, GoogleTest, pytest)
#   tools/dev.sh demo    build, then show what Thunder does today
#   tools/dev.sh gpu-check  build, then write .gpucheck/: CUDA models and the GPU side
#                        of the check (run there: bash .gpucheck/run.sh; docs/cuda.md)
#   tools/dev.sh bench   build, then benchmark the zoo against eager, torch.compile,
#                        AOTInductor and ONNX Runtime (--quick for CI, --help)
#
# Environment: THUNDER_BUILD_DIR (default: build), THUNDER_JOBS (default: nproc),
# THUNDER_BUILD_TYPE (default: Release).
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
  # The hip target: HIP device code for gfx90a/gfx942/gfx950 (clang-19 lacks
  # gfx950), the device linker, clang-offload-bundler, llvm-readelf/objdump.
  clang-22 lld-22 clang-tools-22 llvm-22
)

log() { printf '\033[1m[dev.sh]\033[0m %s\n' "$*" >&2; }
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
}

cmd_test() {
  cmd_build
  log "running ctest (lit + GoogleTest)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  # The suite always has tests: an empty collection (pytest's exit status 5)
  # fails like any other failure, as does a missing suite.
  compgen -G "$ROOT/test/python/test_*.py" >/dev/null \
    || die "no Python tests in test/python"
  log "running pytest"
  THUNDER_BUILD_DIR="$BUILD_DIR" "$VENV/bin/python" -m pytest -q "$ROOT/test/python"
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
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "${1:-}" in
  setup) cmd_setup ;;
  build) cmd_build ;;
  test) cmd_test ;;
  demo) shift; cmd_demo "$@" ;;
  gpu-check) shift; cmd_gpu_check "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  -h|--help|help) usage ;;
  "") usage; exit 2 ;;
  *) usage; die "unknown command '$1'" ;;
esac
