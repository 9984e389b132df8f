"""thunder_cpu_conv.h's convolutions with tensors channels last (the ConvLayout that the
CPU backend passes between oneDNN's convolutions, lib/Target/CPU/ChannelsLast.cpp)
against the same convolutions channels first, compiled by the system C++ compiler as a
model's driver is."""
from __future__ import annotations

import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
SUPPORT = REPO / "lib" / "Target" / "CPU" / "Support"
CHECK = pathlib.Path(__file__).resolve().parent / "data" / "conv_layout_check.cpp"


def test_channels_last_matches_channels_first(tmp_path):
    exe = tmp_path / "conv_layout_check"
    subprocess.run(["c++", "-std=c++17", "-O2", "-march=native", "-fopenmp", f"-I{SUPPORT}",
                    f"-I{REPO / 'lib' / 'Target' / 'Common' / 'Support'}", str(CHECK),
                    str(SUPPORT / "thunder_cpu_gemm.cpp"), "-o",
                    str(exe), "-ldnnl", "-lopenblas"], check=True, capture_output=True,
                   text=True)
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"
