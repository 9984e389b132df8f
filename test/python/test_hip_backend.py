"""The HIP backend on a machine without an AMD GPU or ROCm: every zoo model compiles and
links for HIP with clang alone; the library holds an offload bundle with a code object for
gfx90a, gfx942 and gfx950 whose ELF notes give the architecture, 64-lane wavefronts and
LDS within the architecture's limit; reductions use wave64 cross-lane operations; and
loading fails with a message that names what is missing.

The host side (registration of the bundle, kernels looked up by name, launches, the GEMM
libraries' loading) runs against a stand-in for libamdhip64 (data/fake_amdhip64.c) whose
kernel launches run nothing: the numerics need an AMD GPU (docs/hip.md).
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import torch

import thunder
from conftest import has_cuda_driver
from zoo import ZOO

ARCHS = ("gfx90a", "gfx942", "gfx950")
#: LDS a workgroup may use, per architecture (AMD's CDNA ISA guides).
LDS_BYTES = {"gfx90a": 64 * 1024, "gfx942": 64 * 1024, "gfx950": 160 * 1024}
HERE = pathlib.Path(__file__).resolve().parent


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/lib/llvm-22/bin")
    assert found, f"{name} not found: run tools/dev.sh setup (Debian's clang-22, llvm-22)"
    return found


def _run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def _compile(name: str, directory: pathlib.Path, *, dtype=torch.float32,
             arch: str = "") -> pathlib.Path:
    model, inputs = ZOO[name].build(size="small", batch=2)
    if dtype != torch.float32:
        model = model.to(dtype)
        inputs = tuple(i.to(dtype) if i.is_floating_point() else i for i in inputs)
    program = thunder.export(model, inputs)
    result = program.module.compile(str(directory), target="hip", name=name, arch=arch)
    return pathlib.Path(result["library"])


class _NoGemm(torch.nn.Module):
    """Norm, GELU, softmax and reductions: kernels only, no GEMM library."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(96)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.norm(x)) * 2.0
        return torch.softmax(y, dim=-1), y.sum(dim=-1), x.amax(dim=1)


def _compile_no_gemm(directory: pathlib.Path, arch: str = "",
                     target: str = "hip") -> pathlib.Path:
    program = thunder.export(_NoGemm().eval(), (torch.randn(3, 5, 96),))
    result = program.module.compile(str(directory), target=target, name="nogemm", arch=arch)
    return pathlib.Path(result["library"])


