"""Mistake: creates the three dropouts but never calls them, so training never drops anything."""

import torch.nn.functional as F

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_dropout_active_in_train"


class TransformerEncoderBlock(Reference):
    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        # The attention's own dropout is off too: the weights are dropped by nothing.
        out = F.multi_head_attention_forward(
            x.transpose(0, 1),
            x.transpose(0, 1),
            x.transpose(0, 1),
            self.self_attn.embed_dim,
            self.self_attn.num_heads,
            self.self_attn.in_proj_weight,
            self.self_attn.in_proj_bias,
            None,
            None,
            False,
            0.0,
            self.self_attn.out_proj.weight,
            self.self_attn.out_proj.bias,
            training=False,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            attn_mask=attn_mask,
        )[0]
        return out.transpose(0, 1)

    def _ff_block(self, x):
        return self.linear2(F.relu(self.linear1(x)))


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""
