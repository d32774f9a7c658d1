"""Mistake: a default all-False key padding mask is made on the CPU, whatever x's device."""

import torch

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_follows_device"
ALSO = "test_post_norm_block_matches_torch, test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def forward(self, x, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if src_key_padding_mask is None:
            src_key_padding_mask = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
        return super().forward(x, src_mask, src_key_padding_mask, is_causal)


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