@pytest.fixture(scope="module")
def zoo_libraries(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every zoo model in fp32 for the three default architectures (~10 s each)."""
    root = tmp_path_factory.mktemp("hip-zoo")
    return {name: _compile(name, root / name) for name in sorted(ZOO)}


def _bundle(library: pathlib.Path, directory: pathlib.Path) -> pathlib.Path:
    """The library's offload bundle (clang's .hip_fatbin section)."""
    out = directory / (library.stem + ".hipfb")
    _run(_tool("llvm-objcopy-22"), f"--dump-section=.hip_fatbin={out}", str(library),
         str(directory / "unused.so"))
    return out


def _code_object(bundle: pathlib.Path, arch: str) -> pathlib.Path:
    out = bundle.with_suffix(f".{arch}.co")
    _run(_tool("clang-offload-bundler-22"), "--unbundle", "--type=o", f"--input={bundle}",
         f"--targets=hipv4-amdgcn-amd-amdhsa--{arch}", f"--output={out}")
    return out


def _entry(library: pathlib.Path):
    """The model's table, read without the runtime."""
    class Table(ctypes.Structure):
        _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32),
                    ("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                    ("device", ctypes.c_int32)]
    lib = ctypes.CDLL(str(library))
    lib.thunder_model_entry_v1.restype = ctypes.POINTER(Table)
    return lib.thunder_model_entry_v1().contents


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_compiles_and_links_for_hip(name, zoo_libraries):
    library = zoo_libraries[name]
    assert library.is_file()
    table = _entry(library)
    assert table.target == b"hip"
    assert table.device == 2  # THUNDER_DEVICE_HIP
    # Nothing of ROCm is needed to load it: libamdhip64 is opened when the model is created.
    needed = _run("readelf", "-d", str(library))
    assert not re.search(r"amdhip|hipblas|rocblas|MIOpen", needed), needed


@pytest.mark.parametrize("name", ["gpt2", "resnet18"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_zoo_model_compiles_for_hip_in_half_types(name, dtype, tmp_path):
    assert _compile(name, tmp_path, dtype=dtype, arch="gfx942").is_file()


@pytest.mark.parametrize("name", sorted(ZOO))
def test_bundle_holds_a_code_object_per_arch(name, zoo_libraries, tmp_path):
    bundle = _bundle(zoo_libraries[name], tmp_path)
    entries = _run(_tool("clang-offload-bundler-22"), "--list", "--type=o",
                   f"--input={bundle}").split()
    assert sorted(e for e in entries if not e.startswith("host-")) == [
        f"hipv4-amdgcn-amd-amdhsa--{arch}" for arch in ARCHS]


def _kernels(notes: str) -> list[dict[str, str]]:
    """Each kernel's metadata (name, wavefront size, LDS bytes, ...) from readelf --notes."""
    kernels, current = [], None
    for line in notes.splitlines():
        m = re.match(r"\s*-?\s*\.(\w+):\s*(.*)$", line)
        if not m:
            continue
        key, value = m.groups()
        if key == "args":
            current = {}
            kernels.append(current)
        elif current is not None and key in ("name", "wavefront_size", "group_segment_fixed_size",
                                             "max_flat_workgroup_size", "symbol"):
            current.setdefault(key, value.strip())
    return kernels


@pytest.mark.parametrize("name", sorted(ZOO))
def test_code_objects_are_wave64_within_lds(name, zoo_libraries, tmp_path):
    bundle = _bundle(zoo_libraries[name], tmp_path)
    for arch in ARCHS:
        notes = _run(_tool("llvm-readelf-22"), "--notes", str(_code_object(bundle, arch)))
        assert re.search(rf"amdhsa\.target:\s+amdgcn-amd-amdhsa--{arch}\b", notes), arch
        kernels = _kernels(notes)
        assert kernels, notes[:2000]
        for k in kernels:
            assert k["wavefront_size"] == "64", (arch, k)
            assert int(k["group_segment_fixed_size"]) <= LDS_BYTES[arch], (arch, k)
            assert int(k["max_flat_workgroup_size"]) <= 1024, (arch, k)


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "vit"])
def test_row_reductions_use_wave64_cross_lane_ops(name, zoo_libraries, tmp_path):
    """A wave64 butterfly is log2(64) = 6 ds_bpermute steps (a 32-lane one would be 5),
    the first reading lane ^ 32: byte address lane * 4 ^ 0x80."""
    bundle = _bundle(zoo_libraries[name], tmp_path)
    disassembly = _run(_tool("llvm-objdump-22"), "-d", "--mcpu=gfx942",
                       str(_code_object(bundle, "gfx942")))
    counts: dict[str, int] = {}
    half_wave: set[str] = set()
    kernel = None
    for line in disassembly.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            kernel = m.group(1)
            counts.setdefault(kernel, 0)
        elif kernel and "ds_bpermute_b32" in line:
            counts[kernel] += 1
        elif kernel and re.search(r"v_xor_b32\S*\s+v\d+, 0x80, v\d+", line):
            half_wave.add(kernel)
    reductions = {k: n for k, n in counts.items() if "reduction_" in k}
    assert reductions, sorted(counts)
    for k, n in reductions.items():
        assert n >= 6 and n % 6 == 0, (k, n)
        assert k in half_wave, k


def test_arch_option_selects_code_objects(tmp_path):
    library = _compile_no_gemm(tmp_path / "one", arch="gfx950")
    entries = _run(_tool("clang-offload-bundler-22"), "--list", "--type=o",
                   f"--input={_bundle(library, tmp_path)}").split()
    assert [e for e in entries if not e.startswith("host-")] == [
        "hipv4-amdgcn-amd-amdhsa--gfx950"]
    for bad in ("sm_90a", "gfx1100"):
        with pytest.raises(thunder.CompileError, match="gfx90a, gfx942 and gfx950"):
            _compile_no_gemm(tmp_path / "bad", arch=bad)


def _has_rocm() -> bool:
    try:
        ctypes.CDLL("libamdhip64.so")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_has_rocm(), reason="this machine has ROCm's HIP runtime")
