"""What the Triton suites share: the fixture that starts the engine, the views torch may make
outside the kernels, the notes on what each device can see, what --perf times, and the
machinery of their checks on strided rows.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from norm_katas.checks import TimedOut, fail
from norm_katas.checks.suite import DeviceNote
from norm_katas.checks.triton_engine.probe import HALF
from norm_katas.checks.triton_engine.startup import start


@pytest.fixture(scope="module", autouse=True)
def engine(device):
    """Triton, compiled on a GPU and interpreted elsewhere, proven before the learner's file loads.

    Autouse and module-scoped, so it runs before the `kata` fixture imports that file: a suite
    takes it in with `engine = triton_engine.engine`.
    """
    start(device)


# A suite's first check also sets the engine up: on a fresh GPU machine, Triton's first launches
# build its C launcher and utilities (seconds each), well past the usual 10 s per check.
first_check = pytest.mark.timeout(60)

# What torch may do outside the kernels, besides allocating: make views.
VIEWS = frozenset({
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand", "squeeze",
    "unsqueeze", "flatten", "unflatten", "transpose", "t", "permute", "select", "slice", "alias",
    "detach", "narrow", "view_as", "lift_fresh", "lift_fresh_copy", "_local_scalar_dense",
})  # fmt: skip
# What triton-rmsnorm and triton-layernorm allow besides VIEWS: split a tensor or move its
# dims, and fill one (zero_, fill_).
SPLITS_AND_FILLS = frozenset({"split", "split_with_sizes", "unbind", "movedim", "zero_", "fill_"})


def no_device_note(needs_gpu: str, kernels: str = "kernel", *, races: bool = False) -> str:
    """Said instead of the engine's own note where --device cuda finds no GPU: the kata's
    `kernels` ("kernel" or "kernels") run in the interpreter, watched (for races too, where
    `races`), and what `needs_gpu` ("the bandwidth report") waits for one."""
    run = "run" if kernels.endswith("s") else "runs"
    found = " and races are found" if races else ""
    return (
        f"No CUDA device here: the {kernels} {run} in Triton's interpreter on the CPU, where "
        f"every load and store is checked by address{found}; {needs_gpu} needs a GPU."
    )


def on_gpu(note: str) -> DeviceNote:
    """A device note (`Suite(device_note=...)`) said where the kernels are compiled, on a GPU:
    what grading there cannot see."""

    def device_note(device: torch.device) -> str | None:
        """What grading on this device cannot see, under the report's title."""
        return note if device.type == "cuda" else None

    return device_note


def weight_unseen(fenced: str) -> DeviceNote:
    """on_gpu's note for a kernel whose tensors are `fenced` ("x and the output"), all but the
    weight, which only the interpreter watches."""
    return on_gpu(
        f"Compiled on the GPU, the kernel's memory accesses cannot be watched: {fenced} are "
        "fenced, but a read past the end of the weight goes unseen. Grade on the CPU too "
        "(Triton's interpreter), where every load and store is checked by address."
    )


@dataclass(frozen=True)
class PerfSetting:
    """What --perf times a Triton kata on: rows of 4096 in bfloat16 on a GPU; on the CPU, where
    the interpreter's speed says nothing of the kernel's, a few small rows in float32."""

    shape: tuple[int, int]
    dtype: torch.dtype
    where: str  # said after the input: " (interpreted)" on the CPU
    note: str  # said under the figures


def perf_setting(device: torch.device, gpu_note: str, kernels: str = "kernel") -> PerfSetting:
    """The PerfSetting for this device: on a GPU with the kata's own `gpu_note`; on the CPU
    with a note that the interpreter's figures say nothing of the `kernels`' speed ("kernel"
    or "kernels")."""
    if device.type == "cuda":
        return PerfSetting((8192, 4096), torch.bfloat16, "", gpu_note)
    several = kernels.endswith("s")
    run, its = ("run", "their") if several else ("runs", "its")
    note = (
        f"On the CPU your {kernels} {run} in Triton's interpreter, one program at a time with "
        f"numpy: these figures say nothing about {its} speed on a GPU. Grade with "
        f"-- --device cuda on a machine with an NVIDIA GPU to time the compiled {kernels}."
    )
    return PerfSetting((16, 256), torch.float32, " (interpreted)", note)


def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float, *, exact: bool = False):
    """RMSNorm of x's rows: F.rms_norm for float32, where every supported torch agrees; for
    half dtypes (and wherever `exact`) the contract written out in float64, rounded to x's
    dtype unless `exact`."""
    if x.dtype not in HALF and not exact:
        return F.rms_norm(x, (x.shape[-1],), weight, eps)
    x64 = x.double()
    y = x64 * torch.rsqrt(x64.square().mean(-1, keepdim=True) + eps) * weight.double()
    return y if exact else y.to(x.dtype)


def passes(check: Callable[[], object]) -> bool:
    """Whether check() passes: a failure, a skip or an error is a no; a check whose time is up
    is no answer, and stops."""
    try:
        check()
    except TimedOut:  # the check's time is up: that is not an answer
        raise
    except (Exception, pytest.fail.Exception, pytest.skip.Exception):
        return False
    return True


@contextmanager
def blame_strides(
    advice: str, right_when_contiguous: Callable[..., bool], *args: object
) -> Iterator[None]:
    """A failure in the block, on an x whose rows lie further apart than N, said to be the
    strides' doing where the same values come out right in a contiguous x
    (right_when_contiguous(*args)), with how to read strided rows (`advice`)."""
    try:
        yield
    except pytest.fail.Exception as e:
        if not right_when_contiguous(*args):
            raise  # wrong whatever the strides: the message says how, the strides do not
        fail(
            f"{str(e).strip()} The same values in a contiguous x come out right. The gaps "
            f"between x's rows hold NaN here: {advice}"
        )
