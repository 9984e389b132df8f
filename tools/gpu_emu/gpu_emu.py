"""Builds Thunder's generated GPU sources (CUDA or HIP flavour) for the CPU emulation and runs them.

    from gpu_emu import build, run
    exe = build(src_dir, "hip", work_dir)     # src_dir: compile(..., target="hip", source_only=True)
    outs, report = run(exe, [x], [np.float32], work_dir / "run")   # numpy arrays, one per output

The generated model.cu / model.hip and the support headers written next to it are copied to
`work_dir` with one rewrite, the launch syntax (`k<<<g, b, s, st>>>(args)` becomes
`::thunder_emu::Launch(g, b, s, st)(k, args)`, which host C++ can parse), and compiled as host
C++ with thunder_gpu_emu.h force-included in place of the vendor's prelude (see that header
for the emulated machine). Two settings break the emulated machine on purpose, for tests
that show they can fail, passed in `run`'s `env` (the caller's own THUNDER_EMU_* are not
passed on): THUNDER_EMU_WARP_SIZE, the warp width (else the flavour's: 32 for CUDA, 64 for
HIP), and THUNDER_EMU_BREAK_BARRIER=1, a __syncthreads that does not wait.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# A launch: the kernel (a name, with template arguments up to two levels deep), then <<<...>>>(.
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:<(?:[^<>]|<[^<>]*>)*>)?)\s*<<<(.*?)>>>\s*\(\s*(\)?)",
                     re.S)

def rewrite_launches(text: str) -> str:
    """The source with every `k<<<config>>>(args)` as `::thunder_emu::Launch(config)(k, args)`."""
    def repl(m: re.Match) -> str:
        kernel, config, close = m.group(1), m.group(2), m.group(3)
        return f"::thunder_emu::Launch({config})({kernel}" + (")" if close else ", ")
    return _LAUNCH.sub(repl, text)


def compiler() -> str:
    for cxx in (os.environ.get("THUNDER_EMU_CXX"), "clang++-19", "clang++-22", "clang++"):
        if cxx and shutil.which(cxx):
            return cxx
    raise RuntimeError("the GPU emulation needs clang++ (for _Float16 and __bf16 on the host)")


def prepare(src_dir, flavour: str, work_dir) -> pathlib.Path:
    """Copies the generated sources of `src_dir` into `work_dir` with their launches
    rewritten, and the prelude's parts the emulation compiles as they are; returns
    `work_dir`."""
    src_dir, work_dir = pathlib.Path(src_dir), pathlib.Path(work_dir)
    if flavour not in ("cuda", "hip"):
        raise ValueError(f"flavour {flavour!r}: cuda or hip")
    work_dir.mkdir(parents=True, exist_ok=True)
    for f in src_dir.iterdir():
        if f.is_dir():
            shutil.copytree(f, work_dir / f.name, dirs_exist_ok=True)
        elif f.suffix in (".h", ".cuh", ".cu", ".hip", ".cpp"):
            (work_dir / f.name).write_text(_rewritten(f))
        else:
            shutil.copy(f, work_dir / f.name)
    _copy_prelude(work_dir, flavour)
    return work_dir


def _rewritten(f: pathlib.Path) -> str:
    text = rewrite_launches(f.read_text())
    code = re.sub(r"//.*", "", text)
    if "<<<" in code:
        at = code.index("<<<")
        raise RuntimeError(f"{f.name}: a launch the emulation cannot rewrite: "
                           f"{code[max(0, at - 80):at + 80]}")
    return text


def _flags(work_dir: pathlib.Path, opt: str) -> list[str]:
    return ["-std=c++17", opt, "-g0", "-w", "-I", str(work_dir), "-I", str(HERE),
            "-I", str(ROOT / "include")]


#: LDS per workgroup of each HIP architecture (hipLdsBytes in lib/Target/HIP/HIPBackend.cpp).
HIP_LDS_BYTES = {"gfx90a": 64 * 1024, "gfx942": 64 * 1024, "gfx950": 160 * 1024}


def _emulated_flags(flavour: str, work_dir: pathlib.Path) -> list[str]:
    flags = ["-DTHUNDER_EMU_CUDA" if flavour == "cuda" else "-DTHUNDER_EMU_HIP",
             "-include", str(HERE / "thunder_gpu_emu.h")]
    # As the hip target's build: the LDS of the smallest among the library's architectures.
    model = work_dir / "model.hip"
    archs = re.search(r'kArchs = "([^"]*)"', model.read_text()) if model.exists() else None
    if flavour == "hip" and archs:
        lds = [HIP_LDS_BYTES[a] for a in archs.group(1).split(",") if a in HIP_LDS_BYTES]
        if lds:
            flags.append(f"-DTHUNDER_HIP_LDS_BYTES={min(lds)}")
    return flags


def build(src_dir, flavour: str, work_dir, opt: str = "-O1") -> pathlib.Path:
    """Compiles the generated sources in `src_dir` (flavour "cuda" or "hip") into an executable
    in `work_dir` that runs the model on the CPU; returns its path."""
    work_dir = prepare(src_dir, flavour, work_dir)
    main = {"cuda": "model.cu", "hip": "model.hip"}[flavour]
    model = work_dir / "model_emu.cpp"
    shutil.copy(work_dir / main, model)
    cxx, flags = compiler(), _flags(work_dir, opt)
    exe = work_dir / "emu"
    objs = []
    for source, extra in ((model, _emulated_flags(flavour, work_dir)),
                          (work_dir / "weights.cpp",
                           [f'-DTHUNDER_WEIGHTS_BIN="{work_dir / "weights.bin"}"']),
                          (HERE / "emu_main.cpp", [])):
        obj = work_dir / (source.stem + ".o")
        _run([cxx, *flags, *extra, "-c", str(source), "-o", str(obj)])
        objs.append(str(obj))
    _run([cxx, *objs, "-o", str(exe)])
    return exe


def build_program(source, headers_dir, flavour: str, work_dir, opt: str = "-O1") -> pathlib.Path:
    """Compiles a hand-written kernel program `source` (C++ with CUDA/HIP kernel syntax and a
    main) for the emulation, against the support headers of the generated directory
    `headers_dir`; returns the executable's path."""
    work_dir = prepare(headers_dir, flavour, work_dir)
    source = pathlib.Path(source)
    program = work_dir / (source.stem + "_emu.cpp")
    program.write_text(_rewritten(source))
    exe = work_dir / source.stem
    _run([compiler(), *_flags(work_dir, opt), *_emulated_flags(flavour, work_dir), str(program),
          "-o", str(exe)])
    return exe


