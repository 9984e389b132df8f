"""Thunder's benchmark suite: the zoo's models against PyTorch eager, torch.compile,
AOTInductor, ONNX Runtime, OpenVINO and IREE, measured side by side (tools/bench/run.py).

    run.py         the driver: which cases, in which processes, then the report
    worker.py      one process per case (correctness, interleaved timing) and per
                   (case, contender) for compile time and peak memory
    contenders.py  how each contender compiles, loads and runs a model
    measure.py     timing statistics, the correctness check, resident memory
    report.py      results.json, results.md, the charts, docs/performance.md
    call_overhead.py  the call-overhead case: per-call µs of a tiny model
    profiling.py   where the time goes: eager's ops (torch.profiler) and Thunder's
                   kernels (perf on thunder-run)
"""

# The contenders by name, without importing torch: the orchestrator (run.py) and the report
# never load torch, so OpenMP's settings are still open when a process that runs models
# (worker.py, profiling) imports it. contenders.py implements each of these.
LABELS = {"eager": "eager", "torch.compile": "torch.compile", "aotinductor": "AOTInductor",
          "onnxruntime": "ONNX Runtime", "openvino": "OpenVINO", "iree": "IREE",
          "thunder": "Thunder",
          "thunder-rt": "Thunder C++ rt", "thunder-run": "thunder-run"}
#: thunder-run --bench on thunder-rt's library: a separate process, not interleaved.
THUNDER_RUN = "thunder-run"
ALL = list(LABELS)
