"""Run a module on simulated CUDA so that device bugs show up on machines without a GPU.

FakeTensorMode creates device="cuda" tensors even on a CPU-only build and raises on any
op that mixes devices. Moving a real module with .to("cuda") fails there, so fake
parameters and buffers are created directly and the module runs through functional_call.
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from torch import nn
from torch.func import functional_call

from grader import torch_compat


class DeviceMismatch(Exception):
    """The module mixed devices: str() says which."""


class Inconclusive(Exception):
    """The simulation could not run this code; that says nothing about its correctness."""


_is_mismatch = torch_compat.is_device_mismatch
# Without a GPU some ops (indexing, .contiguous(), in-place random fills) reach real CUDA code
# even on fake tensors; this says nothing about the learner's code.
_is_unsupported = torch_compat.needs_real_cuda


def _raised_inside_torch(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_TORCH_DIR)


_TORCH_DIR = str(Path(torch.__file__).parent)


def _classify(e: Exception) -> Exception:
    if _is_mismatch(e):
        return DeviceMismatch(str(e).splitlines()[0])
    first_line = str(e).splitlines()[0] if str(e) else ""
    return Inconclusive(f"{type(e).__name__}: {first_line}")


def run(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    """Run module(*inputs) with every parameter, buffer and input on simulated CUDA.

    Returns a fake output (its device, shape and dtype are real; its values are not).
    Raises DeviceMismatch when the code mixes devices and Inconclusive when the
    simulation cannot run it (data-dependent control flow, in-place random fills).
    Tensors the module keeps as plain attributes stay on the CPU, as they would with
    module.to("cuda"): using them with a CUDA input is a mismatch, which is the point.
    Code that fake CUDA cannot run on a CPU-only build is retried on the meta device,
    which checks device placement the same way without any kernel.
    """
    state = list(module.named_parameters()) + list(module.named_buffers())
    with torch_compat.fake_cuda_mode():
        fakes = {name: torch.empty(t.shape, dtype=t.dtype, device="cuda") for name, t in state}
        xs = tuple(torch.empty(x.shape, dtype=x.dtype, device="cuda") for x in inputs)
        try:
            return functional_call(module, fakes, xs)
        except Exception as e:
            if _is_unsupported(e):
                pass  # retried on meta below, outside the fake mode
            elif not _raised_inside_torch(e) and not _is_mismatch(e):
                raise  # the learner's own error (an unfinished stub too): a real failure
            else:
                raise _classify(e) from None
    return _run_on_meta(module, *inputs)


def _run_on_meta(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    clone = copy.deepcopy(module).to("meta")  # moves parameters and buffers, not plain attributes
    try:
        out = clone(*(x.to("meta") for x in inputs))
    except Exception as e:
        if not _raised_inside_torch(e) and not _is_mismatch(e) and not _is_unsupported(e):
            raise
        raise _classify(e) from None
    # Report the device the output would have had on CUDA.
    if isinstance(out, torch.Tensor) and out.device.type == "meta":
        with torch_compat.fake_cuda_mode():
            return torch.empty(out.shape, dtype=out.dtype, device="cuda")
    return out
