"""Mistake: the wrappers keep their LayerNorm in `ln`, not in `norm` as the contract says."""

from torch import nn

from solutions import prepost_norm as reference

EXPECT = "test_residual_attributes"


class PreNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x):
        return x + self.sublayer(self.ln(x))


class PostNormResidual(nn.Module):
    def __init__(self, d_model, sublayer):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.sublayer = sublayer

    def forward(self, x):
        return self.ln(x + self.sublayer(x))


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    """Unchanged from the reference."""
