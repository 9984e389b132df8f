"""Compiles the model zoo to generated sources, to check that a refactoring of the code
generators changes nothing it did not mean to.

    python tools/codegen_snapshot.py --out /tmp/before      # on the old tree
    python tools/codegen_snapshot.py --out /tmp/after       # on the new tree
    python tools/codegen_snapshot.py --compare /tmp/before /tmp/after

Every zoo model (small size) is compiled with `source_only` for each variant below: the
CPU target static and with a dynamic batch, fused and unfused, with external weights; the
CUDA target in fp32 (dynamic batch) and bf16 (static). `--compare` lists every file that
differs or exists on one side only and exits 1 if there is one; `--ignore-support`
leaves out the support headers that the backends copy verbatim (thunder_*.h, *.cuh), for
a step that edits them on purpose; `--replace /old/checkout /new/checkout` reads the
before side's checkout path as the after side's (the source-line comments name the files
of the checkout that compiled them).
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# name -> (target, dtype, dynamic batch, fuse, external weights)
VARIANTS = {
    "cpu": ("cpu", "float32", False, True, False),
    "cpu-dynamic": ("cpu", "float32", True, True, False),
    "cpu-unfused": ("cpu", "float32", False, False, False),
    "cpu-external": ("cpu", "float32", False, True, True),
    "cuda": ("cuda", "float32", True, True, False),
    "cuda-bf16": ("cuda", "bfloat16", False, True, False),
}


def snapshot(out: pathlib.Path, models: list[str], variants: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "test" / "python"))
    import torch

    import thunder
    from zoo import ZOO

    for name in models:
        for variant in variants:
            target, dtype, dynamic, fuse, external = VARIANTS[variant]
            model, inputs = ZOO[name].build(size="small", batch=2)
            if dtype != "float32":
                model = model.to(getattr(torch, dtype))
                inputs = tuple(i.to(getattr(torch, dtype)) if i.is_floating_point() else i
                               for i in inputs)
            shapes = ZOO[name].dynamic_batch(inputs) if dynamic else None
            program = thunder.export(model, inputs, dynamic_shapes=shapes)
            directory = out / f"{name}-{variant}"
            program.module.compile(str(directory), target=target, name=name, cpu="x86-64-v3",
                                   source_only=True, fuse=fuse, external_weights=external)
            print(f"{directory.name}: {sum(1 for _ in directory.rglob('*'))} files", flush=True)


def _files(root: pathlib.Path, ignore_support: bool) -> dict[str, pathlib.Path]:
    files = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if ignore_support and (path.name.startswith("thunder_") or path.suffix == ".cuh"):
            continue
        files[str(path.relative_to(root))] = path
    return files


def compare(before: pathlib.Path, after: pathlib.Path, ignore_support: bool,
            replace: list[tuple[str, str]]) -> int:
    a, b = _files(before, ignore_support), _files(after, ignore_support)
    problems = 0
    for rel in sorted(set(a) | set(b)):
        if rel not in b or rel not in a:
            print(f"only in {before if rel in a else after}: {rel}")
            problems += 1
            continue
        old, new = a[rel].read_bytes(), b[rel].read_bytes()
        for before_path, after_path in replace:
            old = old.replace(before_path.encode(), after_path.encode())
        if old == new:
            continue
        problems += 1
        print(f"differs: {rel} (sha256 {hashlib.sha256(old).hexdigest()[:12]} -> "
              f"{hashlib.sha256(new).hexdigest()[:12]})")
        try:
            diff = difflib.unified_diff(old.decode().splitlines(), new.decode().splitlines(),
                                        lineterm="", n=1)
            for i, line in enumerate(diff):
                if i >= 30:
                    print("    ...")
                    break
                print("    " + line)
        except UnicodeDecodeError:
            pass
    print(f"{len(a)} files before, {len(b)} after, {problems} differ")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, help="write the snapshot here")
    parser.add_argument("--models", default="mlp,resnet18,bert,gpt2,llama,vit")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--compare", nargs=2, type=pathlib.Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--replace", nargs=2, action="append", metavar=("OLD", "NEW"),
                        help="read OLD as NEW in the BEFORE files (a checkout's path in the "
                             "source-line comments); repeatable")
    parser.add_argument("--ignore-support", action="store_true",
                        help="leave out the support headers (thunder_*.h, *.cuh)")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, args.ignore_support, args.replace or [])
    if not args.out:
        parser.error("give --out DIR or --compare BEFORE AFTER")
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; they are: {', '.join(VARIANTS)}")
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} is not empty")
    snapshot(args.out, args.models.split(","), variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
