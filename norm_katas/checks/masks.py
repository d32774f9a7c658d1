"""Layers that drop at random (Dropout, DropPath): what can be said of one draw of their mask."""

from __future__ import annotations

import torch

from norm_katas.runtime.outcomes import fail


def expect_keep_fraction(
    kept: torch.Tensor, p: float, *, given: str, what: str, digits: int
) -> None:
    """kept, one boolean per element (or sample) that could be dropped with probability p,
    keeps a fraction 1 - p of them within 6σ, σ = √(p(1 - p)/n): a wrong probability misses
    by far more, a right one by chance about once in 10⁹. Messages say the fraction of `what`
    ("elements") kept, as a percentage with `digits` decimals."""
    n = kept.numel()
    fraction = kept.double().mean().item()
    sigma = (p * (1 - p) / n) ** 0.5
    if abs(fraction - (1 - p)) > 6 * sigma:
        fail(
            f"{given}: {fraction:.{digits}%} of the {what} were kept, expected "
            f"{1 - p:.{digits}%} ± {6 * sigma:.{digits}%} (6σ)."
        )
