"""Mistake: registers a causal mask as a (persistent) buffer the block never needed.

Its state_dict then has a key nn.TransformerEncoderLayer's does not have, so checkpoints no
longer load either way.
"""

import torch

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_state_dict_round_trip"
ALSO = "test_post_norm_block_matches_torch, test_pre_norm_block_matches_torch, test_gradients_match"


class TransformerEncoderBlock(Reference):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, norm_first=False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, norm_first)
        self.register_buffer("causal_mask", torch.triu(torch.ones(64, 64, dtype=torch.bool), 1))


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""
