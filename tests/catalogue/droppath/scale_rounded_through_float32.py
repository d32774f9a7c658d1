"""Mistake (torch parity): the mask and its scale built in float32 whatever x's dtype, then
multiplied into a float64 x: the kept samples are x times a float32 1 / (1 - p), off by parts
in 1e8."""

import torch

import solutions.droppath as reference

EXPECT = "test_computes_in_float64"


def drop_path(
    x: torch.Tensor, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True
) -> torch.Tensor:
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    keep = (torch.rand(shape, device=x.device) < keep_prob).float()
    if keep_prob > 0.0 and scale_by_keep:
        keep = keep / keep_prob
    return x * keep.to(x.dtype)


class DropPath(reference.DropPath):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
