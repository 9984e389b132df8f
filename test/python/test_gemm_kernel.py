"""Thunder's GEMM (lib/Target/CPU/Support/thunder_cpu_gemm.h) against a double-precision
reference: odd shapes (m, n, k of 0, 1, 7, 17, 33, 255 and blocked ones), every epilogue,
packed and unpacked weights, for each instruction-set path this machine runs (AVX-512 as
x86-64-v4, AVX2 forced with x86-64-v3, the portable loops with x86-64), each compiled by the
system C++ compiler as a compiled model's code is; and the driver compiled apart, as a
model's library holds it."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SUPPORT = REPO / "lib" / "Target" / "CPU" / "Support"
CHECK = pathlib.Path(__file__).resolve().parent / "data" / "gemm_kernel_check.cpp"


def cpu_flags() -> set[str]:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


PATHS = [("x86-64-v4", "avx512", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
         ("x86-64-v3", "avx2", {"avx2", "fma"}),
         ("x86-64", "portable", set())]


@pytest.mark.parametrize("march,isa,needs", PATHS, ids=[p[1] for p in PATHS])
def test_gemm_matches_the_reference(march, isa, needs, tmp_path):
    missing = needs - cpu_flags()
    if missing:
        pytest.skip(f"this machine lacks {sorted(missing)}")
    exe = tmp_path / f"check_{isa}"
    subprocess.run(["c++", "-std=c++17", "-O2", f"-march={march}", "-fopenmp", f"-I{SUPPORT}",
                    str(CHECK), "-o", str(exe)], check=True, capture_output=True, text=True)
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                            env={"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"{isa} ok"


def test_gemm_compiled_apart_matches_the_reference(tmp_path):
    # As a model's library runs it: the driver compiled once in thunder_cpu_gemm.cpp and
    # the check's epilogues passed through EpilogueRef (THUNDER_GEMM_APART), for the
    # machine's own instruction set.
    exe = tmp_path / "check_apart"
    subprocess.run(["c++", "-std=c++17", "-O2", "-march=native", "-fopenmp",
                    "-DTHUNDER_GEMM_APART=1", f"-I{SUPPORT}",
                    f"-I{REPO / 'lib' / 'Target' / 'Common' / 'Support'}",
                    str(CHECK), str(SUPPORT / "thunder_cpu_gemm.cpp"), "-o", str(exe),
                    "-ldnnl", "-lopenblas"], check=True, capture_output=True, text=True)
    symbols = subprocess.run(["nm", "-C", str(exe)], check=True, capture_output=True,
                             text=True).stdout
    assert "thunder_gemm::matmul_f32_apart" in symbols
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                            env={"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith(" ok")
