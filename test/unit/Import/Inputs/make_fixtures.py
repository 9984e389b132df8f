# Regenerates the .pt2 fixtures of the archive reader's tests and fuzz corpus (torch 2.13).
#
#   .venv/bin/python test/unit/Import/Inputs/make_fixtures.py
#
# writes test/unit/Import/Inputs/linear.pt2 (the GoogleTest fixture), copies it into
# test/fuzz/corpus/ with two more small archives that cover other dtypes, shared storages,
# views with a storage offset and zero-size tensors, and prints the values that
# test/unit/Import/Pt2ArchiveTest.cpp expects. Re-running changes only the random
# .data/serialization_id record, so the printed values stay valid.
import pathlib
import shutil

import torch

REPO = pathlib.Path(__file__).resolve().parents[4]
INPUTS = REPO / "test/unit/Import/Inputs"
CORPUS = REPO / "test/fuzz/corpus"


class LinearWithBuffers(torch.nn.Module):
    """The unit-test fixture: parameters, a persistent buffer (a weight with is_param false)
    and a non-persistent buffer (a constant)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([0.5, 2.0, -1.0]))
        self.register_buffer("shift", torch.arange(3, dtype=torch.int64), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale + self.shift


class MixedDtypes(torch.nn.Module):
    """Fuzz seed: bfloat16 and int8 storages, a buffer that views part of another buffer's
    storage (one record, two FQNs, a storage offset) and a zero-size buffer."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2, dtype=torch.bfloat16)
        base = torch.arange(6, dtype=torch.int8)
        self.register_buffer("base", base)
        self.register_buffer("tail", base[2:].view(2, 2))
        self.register_buffer("empty", torch.zeros(0, 3))

    def forward(self, x):
        return self.fc(x).float() + self.tail.float().sum() + self.base.float().sum()


class ConstantsOnly(torch.nn.Module):
    """Fuzz seed: no parameters, a lifted tensor constant and a float64 buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.ones(2, dtype=torch.float64), persistent=False)
        self.k = torch.tensor([3.0, 4.0])

    def forward(self, x):
        return x * self.k + self.bias


def export(module, example, path):
    ep = torch.export.export(module, (example,)).run_decompositions()
    torch.export.save(ep, str(path))
    return ep


def main():
    torch.manual_seed(0)
    linear = LinearWithBuffers()
    export(linear, torch.randn(2, 4), INPUTS / "linear.pt2")
    print("// expected values for Pt2ArchiveTest.cpp")
    for name, t in [("fc.weight", linear.fc.weight), ("fc.bias", linear.fc.bias),
                    ("scale", linear.scale), ("shift", linear.shift)]:
        vals = ", ".join(repr(v) + ("f" if t.dtype.is_floating_point else "")
                         for v in t.detach().flatten().tolist())
        print(f"// {name}: {t.dtype} {list(t.shape)}: {{{vals}}}")

    CORPUS.mkdir(parents=True, exist_ok=True)
    shutil.copy(INPUTS / "linear.pt2", CORPUS / "linear.pt2")
    export(MixedDtypes(), torch.randn(1, 2, dtype=torch.bfloat16), CORPUS / "mixed.pt2")
    export(ConstantsOnly(), torch.randn(2), CORPUS / "constants.pt2")


if __name__ == "__main__":
    main()