def _copy_prelude(work_dir: pathlib.Path, flavour: str) -> None:
    """Writes the parts of the flavour's prelude the emulation compiles as they are: its
    dialect macros (thunder_emu_dialect.inc) and, for HIP, its wavefront shuffle over
    ds_bpermute (thunder_emu_lanes.inc)."""
    prelude = (work_dir / ("thunder_cuda.cuh" if flavour == "cuda" else "thunder_hip.h")).read_text()
    dialect = re.search(r"^// The dialect macros.*?(?=^#include)", prelude, re.S | re.M)
    if not dialect or "THUNDER_WARP_SIZE" not in dialect.group(0):
        raise RuntimeError(f"{flavour}: the prelude's dialect macros block was not found")
    (work_dir / "thunder_emu_dialect.inc").write_text(dialect.group(0))
    if flavour == "hip":
        lanes = re.search(r"^/// The lane's index.*?(?=^\} // namespace thunder_hip)", prelude,
                          re.S | re.M)
        if not lanes or "shfl_xor" not in lanes.group(0):
            raise RuntimeError("hip: the prelude's lane_id and shfl_xor were not found")
        (work_dir / "thunder_emu_lanes.inc").write_text(lanes.group(0))


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-6000:]}")


def run(exe, inputs, out_dtypes, work_dir, env=None, timeout=600):
    """Runs the emulated model on `inputs` (numpy arrays or CPU tensors, in the model's order);
    returns its outputs as numpy arrays of `out_dtypes` and the driver's report ("warp W
    launches L blocks B"). Raises RuntimeError when the run fails."""
    work_dir = pathlib.Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    shapes = []
    for i, x in enumerate(inputs):
        a = x.numpy() if hasattr(x, "numpy") else np.asarray(x)
        (work_dir / f"in{i}.bin").write_bytes(np.ascontiguousarray(a).tobytes())
        shapes.append(" ".join(str(d) for d in a.shape))
    (work_dir / "in_shapes.txt").write_text("".join(f"{s}\n" for s in shapes))
    full_env = dict(os.environ)
    for key in [k for k in full_env if k.startswith("THUNDER_EMU_")]:
        del full_env[key]
    full_env.update(env or {})
    r = subprocess.run([str(exe), str(work_dir)], capture_output=True, text=True, env=full_env,
                       timeout=timeout)
    if r.returncode:
        raise RuntimeError(f"emulated run failed ({r.returncode}):\n{r.stderr[-4000:]}")
    shapes = [[int(d) for d in line.split()]
              for line in (work_dir / "shapes.txt").read_text().splitlines()]
    if len(shapes) != len(out_dtypes):
        raise RuntimeError(f"the model has {len(shapes)} outputs, not {len(out_dtypes)}")
    outs = [np.fromfile(work_dir / f"out{i}.bin", dtype=dt).reshape(shape)
            for i, (dt, shape) in enumerate(zip(out_dtypes, shapes))]
    return outs, r.stdout
