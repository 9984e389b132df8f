"""Where a compiled model's resident memory lives, mapping by mapping (/proc/self/smaps),
above a baseline of the interpreter with every library the benchmark imports:

    .venv/bin/python tools/bench/memory_map.py compile MODEL [BATCH] [--no-export]
                                               [--drop-module]
        the zoo model built, torch.export'ed once (what the export leaves behind; not
        with --no-export), then thunder.compile'd from an empty cache and called 4 times:
        the growth after each phase; --drop-module compiles with keep_module=False and
        drops this script's reference to the model before the calls
    .venv/bin/python tools/bench/memory_map.py load LIBRARY_DIR INPUTS.npz
        a thunder-compile library loaded with thunder.load and called 4 times

Each phase prints its growth in MiB and the mappings that grew by more than 1 MiB
(a library's path, [heap], or [anon]); then the peak while serving, above the baseline.
The numbers behind docs/performance.md's serving-memory section (twelfth session).
"""
from __future__ import annotations

import collections
import importlib
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "test" / "python")]


def resident_by_mapping() -> collections.Counter:
    """Resident kB per mapping name ([anon] for anonymous mappings)."""
    sizes, name = collections.Counter(), None
    with open("/proc/self/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:
                name = " ".join(fields[5:]) if len(fields) > 5 else "[anon]"
            elif fields[0] == "Rss:":
                sizes[name] += int(fields[1])
    return sizes


def show(label: str, before: collections.Counter, after: collections.Counter) -> None:
    growth = collections.Counter(after)
    growth.subtract(before)
    print(f"{label}: {sum(growth.values()) / 1024:+.1f} MiB")
    for name, kb in growth.most_common():
        if kb > 1024:
            print(f"  {kb / 1024:+8.1f}  {name}")


def main() -> int:
    skip_export = "--no-export" in sys.argv
    drop_module = "--drop-module" in sys.argv
    sys.argv = [arg for arg in sys.argv if arg not in ("--no-export", "--drop-module")]
    if len(sys.argv) < 3 or sys.argv[1] not in ("compile", "load"):
        print(__doc__)
        return 2
    for library in ("onnxruntime", "thunder", "torch._dynamo", "torch._inductor",
                    "torch.onnx", "transformers"):
        try:
            importlib.import_module(library)
        except ImportError:
            pass
    import numpy as np
    import torch
    import thunder
    from bench import measure
    torch.set_num_threads(2)
    measure.release_freed_memory()
    base = resident_by_mapping()
    with torch.no_grad():
        if sys.argv[1] == "compile":
            from zoo import CONV_ZOO, ZOO
            batch = int(sys.argv[3]) if len(sys.argv) > 3 else 1
            model, inputs = {**ZOO, **CONV_ZOO}[sys.argv[2]].build("full", batch)
            measure.release_freed_memory()
            built = resident_by_mapping()
            show("model built", base, built)
            exported = built
            if not skip_export:
                torch.export.export(model, tuple(inputs))  # what it leaves behind, kept
                measure.release_freed_memory()
                exported = resident_by_mapping()
                show("after a first torch.export", built, exported)
            # From an empty cache: the compile itself, not a cached library's load.
            compiled = thunder.compile(model, tuple(inputs), progress=False,
                                       keep_module=not drop_module,
                                       cache_dir=tempfile.mkdtemp(prefix="memory-map-"))
            if drop_module:
                del model
            measure.release_freed_memory()
            before = resident_by_mapping()
            show("after thunder.compile", exported, before)
        else:
            inputs = [torch.from_numpy(v) for v in np.load(sys.argv[3]).values()]
            compiled = thunder.load(sys.argv[2])
            measure.release_freed_memory()
            before = resident_by_mapping()
            show("after thunder.load", base, before)
        measure.reset_peak_rss()
        for _ in range(4):
            compiled(*inputs)
        measure.release_freed_memory()
        show("after 4 calls", before, resident_by_mapping())
    print(f"peak while serving, above the baseline: "
          f"{measure.peak_rss_mb() - sum(base.values()) / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
