"""fairseq's Fp32LayerNorm for every norm: the interview answer, with its dtype policy.

fairseq (and diffusers' FP32LayerNorm) subclass nn.LayerNorm to normalize ``input.float()``
with ``weight.float()`` and ``bias.float()``, then cast back with ``.type_as(input)``: right
under mixed precision, but a float64 block is rounded to float32 at every norm, where torch's
layer computes in float64. Which dtype a layer computes in is torch parity: the wiring is
right, and the interview core passes.
"""

import torch.nn.functional as F
from torch import nn

from solutions import prepost_norm as reference

EXPECT = "test_computes_in_float64"


class Fp32LayerNorm(nn.LayerNorm):
    def forward(self, input):
        output = F.layer_norm(
            input.float(),
            self.normalized_shape,
            self.weight.float() if self.weight is not None else None,
            self.bias.float() if self.bias is not None else None,
            self.eps,
        )
        return output.type_as(input)


class PreNormResidual(reference.PreNormResidual):
    def __init__(self, d_model, sublayer):
        super().__init__(d_model, sublayer)
        self.norm = Fp32LayerNorm(d_model)


class PostNormResidual(reference.PostNormResidual):
    def __init__(self, d_model, sublayer):
        super().__init__(d_model, sublayer)
        self.norm = Fp32LayerNorm(d_model)


class TransformerEncoderBlock(reference.TransformerEncoderBlock):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.norm1 = Fp32LayerNorm(d_model)
        self.norm2 = Fp32LayerNorm(d_model)
