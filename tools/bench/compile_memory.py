"""Peak memory of `thunder-compile` against the weights it compiles.

    python tools/bench/compile_memory.py [--model llama] [--size large]
        [--compiler build/bin/thunder-compile ...]

Exports a zoo model to a .pt2 once (cached under --work), then runs each given
thunder-compile on it with `--external-weights` (and once more embedding them), and
prints the peak resident memory (VmHWM) of the thunder-compile process itself (the
toolchain it runs is a child with its own memory) above the process baseline, the peak of the same
compiler on a model with no weights to speak of, as a multiple of the model's weight
bytes. Without --model, the zoo model with the most weight bytes at --size is used.
Several --compiler paths are measured side by side (an old build against a new one).
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))


def _export(name: str, size: str, path: pathlib.Path) -> int:
    """Writes the model to `path` (unless it is there) and returns its weight bytes."""
    import torch
    from zoo import ZOO

    model, inputs = ZOO[name].build(size=size, batch=1)
    weight_bytes = sum(t.numel() * t.element_size()
                       for t in {id(t): t for t in model.state_dict().values()}.values())
    if not path.exists():
        # The .pt2 the CLI takes: exported and decomposed to Core ATen, as
        # thunder.export does it.
        from thunder import capture
        ep = capture.decompose(torch.export.export(model, inputs))
        tmp = path.with_name(path.stem + ".partial.pt2")
        torch.export.save(ep, str(tmp))
        tmp.rename(path)
    return weight_bytes


def _largest(size: str) -> str:
    from zoo import ZOO

    def nbytes(name):
        model, _ = ZOO[name].build(size=size, batch=1)
        return sum(p.numel() * p.element_size() for p in model.parameters())
    return max(ZOO, key=nbytes)


def _peak_rss(argv: list[str]) -> tuple[int, float]:
    """Peak resident bytes of the process `argv` itself and its seconds: its VmHWM,
    polled until it exits (the toolchain it runs is a child with memory of its own,
    which wait4's maximum would include)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    status_file = pathlib.Path(f"/proc/{proc.pid}/status")
    peak = 0
    while proc.poll() is None:
        try:
            for line in status_file.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.01)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{stderr}")
    return peak, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--size", default="large")
    parser.add_argument("--compiler", action="append", default=None,
                        help="thunder-compile to measure (repeatable; default: the build's)")
    parser.add_argument("--work", type=pathlib.Path,
                        default=pathlib.Path(tempfile.gettempdir()) / "thunder-compile-memory")
    args = parser.parse_args()
    compilers = args.compiler or [str(ROOT / "build" / "bin" / "thunder-compile")]
    args.work.mkdir(parents=True, exist_ok=True)
    name = args.model or _largest(args.size)
    pt2 = args.work / f"{name}-{args.size}.pt2"
    weight_bytes = _export(name, args.size, pt2)
    tiny = args.work / "mlp-small.pt2"
    _export("mlp", "small", tiny)
    mib = 1 << 20
    print(f"{name} ({args.size}): {weight_bytes / mib:.1f} MiB of weights; "
          f"archive {pt2.stat().st_size / mib:.1f} MiB")
    print("| thunder-compile | weights | baseline MiB | peak MiB | above baseline | "
          "x weight bytes | seconds |")
    print("|---|---|---|---|---|---|---|")
    for compiler in compilers:
        for external in (True, False):
            out = args.work / "out"
            flags = ["--external-weights"] if external else []
            shutil.rmtree(out, ignore_errors=True)
            base, _ = _peak_rss([compiler, str(tiny), *flags, "-o", str(out)])
            shutil.rmtree(out, ignore_errors=True)
            peak, seconds = _peak_rss([compiler, str(pt2), *flags, "-o", str(out)])
            shutil.rmtree(out, ignore_errors=True)
            above = peak - base
            print(f"| {compiler} | {'external' if external else 'embedded'} | "
                  f"{base / mib:.0f} | {peak / mib:.0f} | {above / mib:.0f} | "
                  f"{above / weight_bytes:.2f} | {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
