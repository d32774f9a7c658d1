"""Reference solution: (inverted) Dropout from scratch (drop-in for torch.nn.Dropout)."""

from __future__ import annotations

import torch
from torch import nn


class Dropout(nn.Module):
    """Zeroes each element with probability ``p`` in training and scales survivors by 1/(1-p)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x  # eval is the identity: the train-time scaling already matched E[output]
        # Scale at train time ("inverted" dropout) so E[output] = x and eval needs no rescale.
        # p == 1 keeps nothing: use scale 0 rather than 1/0, since 0 * inf would be NaN.
        scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
        # rand_like: fresh uniforms on x's device and dtype, one independent draw per element.
        mask = (torch.rand_like(x) >= self.p).to(x.dtype) * scale
        return x.mul_(mask) if self.inplace else x * mask

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
