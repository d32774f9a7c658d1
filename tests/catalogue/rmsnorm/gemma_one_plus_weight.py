"""Mistake: Gemma's gain, x / rms · (1 + weight), with torch's weight of ones: every output is
doubled, and a state_dict of torch's (or of a trained model) is read as weight − 1."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_weight_scales_each_element"
ALSO = "test_forward_matches_torch, test_gradients_match"


class RMSNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(xf.dtype).eps if self.eps is None else self.eps
        y = xf * torch.rsqrt(xf.square().mean(dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * (1 + self.weight)  # the mistake: torch multiplies by the weight itself
        return y.to(x.dtype)
