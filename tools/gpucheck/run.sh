#!/usr/bin/env bash
# The GPU side of `tools/dev.sh gpu-check`: run the prepared bundle on a machine with a
# GPU, e.g. through the device tool as `bash .gpucheck/run.sh` carrying [".gpucheck"].
# cuBLASLt comes from the nvidia-* wheels beside torch (or the CUDA toolkit); the runtime
# library and the models are in this folder. Extra arguments go to gpucheck.py
# (--budget SECONDS, --models NAME...).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# gpucheck.py unpacks the libraries beside the manifest: work on a copy where that
# folder is read-only.
if [[ ! -w "$HERE" ]]; then
  rm -rf /tmp/gpucheck-bundle && cp -r "$HERE" /tmp/gpucheck-bundle && HERE=/tmp/gpucheck-bundle
fi
PY="${PYTHON:-python3}"
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
LIBS=""
for dir in "$SITE"/nvidia/cu13/lib "$SITE"/nvidia/*/lib /usr/local/cuda/lib64; do
  [[ -d "$dir" ]] && LIBS="$LIBS:$dir"
done
export LD_LIBRARY_PATH="${LIBS#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
exec "$PY" "$HERE/gpucheck.py" --bundle "$HERE" "$@"
