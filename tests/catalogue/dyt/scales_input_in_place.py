"""Mistake: scales x in place to save an allocation when no gradient is needed
(x.mul_(α) where x does not require grad): the output is right, but the caller's x now holds
α · x, a residual stream that is added back after the layer, say."""

from __future__ import annotations

import torch
from torch import nn

EXPECT = "test_input_unmodified"


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
        if x.requires_grad:
            x = torch.tanh(self.alpha * x)
        else:  # no gradient to x: scale it where it is (autograd still records α's part)
            x = torch.tanh(x.mul_(self.alpha))
        if self.channels_last:
            return x * self.weight + self.bias
        # (N, C, H, W): the channels are dim 1.
        return x * self.weight[:, None, None] + self.bias[:, None, None]

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, alpha_init_value={self.alpha_init_value}, "
            f"channels_last={self.channels_last}"
        )
