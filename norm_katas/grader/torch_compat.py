"""The one place that touches torch's private APIs, adapted to the installed release.

norm-katas supports torch >= MIN_TORCH. Fake tensors and dispatch modes are private and change
between releases (a device mismatch is FakeTensorDeviceMismatchError in some, a plain
RuntimeError in others; dispatch modes wrap themselves for torch._dynamo in newer ones), so the
rest of the grader asks this module instead of importing them itself.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# 2.4 is the first release with nn.RMSNorm / F.rms_norm, which the RMSNorm kata is graded against.
MIN_TORCH = (2, 4)


def version() -> tuple[int, int]:
    """(major, minor) of the installed torch; (0, 0) if its version string is unreadable."""
    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def unsupported() -> str | None:
    """The learner-facing reason this torch cannot be used, or None if it can."""
    if version() >= MIN_TORCH:
        return None
    need = ".".join(map(str, MIN_TORCH))
    return (
        f"norm-katas needs torch >= {need}; this environment has {torch.__version__}; "
        "see 'Choosing the torch build' in docs/grading.md."
    )


class DispatchMode(TorchDispatchMode):
    """A TorchDispatchMode that does not pull in torch._dynamo.

    Newer releases wrap every subclass's __torch_dispatch__ in torch._disable_dynamo, whose
    first call imports torch._dynamo (1.2-1.5 s). Grading never compiles, so opt out; releases
    without the hook ignore the override.
    """

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False


def fake_cuda_mode() -> TorchDispatchMode:
    """A FakeTensorMode in which device="cuda" tensors exist without a GPU."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


# What releases say when an op mixes devices: FakeTensorDeviceMismatchError where it exists,
# else a RuntimeError from fake-tensor device propagation or from the op itself.
_MISMATCH = (
    "found two different devices",
    "expected all tensors to be on the same device",
    "is not on the expected device",
    "unhandled faketensor device propagation",
)
# What a build says when simulated CUDA reaches real CUDA code: a CPU-only build ("not linked
# with support for cuda"), a CUDA build on a machine without a GPU ("Found no NVIDIA driver").
_NO_CUDA = (
    "not linked with support for cuda",
    "found no nvidia driver",
    "no cuda gpus are available",
    "cuda driver initialization failed",
    "torch not compiled with cuda enabled",
)


def is_device_mismatch(error: BaseException) -> bool:
    from torch._subclasses import fake_tensor

    mismatch = getattr(fake_tensor, "FakeTensorDeviceMismatchError", None)
    if mismatch is not None and isinstance(error, mismatch):
        return True
    text = str(error).lower()
    if any(pattern in text for pattern in _MISMATCH):
        return True
    return "same device" in text and "cuda" in text and "cpu" in text


def needs_real_cuda(error: BaseException) -> bool:
    """Simulated CUDA reached code that needs a real GPU: says nothing about the learner's code."""
    text = str(error).lower()
    return any(pattern in text for pattern in _NO_CUDA)


class _DeferredDynamo(types.ModuleType):
    """Stands in for torch._dynamo in a one-shot grading until something needs more than
    `disable`.

    torch's reference implementations (the meta and fake devices of the device check run them)
    are wrapped in torch._disable_dynamo, whose first call imports torch._dynamo (1.2-1.5 s)
    only to ask it for `disable(fn)`: a wrapper that matters while torch.compile traces, which
    grading never does. This answers `disable` with fn itself; anything else loads the real
    module and hands over to it.
    """

    def disable(self, fn: Any = None, recursive: bool = True, **kwargs: Any) -> Any:
        return fn if fn is not None else (lambda f: f)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__path__":
            raise AttributeError(name)
        return getattr(_load_real_dynamo(), name)


def _load_real_dynamo() -> types.ModuleType:
    if isinstance(sys.modules.get("torch._dynamo"), _DeferredDynamo):
        del sys.modules["torch._dynamo"]
    real = importlib.import_module("torch._dynamo")
    torch._dynamo = real  # type: ignore[attr-defined]
    return real


def defer_dynamo() -> None:
    """Install the stand-in, unless torch._dynamo is loaded already."""
    if "torch._dynamo" not in sys.modules:
        stand_in = _DeferredDynamo("torch._dynamo")
        sys.modules["torch._dynamo"] = stand_in
        torch._dynamo = stand_in  # type: ignore[attr-defined]
