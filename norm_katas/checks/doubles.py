"""Stand-ins for the modules a layer wraps: a check hands one to the learner's wrapper (a
residual unit, a block) to see what the wrapper does with it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from norm_katas.checks.comparisons import TOLERANCE


class ZeroSublayer(nn.Module):
    """A sublayer whose output is all zeros: what is left of the wrapper is its residual path."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(h)


class RecordingLinear(nn.Module):
    """A Linear sublayer that keeps the input it was last called with (`seen`)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.inner = nn.Linear(d, d)
        self.seen: torch.Tensor | None = None

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        self.seen = h.detach().clone()
        return self.inner(h)


class CountingLinear(nn.Module):
    """A Linear sublayer that counts how often it is called (`calls`)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.inner = nn.Linear(d, d)
        self.calls = 0

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.inner(h)


class FixedMask(nn.Module):
    """Stands in for nn.Dropout: drops a fixed, seeded half of the entries and doubles the rest.

    The same seed gives the same mask in the learner's module and in torch's, so the two agree
    in train mode only if every dropout sits where torch puts it.
    """

    def __init__(self, seed: int, p: float) -> None:
        super().__init__()
        self.seed, self.p = seed, p
        self.calls = 0  # how often the module was called: F.dropout calls none

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        keep = torch.rand(h.shape, generator=torch.Generator().manual_seed(self.seed)) >= 0.5
        return h * keep.to(h.device, h.dtype) * 2


def perturbed(module: nn.Module, scale: float = 0.2) -> nn.Module:
    """module with every parameter moved off its initial value (in place), so that a swapped or
    missing parameter shows in the output: LayerNorm starts at weight one and bias zero."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn_like(p))
    return module


def skip_unless_close(got: object, expected: torch.Tensor, what: str) -> None:
    """Skip a check whose premise fails: `what` already differs from torch's.

    The checks on forward report that; a gradient or dropout comparison on top would only
    repeat it with a misleading hint.
    """
    message = f"{what} differs from torch's already: fix the checks on forward first"
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        pytest.skip(message)
    rtol, atol = TOLERANCE[expected.dtype]
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    if got.dtype != expected.dtype or not torch.allclose(g, e, rtol=rtol, atol=atol):
        pytest.skip(message)
