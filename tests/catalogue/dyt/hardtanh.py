"""Mistake: F.hardtanh in place of tanh: the same slope at 0 and the same bounds of ±1, but the
curve is clipped at ±1 instead of squashed smoothly towards them, and its gradient is 0 beyond."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

EXPECT = "test_forward_matches_formula"
ALSO = "test_alpha_inside_tanh, test_affine_after_tanh, test_gradients_match"


class DyT(nn.Module):
    """weight · tanh(α · x) + bias, α one learnable scalar, weight and bias per channel."""

    def __init__(
        self, num_features: int, alpha_init_value: float = 0.5, channels_last: bool = True
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.alpha_init_value = alpha_init_value
        self.channels_last = channels_last
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.hardtanh(self.alpha * x)
        if self.channels_last:
            return x * self.weight + self.bias
        # (N, C, H, W): the channels are dim 1.
        return x * self.weight[:, None, None] + self.bias[:, None, None]

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, alpha_init_value={self.alpha_init_value}, "
            f"channels_last={self.channels_last}"
        )
