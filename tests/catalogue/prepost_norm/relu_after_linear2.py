"""Mistake: the ReLU comes after linear2 instead of between linear1 and linear2."""

import torch.nn.functional as F

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_post_norm_block_matches_torch"
ALSO = "test_pre_norm_block_matches_torch"


class TransformerEncoderBlock(Reference):
    def _ff_block(self, x):
        return self.dropout2(F.relu(self.linear2(self.dropout(self.linear1(x)))))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
