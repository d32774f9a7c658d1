"""Run a module on simulated CUDA so that device bugs show up on machines without a GPU.

The module's parameters, buffers and inputs move to the meta device, which stands in for the
GPU: shapes, dtypes and devices are real, values are not, and an op that mixes it with a CPU
tensor raises just as CUDA would. A tensor the learner's forward makes on the CPU (a mask from
torch.rand(x.shape), a statistic kept as a plain attribute instead of a buffer) is caught.
Where meta cannot run the code, FakeTensorMode's device="cuda" tensors get a second try (they
cost an import of torch._dynamo, which the meta device spares a grading). Code that
neither can run is run once more on the CPU: an error there (a shape that does not broadcast)
is the learner's, not a limit of the simulation, and is raised as the CPU raises it.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.func import functional_call

from norm_katas.runtime import torch_compat

_TORCH_DIR = str(Path(torch.__file__).parent) + os.sep  # not torchvision's


# The devices a simulated-CUDA output can be on: "meta" stands for the GPU, fake tensors say it.
SIMULATED = ("meta", "cuda")


class DeviceMismatch(Exception):
    """The module mixed devices: str() says which."""


class Inconclusive(Exception):
    """The simulation could not run this code; that says nothing about its correctness."""


def _raised_inside_torch(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_TORCH_DIR)


def _as_cuda(text: str) -> str:
    """A message about the meta device, told as the GPU it stands for."""
    return re.sub(r"\bmeta(:0)?\b", "cuda:0", text)


def _classify(e: Exception) -> Exception:
    first_line = str(e).splitlines()[0] if str(e) else ""
    if torch_compat.is_device_mismatch(e):
        return DeviceMismatch(_as_cuda(first_line))
    return Inconclusive(f"{type(e).__name__}: {first_line}")


# What torch says, from C++ (so from the learner's own line), when code reads a meta tensor's
# values: .tolist(), .cpu(), .numpy(), float(t). On a GPU each would copy the values back.
_NO_DATA = (
    "cannot copy out of meta tensor",
    "can't convert meta device type tensor",
    "cannot be called on meta tensors",
)
# What torch says, from C++ too, when an operator has no kernel for the meta device (torch 2.4
# lacks some that later releases have, such as _transformer_encoder_layer_fwd's): the
# simulation's limit, never the learner's.
_NO_META_KERNEL = (
    "no fake impl or meta kernel registered",
    "with arguments from the 'meta' backend",
)
# What torch says when `param.data = tensor` swaps a CPU tensor's data for a meta tensor's: on a
# GPU a CPU tensor takes a CUDA tensor's data (RepVGG's re-parameterization does just that), so
# this is the simulation's limit too.
_META_SET_DATA = ("have incompatible tensor type",)


def _simulation_failed(e: Exception) -> bool:
    """Not the learner's own error: torch could not run the code on the simulated device."""
    return (
        _raised_inside_torch(e)
        or torch_compat.is_device_mismatch(e)
        or torch_compat.needs_real_cuda(e)
        or any(text in str(e).lower() for text in (*_NO_DATA, *_NO_META_KERNEL, *_META_SET_DATA))
    )


def run(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    """Run module(*inputs) with every parameter, buffer and input on simulated CUDA.

    Returns the output, on a device in SIMULATED where it would be on CUDA (its shape and
    dtype are real, its values are not). Raises DeviceMismatch when the code mixes devices
    and Inconclusive when neither
    simulation can run it (data-dependent control flow, say) but the CPU can. Tensors the
    module keeps as plain attributes stay on the CPU, as they would with module.to("cuda"):
    using them with a CUDA input is a mismatch, which is the point. The learner's own
    exceptions propagate, those the CPU raises too.
    """
    try:
        return _run_on_meta(module, *inputs)
    except Inconclusive:
        pass
    try:
        return _run_on_fake_cuda(module, *inputs)
    except Inconclusive as e:
        inconclusive = e
    _on_the_cpu(lambda: copy.deepcopy(module)(*(x.clone() for x in inputs)))
    raise inconclusive


def _run_on_meta(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    clone = copy.deepcopy(module).to("meta")  # moves parameters and buffers, not plain attributes
    try:
        out = clone(*(x.to("meta") for x in inputs))
    except Exception as e:
        if not _simulation_failed(e):
            raise  # the learner's own error (an unfinished stub too): a real failure
        raise _classify(e) from None
    return out


def _run_on_fake_cuda(module: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    state = list(module.named_parameters()) + list(module.named_buffers())
    with torch_compat.fake_cuda_mode():
        fakes = {name: torch.empty(t.shape, dtype=t.dtype, device="cuda") for name, t in state}
        xs = tuple(torch.empty(x.shape, dtype=x.dtype, device="cuda") for x in inputs)
        try:
            return functional_call(module, fakes, xs)
        except Exception as e:
            if not _simulation_failed(e):
                raise
            raise _classify(e) from None


def call(fn: Callable[..., Any], *inputs: torch.Tensor) -> Any:
    """fn(*inputs) with every input on simulated CUDA (the meta device): for code that is not
    a module, such as an autograd Function's forward and backward called directly. Raises
    DeviceMismatch or Inconclusive like run(), and the CPU's error where it fails there too."""
    try:
        return fn(*(x.to("meta") for x in inputs))
    except Exception as e:
        if not _simulation_failed(e):
            raise
        classified = _classify(e)
    if isinstance(classified, Inconclusive):
        _on_the_cpu(lambda: fn(*(x.clone() for x in inputs)))
    raise classified


def build(fn: Callable[..., Any], *modules: nn.Module) -> Any:
    """fn(*modules) with deep copies of the modules on simulated CUDA (the meta device): for
    code that builds from modules rather than running them, such as a fold of a BatchNorm into
    a conv. The originals are left alone. Raises DeviceMismatch or Inconclusive like run(), and
    the CPU's error where it fails there too."""
    try:
        return fn(*(copy.deepcopy(m).to("meta") for m in modules))
    except Exception as e:
        if not _simulation_failed(e):
            raise
        classified = _classify(e)
    if isinstance(classified, Inconclusive):
        _on_the_cpu(lambda: fn(*(copy.deepcopy(m) for m in modules)))
    raise classified


def _on_the_cpu(run_it: Callable[[], Any]) -> None:
    """Run the code the simulation could not on the CPU, where an error is the learner's own:
    it propagates. The random stream is left as it was, for the rest of the check."""
    with torch.random.fork_rng(devices=[]):
        run_it()
