"""Mistake: the feed-forward's inner dropout is on its input, not after the ReLU."""

import torch.nn.functional as F

from solutions.prepost_norm import PostNormResidual, PreNormResidual  # noqa: F401
from solutions.prepost_norm import TransformerEncoderBlock as Reference

EXPECT = "test_dropout_placement"


class TransformerEncoderBlock(Reference):
    def _ff_block(self, x):
        return self.dropout2(self.linear2(F.relu(self.linear1(self.dropout(x)))))
