"""Mistake (torch parity): the mean square is taken of x.float() (as Hugging Face's T5LayerNorm
does), while x itself stays float64: the output moves with every nudge of x, yet is rounded
through float32's mean square, off by parts in 1e8."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_computes_in_float64"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        variance = x.float().square().mean(dims, keepdim=True)
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        y = x * torch.rsqrt(variance + eps).to(x.dtype)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
