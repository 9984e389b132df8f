"""A model recompiled in place loads as the new model, while the old one stays usable.

dlopen matches an already-loaded library by path, so without care the second
load would return the first library's code.
"""
from __future__ import annotations

import subprocess

import torch

import thunder


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


class TimesTen(torch.nn.Module):
    def forward(self, x):
        return x * 10


def test_recompiled_library_at_the_same_path(thunder_compile, tmp_path):
    x = torch.tensor([1.0, 2.0])
    models = []
    for module in (AddOne(), TimesTen()):
        torch.export.save(torch.export.export(module, (x,)).run_decompositions(),
                          tmp_path / "m.pt2")
        subprocess.run([str(thunder_compile), str(tmp_path / "m.pt2"), "-o",
                        str(tmp_path / "out"), "--name", "m"], check=True,
                       capture_output=True)
        models.append(thunder.load(tmp_path / "out"))
    torch.testing.assert_close(models[1](x), x * 10)
    torch.testing.assert_close(models[0](x), x + 1)
