"""Mistake: keeps a residual scale (DeepNorm's alpha, 1 at this depth) as a float32 tensor in a
plain attribute, which .to() does not move.

Its values pass (a 0-dim tensor takes the other operand's dtype), but after .to(float64) or
.to("cuda") the wrapper still holds a float32 tensor on the CPU that is not part of its state.
"""

import torch

from solutions import prepost_norm as reference

EXPECT = "test_to_dtype"


class PostNormResidual(reference.PostNormResidual):
    def __init__(self, d_model, sublayer):
        super().__init__(d_model, sublayer)
        self.alpha = torch.tensor(1.0)

    def forward(self, x):
        return self.norm(self.alpha * x + self.sublayer(x))


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
