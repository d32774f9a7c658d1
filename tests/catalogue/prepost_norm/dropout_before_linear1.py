"""Mistake: the feed-forward's inner dropout is on its input, not after the ReLU."""

import torch.nn.functional as F

from solutions import prepost_norm as reference
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_dropout_placement"


class TransformerEncoderBlock(Reference):
    def _ff_block(self, x):
        return self.dropout2(self.linear2(F.relu(self.linear1(self.dropout(x)))))


class PostNormResidual(reference.PostNormResidual):
    """Unchanged from the reference."""


class PreNormResidual(reference.PreNormResidual):
    """Unchanged from the reference."""