def test_loading_without_rocm_names_the_runtime(zoo_libraries):
    with pytest.raises(thunder.RuntimeError, match=r"libamdhip64\.so not found"):
        thunder.load(str(zoo_libraries["mlp"]))


@pytest.mark.skipif(_has_rocm(), reason="this machine has ROCm's HIP runtime")
def test_thunder_compile_for_hip_builds_then_names_the_runtime(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()).eval()
    with pytest.raises(thunder.RuntimeError, match=r"compiled for HIP, .*libamdhip64\.so"):
        thunder.compile(model, (torch.randn(2, 8),), target="hip", arch="gfx942",
                        cache_dir=tmp_path, progress=False)


@pytest.fixture(scope="module")
def fake_hip(tmp_path_factory) -> pathlib.Path:
    """A folder holding the stand-in libamdhip64.so."""
    folder = tmp_path_factory.mktemp("fake-hip")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(folder / "libamdhip64.so"),
                    str(HERE / "data" / "fake_amdhip64.c")], check=True)
    return folder


_LOAD_AND_RUN = """
import sys, torch, thunder
model = thunder.load(sys.argv[1])
native = model.native
views = []
for d in native.inputs:
    x = torch.randn(d.shape)
    views.append((x.data_ptr(), d.dtype, d.shape))
    globals().setdefault("keep", []).append(x)
shapes = native.output_shapes(views)
outs = [torch.empty(s) for s in shapes]
native.run(views, [(o.data_ptr(), d.dtype, s) for o, d, s in zip(outs, native.outputs, shapes)],
           0)
print("ran")
"""


