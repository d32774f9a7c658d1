"""Mistake: keeps eps in a buffer, so its state_dict has a key nn.LayerNorm's does not have."""

import torch

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_state_dict_round_trip"


class LayerNorm(Reference):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__(normalized_shape, eps, elementwise_affine, bias)
        self.register_buffer("eps_tensor", torch.tensor(eps))

    def forward(self, x):
        self.eps = float(self.eps_tensor)
        return super().forward(x)
