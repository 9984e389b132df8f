"""Thunder's runtime through its C API (include/thunder-c/runtime.h) with ctypes: what
the GPU check uses where the thunder package (built for another Python) cannot be
imported. Tensors are torch tensors; a CUDA model runs on the current CUDA stream.
"""
from __future__ import annotations

import ctypes
import os

import torch

#: thunder_dtype codes (thunder-c/artifact.h).
DTYPES = {torch.bool: 0, torch.int8: 1, torch.int32: 2, torch.int64: 3,
          torch.float16: 6, torch.bfloat16: 7, torch.float32: 8, torch.float64: 9}
TORCH_DTYPES = {code: dtype for dtype, code in DTYPES.items()}


class ThunderError(RuntimeError):
    """A runtime call failed: .status is the runtime's status name."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64))]


class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("dim_min", ctypes.POINTER(ctypes.c_int64)),
                ("dim_max", ctypes.POINTER(ctypes.c_int64)),
                ("dim_symbols", ctypes.POINTER(ctypes.c_char_p))]


class Runtime:
    """libThunderRuntime.so, loaded from `path`."""

    def __init__(self, path: str):
        lib = ctypes.CDLL(os.path.abspath(path))
        lib.thunder_last_error.restype = ctypes.c_char_p
        lib.thunder_status_name.restype = ctypes.c_char_p
        lib.thunder_status_name.argtypes = [ctypes.c_int32]
        lib.thunder_model_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.thunder_model_free.argtypes = [ctypes.c_void_p]
        lib.thunder_model_num_inputs.argtypes = [ctypes.c_void_p]
        lib.thunder_model_num_outputs.argtypes = [ctypes.c_void_p]
        lib.thunder_model_output.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.thunder_model_output.restype = ctypes.POINTER(TensorDesc)
        lib.thunder_model_device.argtypes = [ctypes.c_void_p]
        lib.thunder_device_name.argtypes = [ctypes.c_int32]
        lib.thunder_device_name.restype = ctypes.c_char_p
        lib.thunder_model_device_description.argtypes = [ctypes.c_void_p]
        lib.thunder_model_device_description.restype = ctypes.c_char_p
        lib.thunder_model_device_arch.argtypes = [ctypes.c_void_p]
        lib.thunder_model_device_arch.restype = ctypes.c_char_p
        lib.thunder_model_output_shapes.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_int32,
            ctypes.POINTER(ctypes.POINTER(ctypes.c_int64))]
        lib.thunder_context_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.thunder_context_free.argtypes = [ctypes.c_void_p]
        lib.thunder_context_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor),
                                            ctypes.c_int32, ctypes.POINTER(Tensor),
                                            ctypes.c_int32, ctypes.c_void_p]
        self.lib = lib

    def check(self, status: int) -> None:
        if status != 0:
            raise ThunderError(self.lib.thunder_status_name(status).decode(),
                               self.lib.thunder_last_error().decode())


def _tensors(tensors) -> tuple[ctypes.Array, list]:
    """A thunder_tensor array over torch tensors, and what must stay alive with it."""
    array = (Tensor * max(1, len(tensors)))()
    keep = []
    for i, t in enumerate(tensors):
        shape = (ctypes.c_int64 * max(1, t.dim()))(*t.shape)
        keep.append(shape)
        array[i] = Tensor(t.data_ptr(), DTYPES[t.dtype], t.dim(), shape)
    return array, keep


class Model:
    """A compiled model: call(*tensors) -> list of output tensors; bind() prepares a call on
    fixed tensors (for timing) and returns a function that runs it again."""

    def __init__(self, runtime: Runtime, path: str):
        self.rt = runtime
        self.handle = ctypes.c_void_p()
        runtime.check(runtime.lib.thunder_model_load(os.path.abspath(path).encode(),
                                                     ctypes.byref(self.handle)))
        self.context = ctypes.c_void_p()
        runtime.check(runtime.lib.thunder_context_create(self.handle, ctypes.byref(self.context)))
        self.num_inputs = runtime.lib.thunder_model_num_inputs(self.handle)
        self.num_outputs = runtime.lib.thunder_model_num_outputs(self.handle)
        device = runtime.lib.thunder_model_device(self.handle)
        #: The runtime's device: "cpu", "cuda" or "hip" (for a cuda,hip library, the
        #: vendor the runtime chose), and what it found at load: the device and its
        #: architecture ("CUDA device 0: NVIDIA H200 (sm_90)"), the architecture alone.
        self.vendor = runtime.lib.thunder_device_name(device).decode()
        self.device_description = runtime.lib.thunder_model_device_description(
            self.handle).decode()
        self.device_arch = runtime.lib.thunder_model_device_arch(self.handle).decode()
        # torch's device type (PyTorch's ROCm builds call AMD GPUs "cuda" too).
        self.device = "cpu" if self.vendor == "cpu" else "cuda"

    def close(self) -> None:
        if self.context:
            self.rt.lib.thunder_context_free(self.context)
            self.context = ctypes.c_void_p()
        if self.handle:
            self.rt.lib.thunder_model_free(self.handle)
            self.handle = ctypes.c_void_p()

    def output_shapes(self, inputs) -> list[list[int]]:
        array, keep = _tensors(inputs)
        shapes, pointers = [], (ctypes.POINTER(ctypes.c_int64) * max(1, self.num_outputs))()
        for k in range(self.num_outputs):
            rank = self.rt.lib.thunder_model_output(self.handle, k).contents.rank
            buffer = (ctypes.c_int64 * max(1, rank))()
            shapes.append((buffer, rank))
            pointers[k] = ctypes.cast(buffer, ctypes.POINTER(ctypes.c_int64))
        self.rt.check(self.rt.lib.thunder_model_output_shapes(self.handle, array, len(inputs),
                                                              pointers))
        return [list(buffer[:rank]) for buffer, rank in shapes]

    def bind(self, inputs, outputs=None):
        """(run, outputs): run() enqueues the model on the current stream."""
        device = inputs[0].device if inputs else torch.device(self.device)
        if outputs is None:
            outputs = []
            for k, shape in enumerate(self.output_shapes(inputs)):
                dtype = TORCH_DTYPES[self.rt.lib.thunder_model_output(self.handle, k).contents.dtype]
                outputs.append(torch.empty(shape, dtype=dtype, device=device))
        ins, keep_in = _tensors(inputs)
        outs, keep_out = _tensors(outputs)
        lib, context, n_in, n_out = self.rt.lib, self.context, len(inputs), len(outputs)
        check = self.rt.check

        def run():
            stream = torch.cuda.current_stream().cuda_stream if device.type == "cuda" else 0
            check(lib.thunder_context_run(context, ins, n_in, outs, n_out, stream))
        run.keep = (inputs, outputs, ins, outs, keep_in, keep_out)
        return run, outputs

    def __call__(self, *inputs):
        run, outputs = self.bind(list(inputs))
        run()
        return outputs
