"""One loaded model runs from several threads at once, with the right numbers.

Each run gets its own workspace from the runtime and the GIL is released while
it runs, so the threads really overlap. Every result is compared exactly with
the result of the same input run alone, so a shared buffer or a data race
shows as a mismatch.
"""
from __future__ import annotations

import concurrent.futures
import subprocess

import torch

import thunder
from zoo import ZOO


def test_concurrent_runs_of_one_model(thunder_compile, tmp_path):
    zoo = ZOO["gpt2"]
    model, inputs = zoo.build(size="small", batch=2)
    ep = torch.export.export(model, inputs, dynamic_shapes=zoo.dynamic_batch(inputs))
    table = torch.export.default_decompositions()
    table.pop(torch.ops.aten.scaled_dot_product_attention.default, None)
    torch.export.save(ep.run_decompositions(table), tmp_path / "gpt2.pt2")
    subprocess.run([str(thunder_compile), str(tmp_path / "gpt2.pt2"), "-o",
                    str(tmp_path / "out")], check=True, capture_output=True)
    compiled = thunder.load(tmp_path / "out")

    # Inputs of different batch sizes, and each one's result when run alone.
    cases = [zoo.build(size="small", batch=1 + i % 4, seed=i)[1][0] for i in range(8)]
    alone = [compiled(ids).clone() for ids in cases]
    with torch.no_grad():
        torch.testing.assert_close(alone[0], model(cases[0]).logits, rtol=1e-4, atol=1e-4)

    def worker(thread: int) -> int:
        mismatches = 0
        for step in range(40):
            k = (thread + step) % len(cases)
            if not torch.equal(compiled(cases[k]), alone[k]):
                mismatches += 1
        return mismatches

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        mismatches = list(pool.map(worker, range(8)))
    assert mismatches == [0] * 8
