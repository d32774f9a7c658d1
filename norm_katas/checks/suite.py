"""What the engine reads from a suite, declared: its `Suite` object, and the `PerfCase` that
--perf times. See docs/writing-a-kata.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class PerfCase:
    """What --perf times: your layer and torch's on the same input.

    mine and builtin each run one forward pass and return its output; `inputs` are the
    tensors whose gradients backward computes (they must require grad for backward to be
    timed). bytes_moved is the least a fused kernel must read and write in forward, for the
    bandwidth shown on a GPU.
    """

    given: str
    mine: Callable[[], Any]
    builtin: Callable[[], Any]
    builtin_name: str
    inputs: tuple[torch.Tensor, ...] = ()
    bytes_moved: int | None = None
    # Said under the figures instead of the usual causes of a gap (WHY_SLOWER), when the
    # kata has its own (a Triton kernel in the interpreter is slow for another reason).
    note: str | None = None
