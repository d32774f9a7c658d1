"""Correct, written differently: torch.bernoulli for the draw, torch.where to keep or zero."""

import torch
from torch import nn

EXPECT = "pass"


def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
    if not training or drop_prob == 0:
        return x
    keep = 1.0 - drop_prob
    probs = torch.full((x.shape[0],), keep, dtype=torch.float32, device=x.device)
    kept = torch.bernoulli(probs).bool().view(-1, *([1] * (x.dim() - 1)))
    scaled = x / keep if (scale_by_keep and keep > 0) else x
    return torch.where(kept, scaled, torch.zeros_like(x))


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep

    def forward(self, x):
        return drop_path(
            x, self.drop_prob, training=self.training, scale_by_keep=self.scale_by_keep
        )
