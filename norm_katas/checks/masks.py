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


def expect_scale_in_float64(out: object, x: torch.Tensor, p: float, *, given: str) -> None:
    """The kept elements of out, a float64 x dropped with probability p, are x / (1 - p) in
    float64: a scale rounded through float32 (a float32 mask divided by 1 - p, then multiplied
    into x) is off by parts in 1e8, which float32's tolerance lets through. Only a scale that
    is right to float32's precision is judged here: a wrong one is the scale check's mistake."""
    if not isinstance(out, torch.Tensor) or out.shape != x.shape or x.dtype != torch.float64:
        return  # another check's mistake
    got, xs = out.detach().cpu().double(), x.detach().cpu().double()
    kept = got != 0
    if not kept.any():
        return
    scales = got[kept] / xs[kept]
    want = 1 / (1 - p)
    off = ((scales - want).abs() / want).max().item()
    if 1e-12 < off < 1e-6:
        worst = scales[((scales - want).abs()).argmax()].item()
        fail(
            f"{given}: the kept elements are x · {worst:.17g}, where 1 / (1 - {p:g}) in float64 "
            f"is {want:.17g}: the scale was rounded through float32 (off by {off:.1e}), where "
            "the mask and its scale belong in x's dtype."
        )
