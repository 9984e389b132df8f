"""thunder.load_pt2 on good and bad archives: bad ones raise thunder.ImportError (a
ValueError) naming the file."""
from __future__ import annotations

import re
import zipfile

import pytest
import torch
from torch import nn

import thunder
from thunder import capture


@pytest.fixture(scope="module")
def linear_pt2(tmp_path_factory):
    torch.manual_seed(0)
    model = nn.Linear(8, 4).eval()
    ep = torch.export.export(model, (torch.randn(2, 8),))
    path = tmp_path_factory.mktemp("pt2") / "linear.pt2"
    torch.export.save(ep.run_decompositions(capture.decomposition_table()), path)
    return model, path


def test_load_pt2(linear_pt2):
    model, path = linear_pt2
    program = thunder.load_pt2(path)  # a pathlib.Path is fine
    assert program.verify()
    assert program.exported_program is None
    assert program.input_types == ["tensor<2x8xf32>"]
    # The archive holds the decomposed program: the same ops as exporting that one.
    decomposed = torch.export.export(model, (torch.randn(2, 8),)).run_decompositions(
        capture.decomposition_table())
    assert program.ops == thunder.export(decomposed).ops


def test_load_pt2_of_the_training_dialect(tmp_path):
    # torch.export.export's own output, saved as it is: the importer takes its
    # composites (aten.linear) and it runs like the model.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16)).eval()
    x = torch.randn(2, 8)
    ep = torch.export.export(model, (x,))
    assert ep.verifier.dialect == "TRAINING"
    torch.export.save(ep, tmp_path / "model.pt2")
    program = thunder.load_pt2(tmp_path / "model.pt2")
    assert program.verify()
    assert program.ops == thunder.export(model, (x,)).ops


def test_pt2_weights_point_into_the_archive(linear_pt2):
    # The archive is mapped, not copied: the weight's bytes are the file's, and they
    # stay readable as long as the program lives.
    model, path = linear_pt2
    program = thunder.load_pt2(str(path))
    address = program.module.weight_address("weight")
    assert address != model.weight.data_ptr()
    text = program.to_string(print_weights=True)
    assert model.weight.detach().numpy().tobytes().hex().upper() in text


def test_missing_file(tmp_path):
    path = tmp_path / "missing.pt2"
    with pytest.raises(thunder.ImportError, match=re.escape(str(path))) as info:
        thunder.load_pt2(path)
    assert isinstance(info.value, ValueError)
    assert "No such file" in str(info.value)


def test_not_a_zip(tmp_path):
    path = tmp_path / "text.pt2"
    path.write_text("this is not an archive\n")
    with pytest.raises(thunder.ImportError, match=re.escape(str(path))) as info:
        thunder.load_pt2(path)
    assert "zip" in str(info.value)


def test_zip_that_is_no_pt2(tmp_path):
    path = tmp_path / "other.pt2"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other/readme.txt", "hello")
    with pytest.raises(thunder.ImportError, match=re.escape(str(path))):
        thunder.load_pt2(path)


def test_directory(tmp_path):
    with pytest.raises(thunder.ImportError, match=re.escape(str(tmp_path))):
        thunder.load_pt2(tmp_path)
