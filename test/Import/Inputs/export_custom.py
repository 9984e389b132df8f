"""Exports a graph with a torch.library custom op to a .pt2 archive, for the
custom_call lit test: python export_custom.py <out.pt2>."""
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


@torch.library.custom_op("mylib::scale_rows", mutates_args=())
def scale_rows(x: torch.Tensor, w: torch.Tensor, alpha: float, flag: bool) -> torch.Tensor:
    return x * w * alpha


@scale_rows.register_fake
def _(x, w, alpha, flag):
    return torch.empty_like(x)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(8))

    def forward(self, x):
        return torch.relu(scale_rows(x + 1, self.w, 0.5, True))


if __name__ == "__main__":
    ep = torch.export.export(Model().eval(), (torch.randn(2, 8),))
    torch.export.save(ep.run_decompositions(), sys.argv[1])
