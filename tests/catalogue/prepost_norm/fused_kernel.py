"""Mistake: calls torch's fused kernel torch._transformer_encoder_layer_fwd in eval mode."""

import torch

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_from_scratch"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if self.training or src_mask is not None or src_key_padding_mask is not None:
            return super().forward(x, src_mask, src_key_padding_mask, is_causal)
        a = self.self_attn
        return torch._transformer_encoder_layer_fwd(
            x,
            a.embed_dim,
            a.num_heads,
            a.in_proj_weight,
            a.in_proj_bias,
            a.out_proj.weight,
            a.out_proj.bias,
            False,
            self.norm_first,
            self.norm1.eps,
            self.norm1.weight,
            self.norm1.bias,
            self.norm2.weight,
            self.norm2.bias,
            self.linear1.weight,
            self.linear1.bias,
            self.linear2.weight,
            self.linear2.bias,
            None,
            None,
        )


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
