"""Mistake: the gain is a parameter named scale, so torch.nn.RMSNorm checkpoints do not load."""

import torch
from torch import nn

EXPECT = "test_parameters"
ALSO = "test_state_dict_round_trip, test_no_elementwise_affine"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.scale = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        return (y if self.scale is None else y * self.scale).to(x.dtype)