def _fake_environment(fake: pathlib.Path, log: pathlib.Path, **env: str) -> dict[str, str]:
    """The stand-in runtime on the loader's path, and this thunder (the build under test,
    not whatever the interpreter would find) on Python's."""
    package = str(pathlib.Path(thunder.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, LD_LIBRARY_PATH=str(fake), FAKE_HIP_LOG=str(log), PYTHONPATH=path,
                **env)


def _with_fake(fake: pathlib.Path, library: pathlib.Path, log: pathlib.Path, **env: str):
    environment = _fake_environment(fake, log, **env)
    return subprocess.run([sys.executable, "-c", _LOAD_AND_RUN, str(library)],
                          capture_output=True, text=True, env=environment)


def test_loading_without_an_amd_gpu_fails_clearly(fake_hip, zoo_libraries, tmp_path):
    run = _with_fake(fake_hip, zoo_libraries["mlp"], tmp_path / "log", FAKE_HIP_DEVICES="0")
    assert run.returncode != 0
    assert "compiled for HIP, but this machine has no AMD GPU" in run.stderr, run.stderr


def test_loading_on_a_device_without_code_fails_clearly(fake_hip, zoo_libraries, tmp_path):
    run = _with_fake(fake_hip, zoo_libraries["mlp"], tmp_path / "log", FAKE_HIP_NO_BINARY="1")
    assert run.returncode != 0
    assert ("holds GPU code for gfx90a,gfx942,gfx950, which cannot run on device 0 "
            "(Fake AMD GPU)") in run.stderr, run.stderr


def test_loading_without_gemm_libraries_names_them(fake_hip, zoo_libraries, tmp_path):
    log = tmp_path / "log"
    run = _with_fake(fake_hip, zoo_libraries["mlp"], log)
    assert run.returncode != 0
    assert ("GEMMs need hipBLASLt: libhipblaslt.so not found and librocblas.so not found"
            in run.stderr), run.stderr
    # The bundle was loaded and the probe kernel found in it before that.
    assert "function _ZN12_GLOBAL__N_113thunder_probeEv" in log.read_text()


def test_loading_without_miopen_names_it(fake_hip, tmp_path):
    """A convolution with the same padding on both sides goes through MIOpen."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU()).eval()
    program = thunder.export(model, (torch.randn(1, 3, 16, 16),))
    result = program.module.compile(str(tmp_path / "conv"), target="hip", name="conv",
                                    arch="gfx942")
    run = _with_fake(fake_hip, pathlib.Path(result["library"]), tmp_path / "log")
    assert run.returncode != 0
    assert "convolutions need MIOpen: libMIOpen.so not found" in run.stderr, run.stderr


def test_host_program_launches_kernels_of_the_bundle(fake_hip, tmp_path):
    """Create and run through the stand-in runtime: the bundle clang embedded is loaded,
    every kernel launched is looked up by its device name and found among the code
    objects' symbols, with blocks of whole wavefronts."""
    library = _compile_no_gemm(tmp_path / "nogemm", arch="gfx942")
    log = tmp_path / "log"
    run = _with_fake(fake_hip, library, log)
    assert run.returncode == 0 and "ran" in run.stdout, run.stderr
    lines = log.read_text().splitlines()
    assert lines[0].startswith("load 2 ")  # the gfx942 code object and the host entry
    assert not [l for l in lines if l.startswith(("missing", "load not-a-bundle"))], lines
    launches = [l.split() for l in lines if l.startswith("launch ")]
    kernels = {l[1] for l in launches}
    assert any("reduction_" in k for k in kernels), kernels
    for _, kernel, grid, block, smem in launches:
        assert 0 < int(grid) and 0 < int(block) <= 1024, (kernel, grid, block)
        assert int(block) % 64 == 0, (kernel, block)
        assert int(smem) <= LDS_BYTES["gfx942"], (kernel, smem)


#===--------------------------------------------------------------------------===#
# Attention at real head dims: the tile of keys is sized from the LDS
#===--------------------------------------------------------------------------===#

def test_llama_with_head_dim_128_compiles_for_hip(tmp_path):
    """Llama-class heads (128) were refused when the attention kernel kept a wavefront's 64
    keys in LDS; now every code object of the three architectures holds the attention
    kernels within its LDS."""
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=128, hidden_size=256, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, intermediate_size=256,
                      max_position_embeddings=64, attn_implementation="sdpa", use_cache=False)
    assert cfg.hidden_size // cfg.num_attention_heads == 128
    model = LlamaForCausalLM(cfg).eval()
    program = thunder.export(model, (torch.randint(0, 128, (1, 8)),))
    result = program.module.compile(str(tmp_path / "llama"), target="hip", name="llama")
    bundle = _bundle(pathlib.Path(result["library"]), tmp_path)
    for arch in ARCHS:
        kernels = _kernels(_run(_tool("llvm-readelf-22"), "--notes",
                                str(_code_object(bundle, arch))))
        assert any("attention_kernel" in k["name"] for k in kernels), arch
        for k in kernels:
            assert k["wavefront_size"] == "64", (arch, k)
            assert int(k["group_segment_fixed_size"]) <= LDS_BYTES[arch], (arch, k)


class _Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("head,dtype,tile", [
    (64, torch.float32, 64), (128, torch.float32, 32), (256, torch.float32, 16),
    (128, torch.float16, 32), (256, torch.bfloat16, 16), (128, torch.float64, 16),
    (256, torch.float64, 8)])
