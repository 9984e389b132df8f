"""Weights go to the importer as views of the live tensors: not copied, kept alive as long
as the program, and checked for device and dtype."""
from __future__ import annotations

import gc
import re

import pytest
import torch
from torch import nn

import thunder


def resource_bytes(program, name: str) -> bytes:
    """The bytes of weight `name` as the IR prints them with print_weights=True (MLIR
    writes a blob as hex: 4 bytes of alignment, then the data)."""
    text = program.to_string(print_weights=True)
    match = re.search(rf'^\s*"?{re.escape(name)}"?: "0x([0-9A-F]+)"', text, re.MULTILINE)
    assert match, f"no resource {name} in the IR"
    return bytes.fromhex(match.group(1))[4:]


def test_linear_weight_is_not_copied():
    model = nn.Linear(512, 256).eval()
    program = thunder.export(model, (torch.randn(2, 512),))
    assert program.module.weight_address("weight") == model.weight.data_ptr()
    assert program.module.weight_address("bias") == model.bias.data_ptr()


def test_unknown_weight_name():
    program = thunder.export(nn.Linear(4, 4), (torch.randn(2, 4),))
    with pytest.raises(KeyError, match="no weight named 'nope'"):
        program.module.weight_address("nope")


def test_weights_outlive_the_model():
    torch.manual_seed(0)
    model = nn.Linear(16, 8).eval()
    expected = model.weight.detach().clone().numpy().tobytes()
    address = model.weight.data_ptr()
    program = thunder.export(model, (torch.randn(2, 16),))
    del model
    gc.collect()
    # The program keeps the tensor alive: same memory, same bytes.
    assert program.module.weight_address("weight") == address
    assert resource_bytes(program, "weight") == expected


def test_weights_follow_the_tensor():
    # A view, not a snapshot: what the importer reads is the tensor's memory.
    model = nn.Linear(4, 4).eval()
    program = thunder.export(model, (torch.randn(2, 4),))
    with torch.no_grad():
        model.weight.fill_(2.0)
    assert resource_bytes(program, "weight") == model.weight.detach().numpy().tobytes()


class TransposedBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(12, dtype=torch.float32).reshape(3, 4).t())

    def forward(self, x):
        return x + self.table


def test_non_contiguous_weight_is_copied_once():
    model = TransposedBuffer()
    assert not model.table.is_contiguous()
    program = thunder.export(model, (torch.randn(4, 3),))
    assert program.verify()
    assert program.module.weight_address("table") != model.table.data_ptr()
    assert resource_bytes(program, "table") == model.table.contiguous().numpy().tobytes()


@pytest.mark.parametrize("dtype", [
    torch.bool, torch.int8, torch.int32, torch.int64, torch.float8_e4m3fn,
    torch.float8_e5m2, torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_supported_weight_dtypes(dtype):
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.ones(4, 4).to(dtype))

        def forward(self, x):
            return x + self.b.to(torch.float32)

    model = WithBuffer()
    program = thunder.export(model, (torch.randn(4, 4),))
    assert program.verify()
    assert program.module.weight_address("b") == model.b.data_ptr()


class Complex(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("phase", torch.randn(4, dtype=torch.complex64))

    def forward(self, x):
        return x + self.phase.real


def test_complex_weight_is_a_clear_error():
    with pytest.raises(thunder.ImportError) as info:
        thunder.export(Complex(), (torch.randn(2, 4),))
    message = str(info.value)
    assert "'phase'" in message and "complex64" in message and "float32" in message


def test_non_cpu_weight_is_a_clear_error():
    # The meta device stands in for a GPU here: any device but the CPU is refused.
    model = nn.Linear(4, 3).to("meta")
    with pytest.raises(thunder.ImportError) as info:
        thunder.export(model, (torch.randn(2, 4, device="meta"),))
    message = str(info.value)
    assert "'weight'" in message and "meta" in message and "CPU" in message


def test_fake_weight_is_a_clear_error():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        ep = torch.export.export(nn.Linear(4, 3), (torch.randn(2, 4),))
    with pytest.raises(thunder.ImportError, match="'weight' is a fake tensor"):
        thunder.export(ep)
