"""Reference solution: DropPath (stochastic depth), with the semantics of timm.layers.DropPath."""

from __future__ import annotations

import torch
from torch import nn


def drop_path(
    x: torch.Tensor, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True
) -> torch.Tensor:
    """Drops whole samples (dim 0) of a residual branch with probability ``drop_prob``."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    # One draw per sample, broadcast over the rest: the whole branch survives or vanishes.
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    keep = (torch.rand(shape, device=x.device) < keep_prob).to(x.dtype)
    if keep_prob > 0.0 and scale_by_keep:  # keep_prob = 0 keeps nothing: no 1/0
        keep = keep / keep_prob
    return x * keep


class DropPath(nn.Module):
    """Stochastic depth per sample, for the residual branch it wraps (Huang et al., 2016)."""

    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True) -> None:
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self) -> str:
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"