def test_attention_tile_fits_the_lds(fake_hip, tmp_path, head, dtype, tile):
    """The kernel's dynamic LDS (keys, values, the rows' queries and probabilities) is
    chosen at launch: the largest tile of keys (64, 32, 16, 8; a key scored by 64 / tile
    lanes) that fits gfx942's 64 KiB, f64 included. Launched through the stand-in runtime,
    which logs each launch's kernel and LDS bytes."""
    qkv = tuple(torch.randn(1, 2, 5, head, dtype=dtype) for _ in range(3))
    program = thunder.export(_Attention().eval(), qkv)
    result = program.module.compile(str(tmp_path / "attn"), target="hip", name="attn",
                                    arch="gfx942")
    log = tmp_path / "log"
    run = _with_fake(fake_hip, pathlib.Path(result["library"]), log)
    assert run.returncode == 0 and "ran" in run.stdout, run.stderr
    launches = [l.split() for l in log.read_text().splitlines()
                if l.startswith("launch ") and "attention_kernel" in l]
    assert len(launches) == 1, launches
    _, kernel, grid, block, smem = launches[0]
    epl = max(1, head // 64)
    assert kernel.endswith(f"Li{epl}ELi{tile}EEEvPKT_S3_S3_PS1_lliidbNS_8MaskInfoEl"), kernel
    assert int(block) == 256, kernel
    element = 8 if dtype == torch.float64 else 4
    assert int(smem) == (tile * (head + 1) + tile * head + 4 * head + 4 * tile) * element
    assert int(smem) <= LDS_BYTES["gfx942"], (kernel, smem)


def test_attention_beyond_head_dim_256_is_refused_at_compile_time(tmp_path):
    qkv = tuple(torch.randn(1, 2, 5, 320) for _ in range(3))
    program = thunder.export(_Attention().eval(), qkv)
    with pytest.raises(thunder.CompileError, match="attention kernel takes head dims up to "
                                                   "256, got 320"):
        program.module.compile(str(tmp_path / "attn"), target="hip", name="attn",
                               arch="gfx942")


def test_attention_splits_keys_across_lanes_with_shuffles(fake_hip, tmp_path):
    """With a tile of 16 keys each key's dot product is summed over 4 lanes: the kernel
    has cross-lane reads (ds_bpermute) beyond the tile's max and sum butterflies."""
    qkv = tuple(torch.randn(1, 2, 5, 256) for _ in range(3))
    program = thunder.export(_Attention().eval(), qkv)
    result = program.module.compile(str(tmp_path / "attn"), target="hip", name="attn",
                                    arch="gfx942")
    bundle = _bundle(pathlib.Path(result["library"]), tmp_path)
    disassembly = _run(_tool("llvm-objdump-22"), "-d", "--mcpu=gfx942",
                       str(_code_object(bundle, "gfx942")))
    counts: dict[str, int] = {}
    kernel = None
    for line in disassembly.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            kernel = m.group(1)
            counts.setdefault(kernel, 0)
        elif kernel and "ds_bpermute_b32" in line:
            counts[kernel] += 1
    whole = [n for k, n in counts.items() if k.endswith("Li64EEEvPKT_S3_S3_PS1_lliidbNS_8MaskInfoEl")]
    split = [n for k, n in counts.items() if k.endswith("Li16EEEvPKT_S3_S3_PS1_lliidbNS_8MaskInfoEl")]
    assert whole and split, sorted(counts)
    # Max and sum: 6 steps each; the split tile adds log2(64 / 16) = 2 per key's dot.
    assert min(whole) >= 12 and min(split) >= min(whole) + 2, counts


#===--------------------------------------------------------------------------===#
# --target=cuda,hip: one library for NVIDIA and AMD GPUs
#===--------------------------------------------------------------------------===#

@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_compiles_for_cuda_and_hip(name, tmp_path):
    model, inputs = ZOO[name].build(size="small", batch=2)
    program = thunder.export(model, inputs)
    result = program.module.compile(str(tmp_path), target="cuda,hip", name=name,
                                    arch="sm_90a,gfx942")
    library = pathlib.Path(result["library"])
    sections = _run("objdump", "-h", str(library))
    assert ".nv_fatbin" in sections and ".hip_fatbin" in sections
    exported = _run("nm", "-D", "--defined-only", str(library))
    for entry in ("thunder_model_entry_v1", "thunder_model_entry_v1_cuda",
                  "thunder_model_entry_v1_hip"):
        assert re.search(rf" T {entry}$", exported, re.M), entry
    needed = _run("readelf", "-d", str(library))
    assert not re.search(r"amdhip|hipblas|rocblas|MIOpen|cudart|cublas|cudnn", needed), needed
    # Tools that read the table alone see the CUDA part.
    assert _entry(library).target == b"cuda"


def test_cuda_and_hip_arch_list_needs_both_vendors(tmp_path):
    for bad in ("gfx942", "sm_90a", "sm_90a,gfx1100"):
        with pytest.raises(thunder.CompileError, match="at least one of each"):
            _compile_no_gemm(tmp_path / "bad", arch=bad, target="cuda,hip")


@pytest.fixture(scope="module")
def multi_vendor_library(tmp_path_factory) -> pathlib.Path:
    return _compile_no_gemm(tmp_path_factory.mktemp("cuda-hip"), arch="sm_90a,gfx942",
                            target="cuda,hip")


@pytest.mark.skipif(has_cuda_driver() or _has_rocm(), reason="this machine has a GPU driver")
def test_cuda_and_hip_library_without_a_gpu_names_both(multi_vendor_library):
    with pytest.raises(thunder.RuntimeError) as error:
        thunder.load(str(multi_vendor_library))
    message = str(error.value)
    assert "holds code for NVIDIA (CUDA) and AMD (HIP) GPUs, but neither can run here" in message
    assert "libcuda.so.1" in message and "libamdhip64.so" in message


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_cuda_and_hip_library_runs_its_hip_part_on_amd(fake_hip, multi_vendor_library,
                                                       tmp_path):
    """No CUDA driver, an AMD runtime and device (the stand-in): the runtime picks the HIP
    part, whose kernels come from the HIP bundle."""
    log = tmp_path / "log"
    script = _LOAD_AND_RUN.replace(
        'print("ran")', 'print("ran on", native.device, "|", model.device_description, "|", '
        'model.device_arch, "|", repr(model))')
    environment = _fake_environment(fake_hip, log)
    run = subprocess.run([sys.executable, "-c", script, str(multi_vendor_library)],
                         capture_output=True, text=True, env=environment)
    assert run.returncode == 0 and "ran on hip" in run.stdout, run.stderr
    # The device and architecture it runs on: hipDeviceGetName, and gcnArchName from the
    # device properties (the arch without its target features).
    description = "HIP device 0: Fake AMD GPU (gfx942:sramecc+:xnack-)"
    assert f"| {description} | gfx942 |" in run.stdout, run.stdout
    assert run.stdout.rstrip().endswith(f", on {description}>"), run.stdout
    lines = log.read_text().splitlines()
    assert any(l.startswith("launch ") for l in lines)
    assert not [l for l in lines if l.startswith("missing")], lines


@pytest.mark.skipif(has_cuda_driver(), reason="this machine has a CUDA driver")
def test_thunder_run_names_the_device_it_chose(fake_hip, multi_vendor_library, build_dir,
                                               tmp_path):
    """thunder-run's header says which vendor's device and architecture the multi-vendor
    library runs on (then refuses: it runs CPU models only so far)."""
    environment = _fake_environment(fake_hip, tmp_path / "log", FAKE_HIP_ARCH="gfx90a:xnack-")
    run = subprocess.run([str(build_dir / "bin" / "thunder-run"), str(multi_vendor_library)],
                         capture_output=True, text=True, env=environment)
    assert "model nogemm (target hip, device hip; runtime " in run.stdout, run.stdout
    assert "\n  runs on HIP device 0: Fake AMD GPU (gfx90a:xnack-)\n" in run.stdout, run.stdout
