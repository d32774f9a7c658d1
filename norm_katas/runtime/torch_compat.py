"""The one place that touches torch's private APIs, adapted to the installed release.

norm-katas supports torch >= MIN_TORCH. Fake tensors and dispatch modes are private and change
between releases (a device mismatch is FakeTensorDeviceMismatchError in some, a plain
RuntimeError in others; dispatch modes wrap themselves for torch._dynamo in newer ones), so the
rest of the grader asks this module instead of importing them itself.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.util
import re
import sys
import types
from pathlib import Path
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


def set_deterministic(mode: bool, *, warn_only: bool) -> None:
    """torch.use_deterministic_algorithms(mode, warn_only=warn_only), for eager torch alone.

    Newer releases also set torch._inductor.config.deterministic there, importing inductor's
    config, and with it torch._dynamo and sympy: a second of every one-shot grading, for a flag
    that only torch.compile reads. Left out, so that a grading behaves the same whether or not
    its process has imported inductor; releases without the private setter take the public one.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


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
    "cuda driver version is insufficient",  # a CUDA build of torch on a machine without a GPU
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


class _DisableOnly(types.ModuleType):
    """What `import torch._dynamo` gives torch._disable_dynamo's wrapper in a one-shot grading.

    torch's reference implementations (the meta device of the device check runs them) are
    wrapped in torch._disable_dynamo, whose first call of each imports torch._dynamo (a second
    and more, with sympy) only to ask it for `disable(fn)`: a wrapper that matters while
    torch.compile traces. This answers `disable` with fn itself as long as the real module is
    not loaded (and with the real disable(fn) from then on), and leaves at once (sys.modules
    and torch no longer hold it), so that any other import of torch._dynamo, or of a module of
    it, loads the real one, as without it.
    """

    def disable(self, fn: Any = None, recursive: bool = True, **kwargs: Any) -> Any:
        self._leave()
        if fn is None:
            return lambda f: f
        disabled: list[Any] = []  # the real disable(fn), once torch._dynamo is loaded

        @functools.wraps(fn)
        def until_dynamo_loads(*args: Any, **kw: Any) -> Any:
            # torch._disable_dynamo keeps what this returns for good: from the moment the
            # real module is loaded (by torch.compile, say), fn runs disabled, as it would.
            dynamo = sys.modules.get("torch._dynamo")
            if dynamo is None or isinstance(dynamo, _DisableOnly):
                return fn(*args, **kw)
            if not disabled:
                disabled.append(dynamo.disable(fn, recursive, **kwargs))
            return disabled[0](*args, **kw)

        return until_dynamo_loads

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._leave()
        return getattr(importlib.import_module("torch._dynamo"), name)

    def _leave(self) -> None:
        if sys.modules.get("torch._dynamo") is self:
            del sys.modules["torch._dynamo"]
        if torch.__dict__.get("_dynamo") is self:
            del torch._dynamo  # torch's module __getattr__ imports the real one on use


class _DisableOnlyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import torch._dynamo` with a _DisableOnly where torch._disable_dynamo's wrapper
    asks, as long as the real module is not loaded; every other import goes on as usual."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch._dynamo" or not _imported_by_disable_wrapper():
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: Any) -> types.ModuleType:
        return _DisableOnly(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _imported_by_disable_wrapper() -> bool:
    """Whether the import under way is the one in torch._compile's wrapper (the first frame
    outside the import system)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    if frame is None:
        return False
    code = frame.f_code
    return code.co_name == "inner" and Path(code.co_filename).parts[-2:] == ("torch", "_compile.py")


_FINDER = _DisableOnlyFinder()


def defer_dynamo() -> None:
    """For every grading process: torch._disable_dynamo's wrappers stop importing torch._dynamo
    (see _DisableOnly). Code that needs the real one (FakeTensorMode, torch.compile) imports it
    as it would have."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
